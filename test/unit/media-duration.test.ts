import { describe, expect, it } from 'vitest';
import { wavSeconds } from '../../src/media/wav-audio.ts';
import { wavFile } from '../support/media-fixtures.ts';

/**
 * Media billed by the second is billed for what its file holds: a header that says less than the tracks, the
 * samples or the bytes present never lowers the length the gateway reads.
 */

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
