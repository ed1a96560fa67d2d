import { isUtf8 } from 'node:buffer';

/** The continuation bytes each lead byte takes, and the range its first continuation must fall in (RFC 3629). */
function sequenceOf(lead: number): { length: number; low: number; high: number } | undefined {
  if (lead >= 0xc2 && lead <= 0xdf) return { length: 1, low: 0x80, high: 0xbf };
  if (lead === 0xe0) return { length: 2, low: 0xa0, high: 0xbf };
  // U+D800 to U+DFFF (surrogates) are no characters: ED takes 80-9F only.
  if (lead === 0xed) return { length: 2, low: 0x80, high: 0x9f };
  if (lead >= 0xe1 && lead <= 0xef) return { length: 2, low: 0x80, high: 0xbf };
  if (lead === 0xf0) return { length: 3, low: 0x90, high: 0xbf };
  if (lead >= 0xf1 && lead <= 0xf3) return { length: 3, low: 0x80, high: 0xbf };
  if (lead === 0xf4) return { length: 3, low: 0x80, high: 0x8f };
  return undefined;
}

/**
 * The offset of the first byte of `bytes` that begins no UTF-8 character (a stray continuation byte, an overlong
 * or surrogate form, a sequence cut short), or undefined when all of it is UTF-8. Node's own check (`isUtf8`,
 * vectorised) answers the common case; only a refused text is walked, once, to say where.
 */
export function firstInvalidUtf8Byte(bytes: Uint8Array): number | undefined {
  if (isUtf8(bytes)) return undefined;
  let at = 0;
  while (at < bytes.length) {
    const lead = bytes[at]!;
    if (lead < 0x80) {
      at++;
      continue;
    }
    const sequence = sequenceOf(lead);
    if (!sequence) return at;
    for (let next = 1; next <= sequence.length; next++) {
      const byte = bytes[at + next];
      const [low, high] = next === 1 ? [sequence.low, sequence.high] : [0x80, 0xbf];
      if (byte === undefined || byte < low || byte > high) return at;
    }
    at += sequence.length + 1;
  }
  return undefined;
}
