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

/** An ISO base media file (MP4, or MOV with the `qt  ` brand) whose movie header says it lasts `seconds`. */
export function isoVideoFile(seconds: number, brand: 'isom' | 'qt  ' = 'isom'): Buffer {
  const movieHeader = Buffer.alloc(100);
  movieHeader.writeUInt32BE(1_000, 12); // time scale: milliseconds
  movieHeader.writeUInt32BE(Math.round(seconds * 1_000), 16);
  movieHeader.writeUInt32BE(0x0001_0000, 20); // rate 1.0
  movieHeader.writeUInt16BE(0x0100, 24); // volume 1.0
  const brandBytes = Buffer.from(brand, 'latin1');
  return Buffer.concat([
    box('ftyp', brandBytes, Buffer.from([0, 0, 2, 0]), brandBytes),
    box('moov', box('mvhd', movieHeader)),
  ]);
}

export const pdfFile = Buffer.from(
  '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
  'latin1',
);

/** A 1x1 PNG. */
export const pngBase64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
