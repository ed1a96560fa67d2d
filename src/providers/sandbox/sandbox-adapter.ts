import { countTokens, decode, encode } from 'gpt-tokenizer';
import { textOf, type ChatRequest, type ChatStreamEvent, type FinishReason } from '../../domain/chat.ts';
import type { ProviderAdapter } from '../provider-adapter.ts';

/** Text that spells a special token is echoed and counted as ordinary text. */
const plainText = { disallowedSpecial: new Set<string>() };

/** Words per streamed chunk: small enough that a short answer still arrives as several events. */
const wordsPerChunk = 3;

function answerTo(request: ChatRequest): { text: string; finishReason: FinishReason } {
  const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
  let text = lastUser ? textOf(lastUser.content) : '';
  let finishReason: FinishReason = { unified: 'stop', raw: 'stop' };
  const stops = (request.stop ?? []).map((stop) => text.indexOf(stop)).filter((index) => index >= 0);
  if (stops.length > 0) {
    text = text.slice(0, Math.min(...stops));
    finishReason = { unified: 'stop', raw: 'stop_sequence' };
  }
  if (request.maxTokens !== undefined) {
    const tokens = encode(text, plainText);
    if (tokens.length > request.maxTokens) {
      text = decode(tokens.slice(0, request.maxTokens));
      finishReason = { unified: 'length', raw: 'length' };
    }
  }
  return { text, finishReason };
}

/**
 * The built-in offline provider: answers with the last user message, streamed a few words at a time, with
 * token usage counted by the tokenizer the gateway meters with. Deterministic, so a newcomer or a CI can
 * exercise the whole billing path without an upstream account.
 */
async function* echo(request: ChatRequest): AsyncGenerator<ChatStreamEvent> {
  const { text, finishReason } = answerTo(request);
  const words = text.match(/\s*\S+\s*/g) ?? [];
  for (let start = 0; start < words.length; start += wordsPerChunk) {
    yield { type: 'text-delta', text: words.slice(start, start + wordsPerChunk).join('') };
  }
  const inputTokens = request.messages.reduce((sum, message) => sum + countTokens(textOf(message.content), plainText), 0);
  yield { type: 'finish', finishReason, usage: { inputTokens, outputTokens: countTokens(text, plainText) } };
}

export const sandboxAdapter: ProviderAdapter = {
  protocol: 'sandbox',
  text: { streamChat: (request) => echo(request) },
};
