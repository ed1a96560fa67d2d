/** JSON text read without parsing it: what its nesting and its numbers would do to a parser. */
const quote = 0x22;
const backslash = 0x5c;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;
const minus = 0x2d;
const plus = 0x2b;
const dot = 0x2e;
const digit0 = 0x30;
const digit9 = 0x39;
const lowerE = 0x65;
const upperE = 0x45;

/** A double reaches 1.8e308, so a number written without an exponent needs more digits than this to overflow. */
const digitsThatCannotOverflow = 308;

/** Index of the quote closing the string opened at `open` (the text's length when unterminated); indexOf keeps it at native speed. */
function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === backslash) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

export type JsonTextProblem = 'too-deep' | 'non-finite';

/**
 * One pass over JSON text, before it is parsed: nesting deeper than `maxDepth` (so a deeply nested body never
 * reaches recursive code) and numbers that JSON.parse would turn into ±Infinity. Strings are skipped; the
 * text's own syntax is left to the parser, which reports it.
 */
export function scanJsonText(text: string, maxDepth: number): JsonTextProblem | undefined {
  const length = text.length;
  let depth = 0;
  let overflow = false;
  for (let index = 0; index < length; index++) {
    const char = text.charCodeAt(index);
    if (char === quote) {
      index = closingQuote(text, index);
    } else if (char === openBrace || char === openBracket) {
      if (++depth > maxDepth) return 'too-deep';
    } else if (char === closeBrace || char === closeBracket) {
      depth--;
    } else if (char === minus || (char >= digit0 && char <= digit9)) {
      const start = index;
      let exponent = false;
      for (; index + 1 < length; index++) {
        const next = text.charCodeAt(index + 1);
        if (next === lowerE || next === upperE) exponent = true;
        else if (!((next >= digit0 && next <= digit9) || next === dot || next === minus || next === plus)) break;
      }
      // Only a number with an exponent or hundreds of digits can overflow: the rest cost no conversion.
      if (
        !overflow &&
        (exponent || index - start >= digitsThatCannotOverflow) &&
        Math.abs(Number(text.slice(start, index + 1))) === Infinity
      ) {
        overflow = true;
      }
    }
  }
  return overflow ? 'non-finite' : undefined;
}
