import type { ChatRequest, ChatStreamEvent } from '../domain/chat.ts';
import type { Protocol } from '../domain/protocols.ts';

/** Where and how to reach one configured provider; passed in, never read by the adapter from anywhere else. */
export interface ProviderTarget {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  headers: Readonly<Record<string, string>>;
}

export interface CallOptions {
  target: ProviderTarget;
  signal?: AbortSignal;
}

/** What a provider family offers for text; one stream of canonical events ending in a `finish`. */
export interface TextAdapter {
  streamChat(request: ChatRequest, options: CallOptions): AsyncIterable<ChatStreamEvent>;
}

export interface ProviderAdapter {
  protocol: Protocol;
  text?: TextAdapter;
}

export type AdapterRegistry = ReadonlyMap<Protocol, ProviderAdapter>;
