import { describe, expect, it } from 'vitest';
import { firstInvalidUtf8Byte } from '../../src/domain/utf8.ts';

const bytes = (...values: number[]) => Uint8Array.from(values);
const utf8 = (text: string) => new TextEncoder().encode(text);

/** The longest prefix the WHATWG decoder takes without a replacement: where the first invalid byte must be. */
function decoderPrefix(input: Uint8Array): number | undefined {
  const decoded = new TextDecoder('utf-8').decode(input);
  const replaced = decoded.indexOf('\uFFFD');
  if (replaced === -1) return undefined;
  return new TextEncoder().encode(decoded.slice(0, replaced)).length;
}

describe('the first byte that begins no UTF-8 character', () => {
  it('finds none in UTF-8 text of every length of sequence', () => {
    expect(firstInvalidUtf8Byte(utf8('plain, é, 中, 😀, U+FFFD itself: \uFFFD'))).toBeUndefined();
    expect(firstInvalidUtf8Byte(bytes())).toBeUndefined();
  });

  it.each([
    ['a lone continuation byte', bytes(0x61, 0x80, 0x62), 1],
    ['a byte never in UTF-8', bytes(0x61, 0x62, 0xff), 2],
    ['an overlong form of "/"', bytes(0xc0, 0xaf), 0],
    ['an overlong three-byte form', bytes(0x61, 0xe0, 0x80, 0xaf), 1],
    ['a surrogate, U+D800', bytes(0xed, 0xa0, 0x80), 0],
    ['past U+10FFFF', bytes(0xf4, 0x90, 0x80, 0x80), 0],
    ['a sequence cut short at the end', bytes(0x61, 0xe4, 0xb8), 1],
    ['a sequence cut short by an ASCII byte', bytes(0xf0, 0x9f, 0x98, 0x41), 0],
  ])('finds %s', (_name, input, offset) => {
    expect(firstInvalidUtf8Byte(input)).toBe(offset);
  });

  it('agrees with the WHATWG decoder on random bytes', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed;
    };
    for (let round = 0; round < 3_000; round++) {
      // Mostly UTF-8 text with a few random bytes in it, so that invalid bytes turn up at every position.
      const text = utf8(`ab é中😀 ${round}`);
      const input = Uint8Array.from(text, (byte) => (random() % 23 === 0 ? random() % 256 : byte));
      expect(firstInvalidUtf8Byte(input), `bytes ${Buffer.from(input).toString('hex')}`).toBe(decoderPrefix(input));
    }
  });
});
