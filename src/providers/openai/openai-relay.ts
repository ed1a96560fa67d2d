import { createParser } from 'eventsource-parser';
import type { TokenUsage } from '../../domain/chat.ts';
import type { CallOptions, RawExchange, RelayMeter, RelayOperation, RelayReading, RelayRequest } from '../provider-adapter.ts';
import { JsonCopy } from '../shared/json-copy.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';

const paths: Partial<Record<RelayOperation, string>> = { 'chat-completions': '/chat/completions' };

interface UsageCarrier {
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  choices?: Array<{ finish_reason?: string | null }>;
  error?: unknown;
}

function usageOf(carrier: UsageCarrier): TokenUsage | undefined {
  const usage = carrier.usage;
  return usage ? { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 } : undefined;
}

/**
 * The `provider` routing object is meant for OpenAI-compatible routing providers; OpenAI itself refuses
 * unknown request fields, so it is left out there.
 */
function forUpstream(baseUrl: string, body: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  if (!('provider' in body) || new URL(baseUrl).hostname !== 'api.openai.com') return body;
  const { provider: _routing, ...rest } = body;
  return rest;
}

export async function relayOpenAi(http: UpstreamHttp, { operation, body }: RelayRequest, options: CallOptions): Promise<RawExchange> {
  const path = paths[operation];
  if (!path) throw new Error(`the OpenAI protocol has no ${operation} operation`);
  const response = await http.postJson(options.target, path, { authorization: `Bearer ${options.target.apiKey}` }, forUpstream(options.target.baseUrl, body), options.signal);
  const contentType = response.headers['content-type'];
  return { status: response.status, contentType: Array.isArray(contentType) ? contentType[0] : contentType, body: response.body };
}

/** Reads `usage` from a chat completion: the JSON body, or the usage chunk of a stream. */
export function openAiRelayMeter(_operation: RelayOperation, streaming: boolean): RelayMeter {
  const state: RelayReading = { usage: undefined, complete: false, sawTerminator: false, sawError: false };
  if (streaming) {
    const parser = createParser({
      onEvent: (event) => {
        if (event.data === '[DONE]') {
          state.sawTerminator = true;
          state.complete = true;
          return;
        }
        try {
          const chunk = JSON.parse(event.data) as UsageCarrier;
          if (chunk.error !== undefined) state.sawError = true;
          state.usage = usageOf(chunk) ?? state.usage;
          if (chunk.choices?.some((choice) => choice.finish_reason)) state.complete = true;
        } catch {
          // A malformed event is relayed as it came; it carries no usage.
        }
      },
    });
    const decoder = new TextDecoder();
    return { push: (chunk) => parser.feed(decoder.decode(chunk, { stream: true })), reading: () => ({ ...state }) };
  }
  const copy = new JsonCopy();
  return {
    push: (chunk) => copy.push(chunk),
    reading: () => {
      const answer = copy.parse() as UsageCarrier | undefined;
      return { ...state, usage: answer && usageOf(answer), complete: answer !== undefined };
    },
  };
}
