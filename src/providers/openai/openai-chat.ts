import { imageUrlOf, type ChatMessage, type ChatRequest, type ChatStreamEvent, type FinishReason, type TokenUsage } from '../../domain/chat.ts';
import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import type { CallOptions } from '../provider-adapter.ts';
import { decodeSse, parseEventData } from '../shared/sse-decoder.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';

interface ChunkChoice {
  delta?: { content?: string | null };
  finish_reason?: string | null;
}

interface ChatCompletionChunk {
  choices?: ChunkChoice[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

const finishReasons: Record<string, FinishReason['unified']> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  content_filter: 'content-filter',
};

function openAiContent(content: ChatMessage['content']): unknown {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? { type: 'text', text: part.text } : { type: 'image_url', image_url: { url: imageUrlOf(part.image) } }));
}

export function encodeChatRequest(request: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.upstreamModel,
    messages: request.messages.map((message) => ({ role: message.role, content: openAiContent(message.content) })),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop !== undefined) body.stop = request.stop;
  if (request.seed !== undefined) body.seed = request.seed;
  return body;
}

/**
 * Chat completions over SSE, decoded into canonical events. A stream that ends without `[DONE]` was cut:
 * that is a failure, never a silent success.
 */
export async function* streamOpenAiChat(http: UpstreamHttp, request: ChatRequest, options: CallOptions): AsyncGenerator<ChatStreamEvent> {
  const response = await http.postJson(options.target, '/chat/completions', { authorization: `Bearer ${options.target.apiKey}` }, encodeChatRequest(request));
  let finish: FinishReason | undefined;
  let usage: TokenUsage | undefined;
  for await (const event of decodeSse(response.body)) {
    if (event.data === '[DONE]') {
      yield { type: 'finish', finishReason: finish ?? { unified: 'other', raw: undefined }, usage };
      return;
    }
    const chunk = parseEventData<ChatCompletionChunk>(event.data);
    if (chunk.error) throw new UpstreamUnreachableError('protocol', `the upstream reported an error mid-stream: ${chunk.error.message ?? 'unknown'}`);
    const choice = chunk.choices?.[0];
    if (choice?.delta?.content) yield { type: 'text-delta', text: choice.delta.content };
    if (choice?.finish_reason) finish = { unified: finishReasons[choice.finish_reason] ?? 'other', raw: choice.finish_reason };
    if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens ?? 0, outputTokens: chunk.usage.completion_tokens ?? 0 };
  }
  throw new UpstreamUnreachableError('protocol', 'the upstream stream ended before it was complete');
}
