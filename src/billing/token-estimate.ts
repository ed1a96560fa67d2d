import { o200k } from '../domain/tokenizer.ts';
import { imagesIn, partsOf, type ChatMessage, type ToolDefinition } from '../domain/chat.ts';
import type { DeliveredOutput } from '../domain/delivered-output.ts';

/** Per-message framing tokens chat formats add around each message, and the primer of the reply. */
const tokensPerMessage = 4;
const replyPrimerTokens = 3;

/** Text that spells a special token (`<|endoftext|>`) is counted as the ordinary text it is. */
const plainText = { disallowedSpecial: new Set<string>() };

/** Output tokens reserved and sent upstream when neither the client nor the catalog sets a maximum. */
export const defaultMaxOutputTokens = 4096;

/** Tokens reserved per input image: above what the major providers charge for a large image. */
export const tokensPerImage = 2_000;

/**
 * A bound no tokenizer exceeds, computed in one pass without tokenizing: byte-level and byte-fallback
 * tokenizers spend at most one token per UTF-8 byte. Reservations use it, so a request is admitted or
 * refused after work linear in its size, and a settlement capped at its hold does not undercharge the
 * prompt's text, tools and images. Parts a pass-through forwards without decoding them (audio, files,
 * documents) are not in it: the hold covers them only through the output limit's share.
 */
export function promptTokenBound(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] = []): number {
  let tokens = replyPrimerTokens;
  for (const message of messages) {
    tokens += tokensPerMessage;
    for (const part of partsOf(message.content)) {
      if (part.type === 'text') tokens += Buffer.byteLength(part.text);
      else if (part.type === 'tool-call')
        tokens += Buffer.byteLength(part.call.name) + Buffer.byteLength(part.call.arguments);
      else if (part.type === 'tool-result') tokens += Buffer.byteLength(part.result.output);
    }
  }
  for (const tool of tools) tokens += Buffer.byteLength(JSON.stringify(tool));
  return tokens + imagesIn(messages) * tokensPerImage;
}

/** Longest stretch handed to the tokenizer without a word boundary: its merging is quadratic in a word's length. */
const longestRun = 256;
/** Text is tokenized in pieces of about this many characters, cut only where a cut cannot change the count. */
const pieceLength = 8_192;

function isSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d);
}

/**
 * Tokens of text we counted ourselves, for upstreams that report no usage. Linear in the text's length:
 * the text is cut before a space that follows a non-space (where the tokenizer's own pre-split cuts it
 * too, so the count is unchanged), and stretches without such a boundary are cut every `longestRun`
 * characters (a cut there can only add tokens, so the count stays upper-leaning).
 */
export function countTextTokens(text: string): number {
  if (text.length <= longestRun) return o200k().countTokens(text, plainText);
  let total = 0;
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
    total += o200k().countTokens(text.slice(start, index), plainText);
    start = index;
    boundary = index;
  }
  return total + o200k().countTokens(text.slice(start), plainText);
}

/** Tokens of delivered output: the text kept, counted, and each character past it as a token at most. */
export function countDeliveredTokens(output: DeliveredOutput): number {
  return countTextTokens(output.text) + output.charactersBeyond;
}

/** A token count as an upstream reported it, made a whole non-negative number (providers' JSON is not trusted). */
export function wholeTokens(count: unknown): number {
  const value = Number(count);
  return Number.isFinite(value) && value > 0 ? Math.ceil(value) : 0;
}
