import { textOf, type ChatMessage, type ChatRequest, type ChatStreamEvent, type FinishReason, type TokenUsage } from '../../domain/chat.ts';
import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import type { CallOptions } from '../provider-adapter.ts';
import { decodeSse, parseEventData } from '../shared/sse-decoder.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';

export interface UsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export interface GenerateContentChunk {
  candidates?: Array<{ content?: { parts?: Array<{ text?: string; thought?: boolean }> }; finishReason?: string }>;
  usageMetadata?: UsageMetadata;
  error?: { code?: number; message?: string };
}

const finishReasons: Record<string, FinishReason['unified']> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content-filter',
  RECITATION: 'content-filter',
  BLOCKLIST: 'content-filter',
  PROHIBITED_CONTENT: 'content-filter',
  SPII: 'content-filter',
  MALFORMED_FUNCTION_CALL: 'error',
};

/** Billed tokens of a usageMetadata: thinking and tool-use prompt tokens are counted with output and input. */
export function usageFromMetadata(metadata: UsageMetadata): TokenUsage {
  return {
    inputTokens: (metadata.promptTokenCount ?? 0) + (metadata.toolUsePromptTokenCount ?? 0),
    outputTokens: (metadata.candidatesTokenCount ?? 0) + (metadata.thoughtsTokenCount ?? 0),
  };
}

export function geminiPath(upstreamModel: string, action: string): string {
  return `/models/${encodeURIComponent(upstreamModel)}:${action}`;
}

/** Media type of an image fetched by URL, from its file name; the protocol requires one. */
function mediaTypeOfUrl(url: string): string {
  const extension = /\.(png|jpe?g|webp|gif|heic|heif)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  return extension === 'jpg' || extension === undefined ? 'image/jpeg' : `image/${extension}`;
}

function geminiParts(content: ChatMessage['content']): object[] {
  if (typeof content === 'string') return [{ text: content }];
  return content.map((part) => {
    if (part.type === 'text') return { text: part.text };
    const image = part.image;
    return image.kind === 'base64' ? { inlineData: { mimeType: image.mediaType, data: image.data } } : { fileData: { mimeType: mediaTypeOfUrl(image.url), fileUri: image.url } };
  });
}

export function encodeGenerateContent(request: ChatRequest): Record<string, unknown> {
  const system = request.messages.filter((message) => message.role === 'system').map((message) => textOf(message.content));
  const generationConfig: Record<string, unknown> = {};
  if (request.maxTokens !== undefined) generationConfig.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) generationConfig.temperature = request.temperature;
  if (request.topP !== undefined) generationConfig.topP = request.topP;
  if (request.stop !== undefined) generationConfig.stopSequences = request.stop;
  if (request.seed !== undefined) generationConfig.seed = request.seed;
  return {
    contents: request.messages
      .filter((message) => message.role !== 'system')
      .map((message) => ({ role: message.role === 'assistant' ? 'model' : 'user', parts: geminiParts(message.content) })),
    ...(system.length > 0 ? { systemInstruction: { parts: [{ text: system.join('\n\n') }] } } : {}),
    ...(Object.keys(generationConfig).length > 0 ? { generationConfig } : {}),
  };
}

/** streamGenerateContent over SSE into canonical events; the last usageMetadata seen is the final one. */
export async function* streamGeminiContent(http: UpstreamHttp, request: ChatRequest, options: CallOptions): AsyncGenerator<ChatStreamEvent> {
  const response = await http.postJson(
    options.target,
    `${geminiPath(request.upstreamModel, 'streamGenerateContent')}?alt=sse`,
    { 'x-goog-api-key': options.target.apiKey },
    encodeGenerateContent(request),
  );
  let usage: TokenUsage | undefined;
  let finish: FinishReason | undefined;
  for await (const event of decodeSse(response.body)) {
    const chunk = parseEventData<GenerateContentChunk>(event.data);
    if (chunk.error) throw new UpstreamUnreachableError('protocol', `the upstream reported an error mid-stream: ${chunk.error.message ?? 'unknown'}`);
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) if (part.text && !part.thought) yield { type: 'text-delta', text: part.text };
    if (candidate?.finishReason) finish = { unified: finishReasons[candidate.finishReason] ?? 'other', raw: candidate.finishReason };
    if (chunk.usageMetadata) usage = usageFromMetadata(chunk.usageMetadata);
  }
  // The protocol has no terminator: a stream that closes after a finishReason is complete, otherwise it was cut.
  if (!finish) throw new UpstreamUnreachableError('protocol', 'the upstream stream ended before it was complete');
  yield { type: 'finish', finishReason: finish, usage };
}
