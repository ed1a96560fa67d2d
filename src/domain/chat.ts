/** The canonical chat model every surface decodes into and every provider adapter encodes from. */
export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  content: string;
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
