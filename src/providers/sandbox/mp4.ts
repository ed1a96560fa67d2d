import { constraintFlags, levelIdc, profileIdc, type PictureSize } from './h264-pcm.ts';

/** An ISO base media box: its size, its type, its payload. */
function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

/** A version-0 full box (every box written here is one): a byte of version, three of flags, then the payload. */
function fullBox(type: string, flags: number, ...payload: Buffer[]): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(flags >>> 0, 0);
  return box(type, head, ...payload);
}

function u32(...values: number[]): Buffer {
  const buffer = Buffer.alloc(4 * values.length);
  for (const [index, value] of values.entries()) buffer.writeUInt32BE(value >>> 0, 4 * index);
  return buffer;
}

function u16(...values: number[]): Buffer {
  const buffer = Buffer.alloc(2 * values.length);
  for (const [index, value] of values.entries()) buffer.writeUInt16BE(value & 0xffff, 2 * index);
  return buffer;
}

const identityMatrix = u32(0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000);
const timescale = 1000;

export interface H264Track {
  size: PictureSize;
  sps: Buffer;
  pps: Buffer;
  /** Each frame's NAL units (without start codes); key frames are marked as sync samples. */
  frames: ReadonlyArray<{ nalUnits: readonly Buffer[]; key: boolean }>;
  frameMs: number;
}

/** One H.264 track in an MP4 file (`moov` before `mdat`, so it plays while it downloads). */
export function mp4File(track: H264Track): Buffer {
  const samples = track.frames.map((frame) => Buffer.concat(frame.nalUnits.flatMap((nal) => [u32(nal.length), nal])));
  const durationMs = track.frames.length * track.frameMs;
  const { width, height } = track.size;
  const avcC = box(
    'avcC',
    Buffer.from([1, profileIdc, constraintFlags, levelIdc, 0xff, 0xe1]),
    u16(track.sps.length),
    track.sps,
    Buffer.from([1]),
    u16(track.pps.length),
    track.pps,
  );
  const compressorName = Buffer.alloc(32);
  const avc1 = box(
    'avc1',
    Buffer.alloc(6),
    u16(1, 0, 0),
    u32(0, 0, 0),
    u16(width, height),
    u32(0x00480000, 0x00480000, 0),
    u16(1),
    compressorName,
    u16(0x18, 0xffff),
    avcC,
  );
  const syncSamples = track.frames.flatMap((frame, index) => (frame.key ? [index + 1] : []));
  const table = (chunkOffset: number) =>
    box(
      'stbl',
      fullBox('stsd', 0, u32(1), avc1),
      fullBox('stts', 0, u32(1, samples.length, track.frameMs)),
      fullBox('stss', 0, u32(syncSamples.length, ...syncSamples)),
      fullBox('stsc', 0, u32(1, 1, samples.length, 1)),
      fullBox('stsz', 0, u32(0, samples.length, ...samples.map((sample) => sample.length))),
      fullBox('stco', 0, u32(1, chunkOffset)),
    );
  const movie = (chunkOffset: number) =>
    box(
      'moov',
      fullBox(
        'mvhd',
        0,
        u32(0, 0, timescale, durationMs, 0x00010000),
        u16(0x0100, 0),
        u32(0, 0),
        identityMatrix,
        u32(0, 0, 0, 0, 0, 0, 2),
      ),
      box(
        'trak',
        fullBox(
          'tkhd',
          3,
          u32(0, 0, 1, 0, durationMs, 0, 0),
          u16(0, 0, 0, 0),
          identityMatrix,
          u32(width << 16, height << 16),
        ),
        box(
          'mdia',
          fullBox('mdhd', 0, u32(0, 0, timescale, durationMs), u16(0x55c4, 0)),
          fullBox(
            'hdlr',
            0,
            u32(0),
            Buffer.from('vide', 'latin1'),
            u32(0, 0, 0),
            Buffer.from('VideoHandler\0', 'latin1'),
          ),
          box(
            'minf',
            fullBox('vmhd', 1, u16(0, 0, 0, 0)),
            box('dinf', fullBox('dref', 0, u32(1), fullBox('url ', 1))),
            table(chunkOffset),
          ),
        ),
      ),
    );
  const fileType = box('ftyp', Buffer.from('isom', 'latin1'), u32(0x200), Buffer.from('isomiso2avc1mp41', 'latin1'));
  const headerSize = fileType.length + movie(0).length + 8;
  return Buffer.concat([fileType, movie(headerSize), box('mdat', ...samples)]);
}
