import { countTokens } from 'gpt-tokenizer';
import { imagesIn, promptTextOf, type ChatMessage, type ToolDefinition } from '../domain/chat.ts';

/** Per-message framing tokens chat formats add around each message, and the primer of the reply. */
const tokensPerMessage = 4;
const replyPrimerTokens = 3;

/** Text that spells a special token (`<|endoftext|>`) is counted as the ordinary text it is. */
const plainText = { disallowedSpecial: new Set<string>() };

/** Output tokens reserved when the client sets no maximum (the settled charge is what was really produced). */
export const defaultMaxOutputTokens = 4096;

/** Tokens reserved per input image: above what the major providers charge for a large image. */
export const tokensPerImage = 2_000;

/** An upper-leaning count of a prompt's tokens, for the hold taken before the call; tool definitions count as their JSON. */
export function estimatePromptTokens(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] = []): number {
  const text = messages.reduce((sum, message) => sum + tokensPerMessage + countTokens(promptTextOf(message.content), plainText), replyPrimerTokens);
  const definitions = tools.length > 0 ? countTokens(JSON.stringify(tools), plainText) : 0;
  return text + definitions + imagesIn(messages) * tokensPerImage;
}

/** Tokens of text we counted ourselves, for upstreams that report no usage. */
export function countTextTokens(text: string): number {
  return countTokens(text, plainText);
}

/** A token count as an upstream reported it, made a whole non-negative number (providers' JSON is not trusted). */
export function wholeTokens(count: unknown): number {
  const value = Number(count);
  return Number.isFinite(value) && value > 0 ? Math.ceil(value) : 0;
}
