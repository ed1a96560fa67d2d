/** Whether an ISO base-media file (its first box `ftyp`) declares one of `brands` as its major brand. */
function isoBrand(bytes: Buffer, brands: readonly string[]): boolean {
  return (
    bytes.length >= 12 && bytes.toString('latin1', 4, 8) === 'ftyp' && brands.includes(bytes.toString('latin1', 8, 12))
  );
}

/** Signatures of the media kinds the gateway checks (embedding limits, image inputs), read from a file's first bytes. */
const signatures: Array<{ mediaType: string; matches: (bytes: Buffer) => boolean }> = [
  {
    mediaType: 'image/png',
    matches: (bytes) => bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  { mediaType: 'image/jpeg', matches: (bytes) => bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff])) },
  { mediaType: 'image/gif', matches: (bytes) => /^GIF8[79]a$/.test(bytes.toString('latin1', 0, 6)) },
  {
    mediaType: 'image/webp',
    matches: (bytes) => bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP',
  },
  { mediaType: 'image/bmp', matches: (bytes) => bytes.length >= 26 && bytes.toString('latin1', 0, 2) === 'BM' },
  { mediaType: 'image/tiff', matches: (bytes) => ['II*\u0000', 'MM\u0000*'].includes(bytes.toString('latin1', 0, 4)) },
  { mediaType: 'image/avif', matches: (bytes) => isoBrand(bytes, ['avif', 'avis']) },
  { mediaType: 'image/heic', matches: (bytes) => isoBrand(bytes, ['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis']) },
  { mediaType: 'image/heif', matches: (bytes) => isoBrand(bytes, ['mif1', 'msf1']) },
  { mediaType: 'video/quicktime', matches: (bytes) => isoBrand(bytes, ['qt  ']) },
  // Any other ISO base-media file (brands isom, mp41, mp42, avc1, M4V …): the image brands above are matched first.
  { mediaType: 'video/mp4', matches: (bytes) => bytes.length >= 12 && bytes.toString('latin1', 4, 8) === 'ftyp' },
  { mediaType: 'video/webm', matches: (bytes) => bytes.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3])) },
  {
    mediaType: 'audio/wav',
    matches: (bytes) => bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WAVE',
  },
];

/**
 * The media type a file's own bytes declare, for media fetched from a URL whose server may label it
 * loosely (`application/octet-stream`); undefined when the bytes match none of the known kinds.
 */
export function sniffMediaType(bytes: Buffer): string | undefined {
  return signatures.find((signature) => signature.matches(bytes))?.mediaType;
}

/** A file's first bytes, read as text, when they are all printable ASCII: an error page or a JSON body, not sound. */
function readsAsText(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 64);
  return (
    head.length > 0 &&
    head.every((byte) => byte === 0x09 || byte === 0x0a || byte === 0x0d || (byte >= 0x20 && byte < 0x7f))
  );
}

/**
 * Whether `bytes` are a file of the audio `mediaType` a provider was asked for, by its own signature: an MP3
 * (an ID3 tag or an MPEG frame's sync), Ogg, WAV. Raw 16-bit PCM has none: it is whole samples that do not read
 * as text.
 */
export function isAudioOf(bytes: Buffer, mediaType: string): boolean {
  switch (mediaType) {
    case 'audio/mpeg':
      return (
        bytes.toString('latin1', 0, 3) === 'ID3' ||
        (bytes.length >= 2 && bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0)
      );
    case 'audio/ogg':
      return bytes.toString('latin1', 0, 4) === 'OggS';
    case 'audio/wav':
      return sniffMediaType(bytes) === 'audio/wav';
    case 'audio/L16':
      return bytes.length % 2 === 0 && !readsAsText(bytes);
    default:
      return false;
  }
}

/** The picture type a provider output's bytes declare; undefined for bytes that are no picture, whatever the provider said. */
export function imageTypeOf(bytes: Buffer): string | undefined {
  const mediaType = sniffMediaType(bytes);
  return mediaType?.startsWith('image/') ? mediaType : undefined;
}

/** Why a provider's output was not kept, worded once for every image path (a job's archive, a stream). */
export const notAnImage = 'the provider output is not an image';
