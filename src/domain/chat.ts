/** The canonical chat model every surface decodes into and every provider adapter encodes from. */
export type ChatRole = 'system' | 'user' | 'assistant';

export type ImageSource = { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };

export type ChatPart = { type: 'text'; text: string } | { type: 'image'; image: ImageSource };

/** Plain text, or ordered parts when the message carries images. */
export interface ChatMessage {
  role: ChatRole;
  content: string | readonly ChatPart[];
}

export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** Text-only parts become one string; otherwise the parts stay as they are, in order. */
export function compactContent(parts: readonly ChatPart[]): ChatMessage['content'] {
  return parts.every((part) => part.type === 'text') ? parts.map((part) => (part as { text: string }).text).join('') : parts;
}

export function imagesIn(messages: readonly ChatMessage[]): number {
  return messages.reduce((count, message) => count + (typeof message.content === 'string' ? 0 : message.content.filter((part) => part.type === 'image').length), 0);
}

/** `data:<type>;base64,<data>` URLs are inline images; anything else is fetched by the provider. */
export function imageFromUrl(url: string): ImageSource {
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return inline ? { kind: 'base64', mediaType: inline[1]!, data: inline[2]! } : { kind: 'url', url };
}

export function imageUrlOf(image: ImageSource): string {
  return image.kind === 'url' ? image.url : `data:${image.mediaType};base64,${image.data}`;
}

export interface ChatRequest {
  /** The upstream model id the catalog rewrote the client's model to. */
  upstreamModel: string;
  messages: readonly ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: readonly string[];
  seed?: number;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export type UnifiedFinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

/** The provider's own reason is kept next to the unified one, so a surface of the same protocol can pass it on unmapped. */
export interface FinishReason {
  unified: UnifiedFinishReason;
  raw: string | undefined;
}

export type ChatStreamEvent =
  | { type: 'text-delta'; text: string }
  | { type: 'finish'; finishReason: FinishReason; usage: TokenUsage | undefined };
