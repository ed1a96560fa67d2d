import { describe, expect, it } from 'vitest';
import { isoVideoFacts } from '../../src/media/iso-video.ts';
import { wavSeconds } from '../../src/media/wav-audio.ts';
import { sandboxClip } from '../../src/providers/sandbox/sandbox-video.ts';
import { fragmentedVideoFile, isoVideoFile, wavFile } from '../support/media-fixtures.ts';

/**
 * Media billed by the second is billed for what its file holds: a header that says less than the tracks, the
 * samples or the bytes present never lowers the length the gateway reads.
 */

/** Where the payload of the first box of `type` starts (its version byte, for a full box). */
function payloadOf(file: Buffer, type: string): number {
  const at = file.indexOf(type, 0, 'latin1');
  expect(at).toBeGreaterThan(0);
  return at + 4;
}

/** A copy of `file` whose first box of type `box` (version 0) says `value` at `at` bytes into its payload. */
function saying(file: Buffer, { box, at, value }: { box: string; at: number; value: number }): Buffer {
  const copy = Buffer.from(file);
  const payload = payloadOf(copy, box);
  expect(copy[payload]).toBe(0);
  copy.writeUInt32BE(value, payload + at);
  return copy;
}

/** A copy of `file` (one movie of one track) with `box` put in its track, after the track header. */
function withTrackBox(file: Buffer, box: Buffer): Buffer {
  const track = payloadOf(file, 'trak') - 8;
  const afterHeader = payloadOf(file, 'tkhd') - 8 + file.readUInt32BE(payloadOf(file, 'tkhd') - 8);
  const copy = Buffer.concat([file.subarray(0, afterHeader), box, file.subarray(afterHeader)]);
  for (const parent of [payloadOf(copy, 'moov') - 8, track])
    copy.writeUInt32BE(copy.readUInt32BE(parent) + box.length, parent);
  return copy;
}

// Where a version-0 header keeps its duration: after the version, flags, two times and the time scale (or, in
// a track header, the track's id and a reserved word).
const durationAt = { mvhd: 16, mdhd: 16, tkhd: 20 } as const;

describe('isoVideoFacts', () => {
  // The sandbox's real 10 s H.264 clip: 80 frames of 125 ms, every header saying 10 s.
  const clip = sandboxClip('a boat', 10, '16:9');

  it('reads a file whose headers agree', () => {
    expect(isoVideoFacts(clip)).toEqual({ container: 'mp4', seconds: 10 });
    expect(isoVideoFacts(isoVideoFile(119.5, 'qt  '))).toEqual({ container: 'mov', seconds: 119.5 });
  });

  it('a movie header that says 1 ms does not shorten a 10 s track', () => {
    expect(isoVideoFacts(saying(clip, { box: 'mvhd', at: durationAt.mvhd, value: 1 }))?.seconds).toBe(10);
    expect(isoVideoFacts(isoVideoFile(130, 'isom', 1))?.seconds).toBe(130);
  });

  it('the sample table counts when every header says 1 ms', () => {
    let lying = saying(clip, { box: 'mvhd', at: durationAt.mvhd, value: 1 });
    lying = saying(lying, { box: 'tkhd', at: durationAt.tkhd, value: 1 });
    lying = saying(lying, { box: 'mdhd', at: durationAt.mdhd, value: 1 });
    expect(isoVideoFacts(lying)?.seconds).toBe(10);
  });

  it('headers that say more than the samples count: the longest length stated is read', () => {
    // The frames' durations (stts: 1 entry of 80 samples, then their duration) cut to 1 ms each.
    const shortSamples = saying(clip, { box: 'stts', at: 12, value: 1 });
    expect(isoVideoFacts(shortSamples)?.seconds).toBe(10);
    const longTrack = saying(clip, { box: 'mdhd', at: durationAt.mdhd, value: 12_000 });
    expect(isoVideoFacts(longTrack)?.seconds).toBe(12);
  });

  it('an edit list that plays the media twice is read at its length', () => {
    // edts > elst, version 0: two segments of 3,000 ms (the movie's time scale) from the media's start, at rate 1.
    const editList = Buffer.alloc(8 + 8 + 2 * 12);
    editList.writeUInt32BE(editList.length);
    editList.write('elst', 4, 'latin1');
    editList.writeUInt32BE(2, 12);
    for (const segment of [0, 1]) {
      editList.writeUInt32BE(3_000, 16 + 12 * segment);
      editList.writeUInt32BE(0x0001_0000, 16 + 12 * segment + 8);
    }
    const edits = Buffer.concat([Buffer.from([0, 0, 0, 8 + editList.length]), Buffer.from('edts', 'latin1'), editList]);
    expect(isoVideoFacts(withTrackBox(isoVideoFile(3), edits))?.seconds).toBe(6);
  });

  it('does not loop over a table whose count says more entries than its box holds', () => {
    const started = performance.now();
    expect(isoVideoFacts(saying(clip, { box: 'stts', at: 4, value: 0xffff_ffff }))).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('sums the samples of a fragmented file, whose headers say 0', () => {
    for (const durationsIn of ['trex', 'tfhd', 'trun'] as const)
      expect(isoVideoFacts(fragmentedVideoFile(6, durationsIn))?.seconds, durationsIn).toBe(6);
  });

  it('reads version-1 headers (64-bit times)', () => {
    const movieHeader = Buffer.alloc(120);
    movieHeader.writeUInt8(1, 0);
    movieHeader.writeUInt32BE(600, 20); // time scale
    movieHeader.writeBigUInt64BE(4_500n, 24); // duration: 7.5 s
    const movie = Buffer.concat([Buffer.from([0, 0, 0, 128]), Buffer.from('mvhd', 'latin1'), movieHeader]);
    const file = Buffer.concat([
      isoVideoFile(1).subarray(0, 20),
      Buffer.from([0, 0, 0, 136]),
      Buffer.from('moov', 'latin1'),
      movie,
    ]);
    expect(isoVideoFacts(file)).toEqual({ container: 'mp4', seconds: 7.5 });
  });

  it('does not read a file without a movie, or one that gives a time scale of 0', () => {
    expect(isoVideoFacts(Buffer.from('%PDF-1.4 not a movie at all', 'latin1'))).toBeUndefined();
    expect(isoVideoFacts(clip.subarray(0, 32))).toBeUndefined();
    expect(isoVideoFacts(saying(clip, { box: 'mdhd', at: 12, value: 0 }))).toBeUndefined();
    expect(isoVideoFacts(saying(clip, { box: 'mvhd', at: 12, value: 0 }))).toBeUndefined();
  });

  it('walks a file of boxes nested a million deep in a bounded time, without recursion', () => {
    // 8 MiB of `moov` headers, each the only child of the one before.
    const depth = 1 << 20;
    const nested = Buffer.alloc(8 * depth);
    for (let level = 0; level < depth; level++) {
      nested.writeUInt32BE(8 * (depth - level), 8 * level);
      nested.write('moov', 8 * level + 4, 'latin1');
    }
    const started = performance.now();
    expect(isoVideoFacts(nested)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('wavSeconds', () => {
  it('reads a file whose header agrees with its bytes', () => {
    expect(wavSeconds(wavFile(3, 100))).toBe(3);
  });

  it('a data chunk that says 8 bytes does not shorten the 100 s that follow it', () => {
    expect(wavSeconds(wavFile(100, 1_000, 8))).toBe(100);
  });

  it('a data chunk that says more than the bytes present counts the bytes present', () => {
    expect(wavSeconds(wavFile(2, 1_000, 1_000_000))).toBe(2);
  });

  it("reads the length from the samples' format, not from the byte rate, block size or sample count the file states", () => {
    const statedRate = wavFile(10);
    statedRate.writeUInt32LE(1_000_000, 28);
    expect(wavSeconds(statedRate)).toBe(10);
    const statedBlock = wavFile(10);
    statedBlock.writeUInt16LE(1_000, 32);
    expect(wavSeconds(statedBlock)).toBe(10);
    // A `fact` chunk (a sample count, meant for compressed formats) that says 1 sample, before the data.
    const honest = wavFile(10);
    const fact = Buffer.alloc(12);
    fact.write('fact', 0, 'latin1');
    fact.writeUInt32LE(4, 4);
    fact.writeUInt32LE(1, 8);
    const withFact = Buffer.concat([honest.subarray(0, 36), fact, honest.subarray(36)]);
    withFact.writeUInt32LE(withFact.length - 8, 4);
    expect(wavSeconds(withFact)).toBe(10);
  });

  it('reads 16-bit stereo, and WAVE_FORMAT_EXTENSIBLE 24-bit samples', () => {
    const stereo = wavFile(4, 4_000); // 16,000 bytes: 1 s of 16-bit stereo at 4,000 Hz
    stereo.writeUInt16LE(2, 22);
    stereo.writeUInt32LE(16_000, 28);
    stereo.writeUInt16LE(4, 32);
    stereo.writeUInt16LE(16, 34);
    expect(wavSeconds(stereo)).toBe(1);
    const extensibleFormat = Buffer.alloc(48);
    extensibleFormat.write('fmt ', 0, 'latin1');
    extensibleFormat.writeUInt32LE(40, 4);
    extensibleFormat.writeUInt16LE(0xfffe, 8);
    extensibleFormat.writeUInt16LE(1, 10); // mono
    extensibleFormat.writeUInt32LE(1_000, 12);
    extensibleFormat.writeUInt32LE(3_000, 16);
    extensibleFormat.writeUInt16LE(3, 20);
    extensibleFormat.writeUInt16LE(24, 22);
    extensibleFormat.writeUInt16LE(22, 24); // the extension's size
    extensibleFormat.writeUInt16LE(24, 26); // valid bits
    // KSDATAFORMAT_SUBTYPE_PCM
    Buffer.from('0100000000001000800000aa00389b71', 'hex').copy(extensibleFormat, 32);
    const samples = wavFile(6).subarray(36); // the data chunk: 6,000 bytes, 2,000 samples of 3 bytes
    const extensible = Buffer.concat([wavFile(0).subarray(0, 12), extensibleFormat, samples]);
    extensible.writeUInt32LE(extensible.length - 8, 4);
    expect(wavSeconds(extensible)).toBe(2);
  });

  it('does not read a WAV whose samples are compressed, or that has no format or no data', () => {
    const adpcm = wavFile(2);
    adpcm.writeUInt16LE(0x11, 20); // IMA ADPCM: its length is not its bytes over a rate it states
    expect(wavSeconds(adpcm)).toBeUndefined();
    expect(wavSeconds(wavFile(2).subarray(0, 36))).toBeUndefined();
    const noFormat = wavFile(2);
    noFormat.write('junk', 12, 'latin1');
    expect(wavSeconds(noFormat)).toBeUndefined();
    const zeroRate = wavFile(2);
    zeroRate.writeUInt32LE(0, 24);
    expect(wavSeconds(zeroRate)).toBeUndefined();
  });
});
