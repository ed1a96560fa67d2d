import { createParser } from 'eventsource-parser';
import type { TokenUsage } from '../../domain/chat.ts';
import type { CallOptions, RawExchange, RelayMeter, RelayOperation, RelayReading, RelayRequest } from '../provider-adapter.ts';
import { JsonCopy } from '../shared/json-copy.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';

const paths: Partial<Record<RelayOperation, string>> = { 'chat-completions': '/chat/completions', responses: '/responses' };

interface UsageCarrier {
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  choices?: Array<{ finish_reason?: string | null }>;
  error?: unknown;
}

function usageOf(carrier: UsageCarrier): TokenUsage | undefined {
  const usage = carrier.usage;
  return usage ? { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 } : undefined;
}

/** Responses fields only OpenAI itself keeps: compatible upstreams do not store responses or reason that way. */
const nativeOnlyResponsesFields = ['store', 'reasoning', 'include', 'previous_response_id'];

/**
 * What OpenAI itself and OpenAI-compatible upstreams each accept. The `provider` routing object is meant for
 * routing providers; OpenAI refuses unknown fields. The Responses API's stateful and reasoning fields, and
 * tools other than functions, are OpenAI's own.
 */
function forUpstream(operation: RelayOperation, baseUrl: string, body: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  const native = new URL(baseUrl).hostname === 'api.openai.com';
  const forwarded: Record<string, unknown> = { ...body };
  if (native) {
    delete forwarded.provider;
    return forwarded;
  }
  if (operation === 'responses') {
    for (const field of nativeOnlyResponsesFields) delete forwarded[field];
    if (Array.isArray(body.tools)) forwarded.tools = body.tools.filter((tool) => (tool as { type?: unknown } | null)?.type === 'function');
  }
  return forwarded;
}

export async function relayOpenAi(http: UpstreamHttp, { operation, body }: RelayRequest, options: CallOptions): Promise<RawExchange> {
  const path = paths[operation];
  if (!path) throw new Error(`the OpenAI protocol has no ${operation} operation`);
  const response = await http.postJson(options.target, path, { authorization: `Bearer ${options.target.apiKey}` }, forUpstream(operation, options.target.baseUrl, body));
  const contentType = response.headers['content-type'];
  return { status: response.status, contentType: Array.isArray(contentType) ? contentType[0] : contentType, body: response.body };
}

interface ResponsesCarrier {
  type?: string;
  usage?: { input_tokens?: number; output_tokens?: number } | null;
  response?: { usage?: { input_tokens?: number; output_tokens?: number } | null };
}

const responsesUsage = (usage: ResponsesCarrier['usage']): TokenUsage | undefined =>
  usage ? { inputTokens: usage.input_tokens ?? 0, outputTokens: usage.output_tokens ?? 0 } : undefined;

/** Reads usage from a Responses answer: the JSON body, or the terminal event of a stream. */
function responsesMeter(streaming: boolean): RelayMeter {
  const state: RelayReading = { usage: undefined, complete: false, sawTerminator: false, sawError: false };
  if (!streaming) {
    const copy = new JsonCopy();
    return {
      push: (chunk) => copy.push(chunk),
      reading: () => {
        const answer = copy.parse() as ResponsesCarrier | undefined;
        return { ...state, usage: answer && responsesUsage(answer.usage), complete: answer !== undefined };
      },
    };
  }
  const parser = createParser({
    onEvent: (event) => {
      let carrier: ResponsesCarrier;
      try {
        carrier = JSON.parse(event.data) as ResponsesCarrier;
      } catch {
        return;
      }
      if (carrier.type === 'response.completed' || carrier.type === 'response.incomplete') state.complete = true;
      if (carrier.type === 'error' || carrier.type === 'response.failed') state.sawError = true;
      state.usage = responsesUsage(carrier.response?.usage) ?? state.usage;
    },
  });
  const decoder = new TextDecoder();
  return { push: (chunk) => parser.feed(decoder.decode(chunk, { stream: true })), reading: () => ({ ...state }) };
}

/** Reads `usage` from a chat completion or a Responses answer: the JSON body, or the usage-carrying event of a stream. */
export function openAiRelayMeter(operation: RelayOperation, streaming: boolean): RelayMeter {
  if (operation === 'responses') return responsesMeter(streaming);
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
