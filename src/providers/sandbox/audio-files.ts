import type { AudioFormat } from '../../domain/speech.ts';

/**
 * Small, valid, silent audio files of a given length, in each format the speech products make: what the
 * sandbox answers, so that players, the archive and the duration readers see real files.
 */

/**
 * One silent MPEG-1 Layer III frame (128 kbit/s, 44.1 kHz, mono): the header, then zeros, which decode as
 * silence. 1,152 samples, about 26 ms.
 */
const silentMp3Frame = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0xc0]), Buffer.alloc(413)]);
const mp3FrameMs = (1152 / 44_100) * 1000;

/** 16-bit little-endian mono samples of silence. */
function pcmSilence(ms: number, sampleRate: number): Buffer {
  return Buffer.alloc(2 * Math.ceil((sampleRate * ms) / 1000));
}

function wavFile(samples: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28); // bytes per second
  header.writeUInt16LE(2, 32); // bytes per sample frame
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]);
}

/** CRC-32 of Ogg pages: polynomial 0x04c11db7, not reflected, no final inversion. */
const oggCrcTable = Array.from({ length: 256 }, (_, index) => {
  let crc = index << 24;
  for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  return crc >>> 0;
});

function oggCrc(page: Buffer): number {
  let crc = 0;
  for (const byte of page) crc = ((crc << 8) ^ oggCrcTable[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  return crc;
}

/** One Ogg page holding whole packets (each under 255 bytes, so one lacing value apiece). */
function oggPage(
  packets: readonly Buffer[],
  options: { flags: number; granule: bigint; serial: number; sequence: number },
): Buffer {
  const header = Buffer.alloc(27 + packets.length);
  header.write('OggS', 0, 'latin1');
  header.writeUInt8(0, 4);
  header.writeUInt8(options.flags, 5);
  header.writeBigInt64LE(options.granule, 6);
  header.writeUInt32LE(options.serial, 14);
  header.writeUInt32LE(options.sequence, 18);
  header.writeUInt8(packets.length, 26);
  for (const [index, packet] of packets.entries()) header.writeUInt8(packet.length, 27 + index);
  const page = Buffer.concat([header, ...packets]);
  page.writeUInt32LE(oggCrc(page), 22);
  return page;
}

/** Opus decoders discard this many samples (48 kHz) at the start: the encoder's look-ahead. */
const opusPreSkip = 312;
/** A 20 ms CELT frame (TOC 0xf8: full band, mono, one frame) that decodes to silence. */
const silentOpusPacket = Buffer.from([0xf8, 0xff, 0xfe]);
const opusPacketSamples = 960;
const opusPacketsPerPage = 50;

/** Ogg Opus (RFC 7845): the identification and comment headers, then silent 20 ms packets, 50 to a page. */
function oggOpusFile(ms: number, sampleRate: number): Buffer {
  const serial = 0x5a17b0c5;
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head.writeUInt8(1, 8); // version
  head.writeUInt8(1, 9); // channels
  head.writeUInt16LE(opusPreSkip, 10);
  head.writeUInt32LE(sampleRate, 12); // the input's rate, for information; Opus itself runs at 48 kHz
  head.writeInt16LE(0, 16); // output gain
  head.writeUInt8(0, 18); // mapping family
  const vendor = Buffer.from('model-gateway sandbox', 'utf8');
  const tags = Buffer.alloc(8 + 4 + vendor.length + 4);
  tags.write('OpusTags', 0, 'latin1');
  tags.writeUInt32LE(vendor.length, 8);
  vendor.copy(tags, 12);
  tags.writeUInt32LE(0, 12 + vendor.length);
  const samples = Math.max(1, Math.round((ms * 48_000) / 1000));
  // Granule positions count every decoded sample, the pre-skip included.
  const packets = Math.ceil((samples + opusPreSkip) / opusPacketSamples);
  const pages = [
    oggPage([head], { flags: 0x02, granule: 0n, serial, sequence: 0 }),
    oggPage([tags], { flags: 0, granule: 0n, serial, sequence: 1 }),
  ];
  for (let first = 0; first < packets; first += opusPacketsPerPage) {
    const count = Math.min(opusPacketsPerPage, packets - first);
    const last = first + count >= packets;
    // The last page's granule is the exact length, so players trim the final packet's excess.
    const granule = BigInt(last ? opusPreSkip + samples : (first + count) * opusPacketSamples);
    pages.push(
      oggPage(
        Array.from({ length: count }, () => silentOpusPacket),
        { flags: last ? 0x04 : 0, granule, serial, sequence: pages.length },
      ),
    );
  }
  return Buffer.concat(pages);
}

/** `ms` of silence as a file of `format`; the MP3 is always 44.1 kHz, the other formats at `sampleRate`. */
export function silentAudio(format: AudioFormat, ms: number, sampleRate: number): Buffer {
  switch (format) {
    case 'mp3':
      return Buffer.concat(Array.from({ length: Math.max(1, Math.ceil(ms / mp3FrameMs)) }, () => silentMp3Frame));
    case 'pcm':
      return pcmSilence(ms, sampleRate);
    case 'wav':
      return wavFile(pcmSilence(ms, sampleRate), sampleRate);
    case 'ogg_opus':
      return oggOpusFile(ms, sampleRate);
  }
}
