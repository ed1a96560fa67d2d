import { textOf, type ChatMessage, type ChatRequest, type ChatStreamEvent, type FinishReason, type TokenUsage } from '../../domain/chat.ts';
import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import type { CallOptions, ProviderTarget } from '../provider-adapter.ts';
import { decodeSse, parseEventData } from '../shared/sse-decoder.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';

/** The protocol version sent when the client did not choose one (the official SDKs send this value). */
export const defaultAnthropicVersion = '2023-06-01';
/** The protocol requires max_tokens; this is used when the client set none. */
const defaultMaxTokens = 4096;

const finishReasons: Record<string, FinishReason['unified']> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
};

export function anthropicHeaders(target: ProviderTarget, clientHeaders: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    'x-api-key': target.apiKey,
    'anthropic-version': clientHeaders['anthropic-version'] ?? defaultAnthropicVersion,
    ...(clientHeaders['anthropic-beta'] ? { 'anthropic-beta': clientHeaders['anthropic-beta'] } : {}),
  };
}

function anthropicContent(content: ChatMessage['content']): unknown {
  if (typeof content === 'string') return content;
  return content.map((part) => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    const source = part.image.kind === 'url' ? { type: 'url', url: part.image.url } : { type: 'base64', media_type: part.image.mediaType, data: part.image.data };
    return { type: 'image', source };
  });
}

export function encodeMessagesRequest(request: ChatRequest): Record<string, unknown> {
  const system = request.messages.filter((message) => message.role === 'system').map((message) => textOf(message.content));
  const body: Record<string, unknown> = {
    model: request.upstreamModel,
    max_tokens: request.maxTokens ?? defaultMaxTokens,
    messages: request.messages.filter((message) => message.role !== 'system').map((message) => ({ role: message.role, content: anthropicContent(message.content) })),
    stream: true,
  };
  if (system.length > 0) body.system = system.join('\n\n');
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop !== undefined) body.stop_sequences = request.stop;
  return body;
}

interface StreamEvent {
  type?: string;
  message?: { usage?: { input_tokens?: number; output_tokens?: number } };
  delta?: { type?: string; text?: string; stop_reason?: string | null };
  usage?: { input_tokens?: number | null; output_tokens?: number };
  error?: { type?: string; message?: string };
}

/** Messages over SSE, decoded into canonical events: input tokens from message_start, output from the last message_delta. */
export async function* streamAnthropicMessages(http: UpstreamHttp, request: ChatRequest, options: CallOptions): AsyncGenerator<ChatStreamEvent> {
  const response = await http.postJson(options.target, '/messages', anthropicHeaders(options.target), encodeMessagesRequest(request));
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  let sawUsage = false;
  let finish: FinishReason = { unified: 'other', raw: undefined };
  for await (const message of decodeSse(response.body)) {
    const event = parseEventData<StreamEvent>(message.data);
    switch (event.type) {
      case 'message_start':
        usage.inputTokens = event.message?.usage?.input_tokens ?? 0;
        usage.outputTokens = event.message?.usage?.output_tokens ?? 0;
        sawUsage = event.message?.usage !== undefined;
        break;
      case 'content_block_delta':
        if (event.delta?.type === 'text_delta' && event.delta.text) yield { type: 'text-delta', text: event.delta.text };
        break;
      case 'message_delta':
        if (event.delta?.stop_reason) finish = { unified: finishReasons[event.delta.stop_reason] ?? 'other', raw: event.delta.stop_reason };
        if (event.usage?.output_tokens !== undefined) usage.outputTokens = event.usage.output_tokens;
        if (typeof event.usage?.input_tokens === 'number') usage.inputTokens = event.usage.input_tokens;
        sawUsage ||= event.usage !== undefined;
        break;
      case 'message_stop':
        yield { type: 'finish', finishReason: finish, usage: sawUsage ? usage : undefined };
        return;
      case 'error':
        throw new UpstreamUnreachableError('protocol', `the upstream reported an error mid-stream: ${event.error?.message ?? 'unknown'}`);
    }
  }
  throw new UpstreamUnreachableError('protocol', 'the upstream stream ended before it was complete');
}
