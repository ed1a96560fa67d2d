import { createRequire } from 'node:module';

type Tokenizer = typeof import('gpt-tokenizer');

const load = createRequire(import.meta.url);
let tokenizer: Tokenizer | undefined;

/**
 * The o200k tokenizer, loaded on first use: its tables take about 70 MiB, and a gateway whose upstreams
 * report usage never needs them.
 */
export function o200k(): Tokenizer {
  tokenizer ??= load('gpt-tokenizer') as Tokenizer;
  return tokenizer;
}

/** Text that spells a special token (`<|endoftext|>`) is counted as the ordinary text it is. */
const plainText = { disallowedSpecial: new Set<string>() };

/** Longest stretch handed to the tokenizer without a word boundary: its merging is quadratic in a word's length. */
const longestRun = 256;
/** Text is tokenized in pieces of about this many characters, cut only where a cut cannot change the count. */
const pieceLength = 8_192;

function isSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d);
}

/**
 * The text in the pieces it is tokenized in, so that tokenizing is linear in its length: cut before a space that
 * follows a non-space (where the tokenizer's own pre-split cuts it too, so the count is unchanged), and
 * stretches without such a boundary cut every `longestRun` characters (a cut there can only add tokens, so the
 * count stays upper-leaning).
 */
function* tokenPieces(text: string): Generator<string> {
  if (text.length <= longestRun) {
    yield text;
    return;
  }
  let start = 0;
  let boundary = 0;
  for (let index = 1; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x20 && !isSpace(text.charCodeAt(index - 1))) {
      boundary = index;
      if (index - start < pieceLength) continue;
    } else if (index - boundary < longestRun || (code >= 0xdc00 && code <= 0xdfff)) {
      // Never between the halves of a surrogate pair, which would count two replacement characters.
      continue;
    }
    yield text.slice(start, index);
    start = index;
    boundary = index;
  }
  yield text.slice(start);
}

/** Tokens of text we counted ourselves (upstreams that report no usage, the sandbox): linear in its length. */
export function countTextTokens(text: string): number {
  let total = 0;
  for (const piece of tokenPieces(text)) total += o200k().countTokens(piece, plainText);
  return total;
}

/**
 * The beginning of `text` that `countTextTokens` counts at most `maxTokens` in, and whether anything was cut:
 * as linear as the count.
 */
export function textWithinTokens(text: string, maxTokens: number): { text: string; cut: boolean } {
  let used = 0;
  let kept = 0;
  for (const piece of tokenPieces(text)) {
    const tokens = o200k().encode(piece, plainText);
    if (used + tokens.length > maxTokens)
      return { text: text.slice(0, kept) + o200k().decode(tokens.slice(0, maxTokens - used)), cut: true };
    used += tokens.length;
    kept += piece.length;
  }
  return { text, cut: false };
}
