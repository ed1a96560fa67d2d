import { randomBytes } from 'node:crypto';
import { compactContent, imageFromUrl, type ChatMessage, type ChatPart, type ChatStreamEvent, type FinishReason, type TokenUsage } from '../../domain/chat.ts';
import type { CollectedAnswer } from '../../gateway/text-generation.ts';

/** The alpha (chat-completions) request as this surface reads it; unknown fields are kept and forwarded. */
export interface ChatCompletionsBody {
  model: string;
  messages: Array<{ role: string; content?: unknown }>;
  stream?: boolean;
  stream_options?: Record<string, unknown>;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  seed?: number;
  [field: string]: unknown;
}

/** Wire field -> native parameter name, for the capability gate. */
export const gatedFields: Readonly<Record<string, string>> = {
  temperature: 'temperature',
  max_tokens: 'maxTokens',
  max_completion_tokens: 'maxTokens',
  top_p: 'topP',
  stop: 'stop',
  seed: 'seed',
  tools: 'tools',
  tool_choice: 'toolChoice',
  response_format: 'responseFormat',
  presence_penalty: 'presencePenalty',
  frequency_penalty: 'frequencyPenalty',
  logprobs: 'logprobs',
  top_logprobs: 'topLogprobs',
  logit_bias: 'logitBias',
  parallel_tool_calls: 'parallelToolCalls',
  reasoning_effort: 'reasoningEffort',
  verbosity: 'verbosity',
  web_search_options: 'webSearchOptions',
};

export interface DecodedChat {
  messages: ChatMessage[];
  /** What the canonical model cannot carry (see TextGenerationInput.untranslatable). */
  untranslatable: string[];
}

const roles: Record<string, ChatMessage['role'] | undefined> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant' };

export function decodeChatMessages(body: ChatCompletionsBody): DecodedChat {
  const untranslatable = new Set<string>();
  const messages: ChatMessage[] = [];
  for (const message of body.messages) {
    const role = roles[message.role];
    if (!role) untranslatable.add(`"${message.role}" messages`);
    const parts: ChatPart[] = [];
    if (typeof message.content === 'string') parts.push({ type: 'text', text: message.content });
    else if (Array.isArray(message.content)) {
      for (const part of message.content as Array<{ type?: unknown; text?: unknown; image_url?: { url?: unknown } }>) {
        if (part?.type === 'text' && typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
        else if (part?.type === 'image_url' && typeof part.image_url?.url === 'string') parts.push({ type: 'image', image: imageFromUrl(part.image_url.url) });
        else untranslatable.add(`"${String(part?.type)}" content parts`);
      }
    }
    const content = compactContent(parts);
    if ('tool_calls' in message) untranslatable.add('tool calls');
    messages.push({ role: role ?? 'user', content });
  }
  if (body.tools !== undefined) untranslatable.add('tools');
  return { messages, untranslatable: [...untranslatable] };
}

/** The body sent to an upstream of the same protocol: as given, with the model rewritten and usage forced on streams. */
export function relayBody(body: ChatCompletionsBody, upstreamModel: string, droppedNativeNames: readonly string[]): Record<string, unknown> {
  const forwarded: Record<string, unknown> = { ...body, model: upstreamModel };
  for (const [field, native] of Object.entries(gatedFields)) if (droppedNativeNames.includes(native)) delete forwarded[field];
  if (body.stream === true) forwarded.stream_options = { ...body.stream_options, include_usage: true };
  return forwarded;
}

const wireFinish: Record<FinishReason['unified'], string> = {
  stop: 'stop',
  length: 'length',
  'tool-calls': 'tool_calls',
  'content-filter': 'content_filter',
  error: 'stop',
  other: 'stop',
};

const wireUsage = (usage: TokenUsage) => ({
  prompt_tokens: usage.inputTokens,
  completion_tokens: usage.outputTokens,
  total_tokens: usage.inputTokens + usage.outputTokens,
});

/** Encodes canonical events as `chat.completion.chunk` objects, in the order the real protocol sends them. */
export class ChunkEncoder {
  private readonly base: { id: string; object: 'chat.completion.chunk'; created: number; model: string };
  private started = false;

  constructor(model: string) {
    this.base = { id: `chatcmpl-${randomBytes(12).toString('base64url')}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  }

  encode(event: ChatStreamEvent): object[] {
    const chunks: object[] = [];
    const choice = (delta: object, finishReason: string | null) => ({ ...this.base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], usage: null });
    if (!this.started) {
      this.started = true;
      chunks.push(choice({ role: 'assistant', content: '', refusal: null }, null));
    }
    if (event.type === 'text-delta') chunks.push(choice({ content: event.text }, null));
    else {
      chunks.push(choice({}, wireFinish[event.finishReason.unified]));
      if (event.usage) chunks.push({ ...this.base, choices: [], usage: wireUsage(event.usage) });
    }
    return chunks;
  }
}

/** A whole `chat.completion` from a collected answer. */
export function chatCompletionOf(model: string, { text, finish }: CollectedAnswer): object {
  return {
    id: `chatcmpl-${randomBytes(12).toString('base64url')}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null, annotations: [] }, logprobs: null, finish_reason: wireFinish[finish?.finishReason.unified ?? 'other'] }],
    ...(finish?.usage ? { usage: wireUsage(finish.usage) } : {}),
  };
}
