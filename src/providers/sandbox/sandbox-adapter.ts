import { o200k } from '../../domain/tokenizer.ts';
import { createHash } from 'node:crypto';
import {
  embeddingPartTypes,
  type EmbeddingInput,
  type EmbeddingRequest,
  type EmbeddingResult,
} from '../../domain/embedding.ts';
import { newId } from '../../domain/ids.ts';
import { promptTextOf, textOf, type ChatRequest, type ChatStreamEvent, type FinishReason } from '../../domain/chat.ts';
import type { ProviderAdapter } from '../provider-adapter.ts';
import { sandboxVideo } from './sandbox-video.ts';
import { sandboxImages } from './sandbox-images.ts';
import { sandboxReferenceAudio, sandboxSpeech } from './sandbox-speech.ts';

/** Text that spells a special token is echoed and counted as ordinary text. */
const plainText = { disallowedSpecial: new Set<string>() };

/** Words per streamed chunk: small enough that a short answer still arrives as several events. */
const wordsPerChunk = 3;

/** The tool the request requires a call of (`toolChoice` `required` or named); under `auto` the sandbox answers in text. */
function requiredTool(request: ChatRequest): string | undefined {
  const choice = request.toolChoice;
  if (!request.tools?.length || choice === undefined || choice === 'auto' || choice === 'none') return undefined;
  if (request.messages.at(-1)?.role === 'tool') return undefined;
  return choice === 'required' ? request.tools[0]!.name : choice.name;
}

function answerTo(request: ChatRequest): { text: string; finishReason: FinishReason } {
  // The words to echo: the user's last message, or the tool results that answer the last calls.
  const last = [...request.messages].reverse().find((message) => message.role === 'user' || message.role === 'tool');
  let text = last ? promptTextOf(last.content) : '';
  let finishReason: FinishReason = { unified: 'stop', raw: 'stop' };
  // The sequence met first ends the answer, and is named as a provider that says which does.
  const [first] = (request.stop ?? [])
    .map((stop) => ({ stop, index: text.indexOf(stop) }))
    .filter(({ index }) => index >= 0)
    .sort((a, b) => a.index - b.index);
  if (first) {
    text = text.slice(0, first.index);
    finishReason = { unified: 'stop', raw: 'stop_sequence', stopSequence: first.stop };
  }
  if (request.maxTokens !== undefined) {
    const tokens = o200k().encode(text, plainText);
    if (tokens.length > request.maxTokens) {
      text = o200k().decode(tokens.slice(0, request.maxTokens));
      finishReason = { unified: 'length', raw: 'length' };
    }
  }
  return { text, finishReason };
}

/**
 * The built-in offline provider: answers with the last user message (or the last tool results), and calls a
 * tool with `{"text": <last user message>}` when the request requires one; streamed a few words at a time, with
 * token usage counted by the tokenizer the gateway meters with. Deterministic, so a newcomer or a CI can
 * exercise the whole billing path without an upstream account.
 */
async function* echo(request: ChatRequest): AsyncGenerator<ChatStreamEvent> {
  const inputTokens = request.messages.reduce(
    (sum, message) => sum + o200k().countTokens(promptTextOf(message.content), plainText),
    0,
  );
  const tool = requiredTool(request);
  if (tool) {
    const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
    const args = JSON.stringify({ text: lastUser ? textOf(lastUser.content) : '' });
    yield { type: 'tool-call-start', index: 0, id: newId('call'), name: tool };
    yield { type: 'tool-call-delta', index: 0, arguments: args };
    yield {
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: { inputTokens, outputTokens: o200k().countTokens(`${tool} ${args}`, plainText) },
    };
    return;
  }
  const { text, finishReason } = answerTo(request);
  const words = text.match(/\s*\S+\s*/g) ?? [];
  for (let start = 0; start < words.length; start += wordsPerChunk) {
    yield { type: 'text-delta', text: words.slice(start, start + wordsPerChunk).join('') };
  }
  yield { type: 'finish', finishReason, usage: { inputTokens, outputTokens: o200k().countTokens(text, plainText) } };
}

/** Vector size when the request sets no `dimensions`. */
const defaultDimensions = 1024;

/** A unit vector drawn from the SHA-256 of the input's parts: the same input always gives the same vector. */
function vectorOf(input: EmbeddingInput, dimensions: number): number[] {
  const seed = createHash('sha256').update(JSON.stringify(input.parts)).digest();
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block++) {
    const bytes = createHash('sha256').update(seed).update(String(block)).digest();
    for (let offset = 0; offset + 4 <= bytes.length && values.length < dimensions; offset += 4)
      values.push(bytes.readUInt32BE(offset) / 0x7fffffff - 1);
  }
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}

/** Deterministic vectors of the requested dimension for any part type; input tokens counted with the gateway's tokenizer. */
function embed(request: EmbeddingRequest): Promise<EmbeddingResult> {
  const dimensions = request.dimensions ?? defaultDimensions;
  const inputTokens = request.inputs.reduce(
    (sum, input) =>
      sum +
      input.parts.reduce(
        (count, part) => count + (part.type === 'text' ? o200k().countTokens(part.text, plainText) : 0),
        0,
      ),
    0,
  );
  return Promise.resolve({ vectors: request.inputs.map((input) => vectorOf(input, dimensions)), inputTokens });
}

export const sandboxAdapter: ProviderAdapter = {
  protocol: 'sandbox',
  text: { streamChat: (request) => echo(request) },
  embeddings: { parts: embeddingPartTypes, embed },
  images: sandboxImages,
  speech: { synthesize: sandboxSpeech, generateWithReference: sandboxReferenceAudio },
  video: sandboxVideo,
};
