/** Small media files built byte by byte, with the headers the gateway reads durations from. */

/**
 * A mono 8-bit PCM WAV of `seconds` at `rate` samples per second (a low rate keeps long files small). Its data
 * chunk's header says how many bytes follow: `dataBytesSaid`, when the file is to lie about it.
 */
export function wavFile(seconds: number, rate = 1_000, dataBytesSaid?: number): Buffer {
  const dataBytes = Math.round(rate * seconds);
  const file = Buffer.alloc(44 + dataBytes, 0x80);
  file.write('RIFF', 0, 'latin1');
  file.writeUInt32LE(36 + dataBytes, 4);
  file.write('WAVEfmt ', 8, 'latin1');
  file.writeUInt32LE(16, 16);
  file.writeUInt16LE(1, 20); // PCM
  file.writeUInt16LE(1, 22); // mono
  file.writeUInt32LE(rate, 24);
  file.writeUInt32LE(rate, 28); // bytes per second
  file.writeUInt16LE(1, 32); // block align
  file.writeUInt16LE(8, 34); // bits per sample
  file.write('data', 36, 'latin1');
  file.writeUInt32LE(dataBytesSaid ?? dataBytes, 40);
  return file;
}

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

/** A version-0 full box: a byte of version, three of flags, then the payload. */
function fullBox(type: string, flags: number, ...payload: Buffer[]): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(flags);
  return box(type, head, ...payload);
}

function u32(...values: number[]): Buffer {
  const buffer = Buffer.alloc(4 * values.length);
  for (const [index, value] of values.entries()) buffer.writeUInt32BE(value >>> 0, 4 * index);
  return buffer;
}

/** A movie header (version 0, time scale 1,000) that says the movie lasts `ms`. */
function movieHeader(ms: number): Buffer {
  return fullBox('mvhd', 0, u32(0, 0, 1_000, ms, 0x0001_0000), Buffer.alloc(76));
}

/**
 * A video track 1 (time scale 1,000) whose track header, media header and sample table say it lasts `ms`; its
 * samples are `stts` entries of [count, duration], one sample of `ms` by default.
 */
function videoTrack(ms: number, stts: ReadonlyArray<readonly [number, number]> = [[1, ms]]): Buffer {
  return box(
    'trak',
    fullBox('tkhd', 3, u32(0, 0, 1, 0, ms), Buffer.alloc(60)),
    box(
      'mdia',
      fullBox('mdhd', 0, u32(0, 0, 1_000, ms, 0)),
      fullBox('hdlr', 0, u32(0), Buffer.from('vide', 'latin1'), u32(0, 0, 0), Buffer.from('\0')),
      box(
        'minf',
        box(
          'stbl',
          // One sample description (Motion JPEG, its picture fields zero): a track without one cannot be read.
          fullBox('stsd', 0, u32(1), box('jpeg', Buffer.alloc(78))),
          fullBox('stts', 0, u32(stts.length, ...stts.flat())),
          fullBox('stsc', 0, u32(0)),
          // Samples of 1 byte each, in no chunk: the lengths, not the pictures, are what is read here.
          fullBox(
            'stsz',
            0,
            u32(
              1,
              stts.reduce((samples, [count]) => samples + count, 0),
            ),
          ),
          fullBox('stco', 0, u32(0)),
        ),
      ),
    ),
  );
}

function fileType(brand: 'isom' | 'qt  '): Buffer {
  const brandBytes = Buffer.from(brand, 'latin1');
  return box('ftyp', brandBytes, Buffer.from([0, 0, 2, 0]), brandBytes);
}

/**
 * An ISO base media file (MP4, or MOV with the `qt  ` brand) with one video track that lasts `seconds`, whose
 * movie header says `movieSeconds` (the same, unless the file is to lie there).
 */
export function isoVideoFile(seconds: number, brand: 'isom' | 'qt  ' = 'isom', movieSeconds = seconds): Buffer {
  const ms = Math.round(seconds * 1_000);
  return Buffer.concat([fileType(brand), box('moov', movieHeader(Math.round(movieSeconds * 1_000)), videoTrack(ms))]);
}

/**
 * A fragmented MP4 of `seconds`, 25 frames of 40 ms a second in one fragment (`moof`) a second: its movie header,
 * track header, media header and sample table say nothing (0), as such files do; the frames' durations are
 * the default of the movie's `trex`, of each fragment's `tfhd`, or written per frame in each `trun`.
 */
export function fragmentedVideoFile(seconds: number, durationsIn: 'trex' | 'tfhd' | 'trun'): Buffer {
  const fragment = (sequence: number) => {
    const trackFragmentHeader =
      durationsIn === 'tfhd' ? fullBox('tfhd', 0x02_0008, u32(1, 40)) : fullBox('tfhd', 0x02_0000, u32(1));
    const run =
      durationsIn === 'trun'
        ? fullBox('trun', 0x100, u32(25, ...Array.from({ length: 25 }, () => 40)))
        : fullBox('trun', 0, u32(25));
    return box('moof', fullBox('mfhd', 0, u32(sequence)), box('traf', trackFragmentHeader, run));
  };
  return Buffer.concat([
    fileType('isom'),
    box(
      'moov',
      movieHeader(0),
      videoTrack(0, []),
      box('mvex', fullBox('trex', 0, u32(1, 1, durationsIn === 'trex' ? 40 : 0, 0, 0))),
    ),
    ...Array.from({ length: seconds }, (_, second) => [fragment(second + 1), box('mdat')]).flat(),
  ]);
}

export const pdfFile = Buffer.from(
  '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
  'latin1',
);

/** A 1x1 PNG. */
export const pngBase64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
