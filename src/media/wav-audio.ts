/**
 * How long a WAV file (RIFF/WAVE) of uncompressed samples plays, read by the gateway from its bytes: every byte
 * after the data chunk's header, over the bytes a second that its format (`fmt `) implies. The data chunk's
 * size, the RIFF size, the format's stated byte rate and block size and a `fact` sample count are all claims a
 * file can shrink while its samples stay; none of them shortens the length read. Compressed formats, whose
 * length only those claims give, are not read.
 *
 * The walk over the chunks is linear: each step passes at least a chunk header.
 */

/** Format codes of samples whose size is their bit depth: integer PCM, IEEE float, A-law, µ-law. */
const uncompressedFormats = new Set([0x0001, 0x0003, 0x0006, 0x0007]);
/** WAVE_FORMAT_EXTENSIBLE: the format code is the first two bytes of the sub-format GUID that follows. */
const extensibleFormat = 0xfffe;
/** The last 14 bytes of every KSDATAFORMAT_SUBTYPE GUID made from a format code. */
const subtypeGuidTail = Buffer.from('000000001000800000aa00389b71', 'hex');

function fourCc(bytes: Uint8Array, at: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + at, 4).toString('latin1');
}

/** Bytes a second of the samples a `fmt ` chunk describes; undefined when they are compressed or make no sense. */
function bytesPerSecond(format: DataView): number | undefined {
  if (format.byteLength < 16) return undefined;
  let code = format.getUint16(0, true);
  const channels = format.getUint16(2, true);
  const sampleRate = format.getUint32(4, true);
  const bitsPerSample = format.getUint16(14, true);
  if (code === extensibleFormat) {
    if (format.byteLength < 40) return undefined;
    const guid = new Uint8Array(format.buffer, format.byteOffset + 24, 16);
    if (!subtypeGuidTail.equals(guid.subarray(2))) return undefined;
    code = format.getUint16(24, true);
  }
  if (!uncompressedFormats.has(code) || channels === 0 || sampleRate === 0 || bitsPerSample === 0) return undefined;
  // A sample takes whole bytes (12-bit samples take 2), whatever block size the chunk states.
  return sampleRate * channels * Math.ceil(bitsPerSample / 8);
}

/** Seconds of a WAV file of uncompressed samples; undefined when the bytes are not one, or have no data chunk. */
export function wavSeconds(bytes: Uint8Array): number | undefined {
  if (bytes.length < 12 || fourCc(bytes, 0) !== 'RIFF' || fourCc(bytes, 8) !== 'WAVE') return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let rate: number | undefined;
  let at = 12;
  while (bytes.length - at >= 8) {
    const id = fourCc(bytes, at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'data') {
      // The samples are every byte from here to the end of the file, whatever size the chunk states.
      return rate === undefined ? undefined : (bytes.length - body) / rate;
    }
    if (id === 'fmt ') {
      if (rate !== undefined) return undefined;
      rate = bytesPerSecond(new DataView(bytes.buffer, bytes.byteOffset + body, Math.min(size, bytes.length - body)));
      if (rate === undefined) return undefined;
    }
    // Chunks are padded to an even size.
    at = body + size + (size % 2);
  }
  return undefined;
}
