import type { TokenUsage } from '../../domain/chat.ts';
import type { CallOptions, RawExchange, RelayMeter, RelayOperation, RelayRequest } from '../provider-adapter.ts';
import { jsonRelayMeter, sseRelayMeter } from '../shared/relay-meters.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { isOpenAiItself } from './openai-chat.ts';

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
  const native = isOpenAiItself(baseUrl);
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
  if (!streaming) return jsonRelayMeter<ResponsesCarrier>((answer) => ({ usage: responsesUsage(answer.usage) }));
  return sseRelayMeter<ResponsesCarrier>((reading, event, raw) => {
    // OpenAI ends a Responses stream without it; some compatible servers send it as on chat streams.
    if (raw === '[DONE]') reading.sawTerminator = true;
    if (!event) return;
    if (event.type === 'response.completed' || event.type === 'response.incomplete') reading.complete = true;
    if (event.type === 'error' || event.type === 'response.failed') reading.sawError = true;
    reading.usage = responsesUsage(event.response?.usage) ?? reading.usage;
  });
}

/** Reads `usage` from a chat completion or a Responses answer: the JSON body, or the usage-carrying event of a stream. */
export function openAiRelayMeter(operation: RelayOperation, streaming: boolean): RelayMeter {
  if (operation === 'responses') return responsesMeter(streaming);
  if (!streaming) return jsonRelayMeter<UsageCarrier>((answer) => ({ usage: usageOf(answer) }));
  return sseRelayMeter<UsageCarrier>((reading, chunk, raw) => {
    if (raw === '[DONE]') {
      reading.sawTerminator = true;
      reading.complete = true;
      return;
    }
    if (!chunk) return;
    if (chunk.error !== undefined) reading.sawError = true;
    reading.usage = usageOf(chunk) ?? reading.usage;
    if (chunk.choices?.some((choice) => choice.finish_reason)) reading.complete = true;
  });
}
