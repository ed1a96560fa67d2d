import { compactContent, textOf, type ChatMessage, type ChatPart, type ChatStreamEvent, type FinishReason, type TokenUsage } from '../../domain/chat.ts';
import type { CollectedAnswer } from '../../gateway/text-generation.ts';
import { nativeParameters } from '../../catalog/capability-gate.ts';
import { midStreamFailure } from '../../domain/upstream-failure.ts';

interface Part {
  text?: unknown;
  [kind: string]: unknown;
}

/** The gamma (generateContent) request as this surface reads it; unknown fields are kept and forwarded. */
export interface GenerateContentBody {
  contents: string | Array<{ role?: string; parts?: Part[] }>;
  systemInstruction?: string | { parts?: Part[] };
  generationConfig?: Record<string, unknown>;
  tools?: unknown[];
  toolConfig?: unknown;
  safetySettings?: unknown[];
  cachedContent?: string;
  [field: string]: unknown;
}

/** generationConfig field -> native parameter name, for the capability gate. */
const generationFields: Readonly<Record<string, string>> = {
  temperature: 'temperature',
  topP: 'topP',
  topK: 'topK',
  maxOutputTokens: 'maxTokens',
  stopSequences: 'stop',
  seed: 'seed',
  responseMimeType: 'responseFormat',
  responseSchema: 'responseFormat',
  thinkingConfig: 'thinking',
  presencePenalty: 'presencePenalty',
  frequencyPenalty: 'frequencyPenalty',
};
const topLevelFields: Readonly<Record<string, string>> = { tools: 'tools', toolConfig: 'toolChoice' };

export function gatedParametersOf(body: GenerateContentBody): Record<string, unknown> {
  return { ...nativeParameters(body.generationConfig, generationFields), ...nativeParameters(body, topLevelFields) };
}

function contentOf(parts: Part[] | undefined, untranslatable: Set<string>): ChatMessage['content'] {
  const decoded: ChatPart[] = [];
  for (const part of parts ?? []) {
    const inline = part.inlineData as { mimeType?: unknown; data?: unknown } | undefined;
    const file = part.fileData as { fileUri?: unknown } | undefined;
    if (typeof part.text === 'string') decoded.push({ type: 'text', text: part.text });
    else if (typeof inline?.mimeType === 'string' && inline.mimeType.startsWith('image/') && typeof inline.data === 'string') {
      decoded.push({ type: 'image', image: { kind: 'base64', mediaType: inline.mimeType, data: inline.data } });
    } else if (typeof file?.fileUri === 'string' && /^https?:\/\//.test(file.fileUri)) {
      decoded.push({ type: 'image', image: { kind: 'url', url: file.fileUri } });
    } else untranslatable.add(`"${Object.keys(part)[0] ?? 'empty'}" parts`);
  }
  return compactContent(decoded);
}

export function decodeContents(body: GenerateContentBody): { messages: ChatMessage[]; untranslatable: string[] } {
  const untranslatable = new Set<string>();
  const messages: ChatMessage[] = [];
  if (body.systemInstruction !== undefined) {
    const system = typeof body.systemInstruction === 'string' ? body.systemInstruction : textOf(contentOf(body.systemInstruction.parts, untranslatable));
    messages.push({ role: 'system', content: system });
  }
  if (typeof body.contents === 'string') messages.push({ role: 'user', content: body.contents });
  else for (const content of body.contents) messages.push({ role: content.role === 'model' ? 'assistant' : 'user', content: contentOf(content.parts, untranslatable) });
  for (const field of ['tools', 'toolConfig', 'safetySettings', 'cachedContent'] as const) if (body[field] !== undefined) untranslatable.add(field);
  return { messages, untranslatable: [...untranslatable] };
}

/**
 * The body for an upstream of this protocol: as given, except that the string shorthands this surface
 * accepts for `contents` and `systemInstruction` are written out in the protocol's own object form.
 */
export function relayBody(body: GenerateContentBody, droppedNativeNames: readonly string[]): Record<string, unknown> {
  const forwarded: Record<string, unknown> = { ...body };
  if (typeof body.contents === 'string') forwarded.contents = [{ role: 'user', parts: [{ text: body.contents }] }];
  if (typeof body.systemInstruction === 'string') forwarded.systemInstruction = { parts: [{ text: body.systemInstruction }] };
  if (body.generationConfig) {
    const config = { ...body.generationConfig };
    for (const [field, native] of Object.entries(generationFields)) if (droppedNativeNames.includes(native)) delete config[field];
    forwarded.generationConfig = config;
  }
  for (const [field, native] of Object.entries(topLevelFields)) if (droppedNativeNames.includes(native)) delete forwarded[field];
  return forwarded;
}

const finishReasons: Record<FinishReason['unified'], string> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  'content-filter': 'SAFETY',
  'tool-calls': 'STOP',
  error: 'OTHER',
  other: 'OTHER',
};

const usageMetadata = (usage: TokenUsage | undefined) =>
  usage && { promptTokenCount: usage.inputTokens, candidatesTokenCount: usage.outputTokens, totalTokenCount: usage.inputTokens + usage.outputTokens };

/** One streamed GenerateContentResponse chunk for a canonical event. */
export function chunkOf(model: string, event: ChatStreamEvent): object {
  if (event.type === 'text-delta') return { candidates: [{ content: { role: 'model', parts: [{ text: event.text }] }, index: 0 }], modelVersion: model };
  return {
    candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: finishReasons[event.finishReason.unified], index: 0 }],
    ...(event.usage ? { usageMetadata: usageMetadata(event.usage) } : {}),
    modelVersion: model,
  };
}

/** A whole GenerateContentResponse from a collected answer. */
export function responseOf(model: string, { text, finish }: CollectedAnswer): object {
  return {
    candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: finishReasons[finish?.finishReason.unified ?? 'other'], index: 0 }],
    ...(finish?.usage ? { usageMetadata: usageMetadata(finish.usage) } : {}),
    modelVersion: model,
  };
}

/** What a translated stream sends when the upstream fails mid-way: the protocol's own error object. */
export const streamError = { error: { code: 502, message: midStreamFailure, status: 'UNAVAILABLE' } };
