import type { TokenUsage } from '../../domain/chat.ts';
import type { CallOptions, RawExchange, RelayMeter, RelayOperation, RelayRequest } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { jsonRelayMeter, sseRelayMeter } from '../shared/relay-meters.ts';
import { anthropicHeaders } from './anthropic-messages.ts';

export async function relayAnthropic(http: UpstreamHttp, { operation, body }: RelayRequest, options: CallOptions): Promise<RawExchange> {
  if (operation !== 'messages') throw new Error(`the Anthropic protocol has no ${operation} operation`);
  const response = await http.postJson(options.target, '/messages', anthropicHeaders(options.target, options.headers), body);
  const contentType = response.headers['content-type'];
  return { status: response.status, contentType: Array.isArray(contentType) ? contentType[0] : contentType, body: response.body };
}

interface Carrier {
  type?: string;
  message?: { usage?: { input_tokens?: number; output_tokens?: number } };
  usage?: { input_tokens?: number | null; output_tokens?: number };
}

/** Usage of a messages answer: the JSON body's `usage`, or message_start (input) and the last message_delta (output). */
export function anthropicRelayMeter(_operation: RelayOperation, streaming: boolean): RelayMeter {
  if (!streaming) {
    return jsonRelayMeter<{ usage?: { input_tokens?: number; output_tokens?: number } }>((answer) => ({
      usage: answer.usage && { inputTokens: answer.usage.input_tokens ?? 0, outputTokens: answer.usage.output_tokens ?? 0 },
    }));
  }
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  return sseRelayMeter<Carrier>((reading, carrier) => {
    if (!carrier) return;
    if (carrier.type === 'message_start' && carrier.message?.usage) {
      usage.inputTokens = carrier.message.usage.input_tokens ?? 0;
      usage.outputTokens = carrier.message.usage.output_tokens ?? 0;
      reading.usage = { ...usage };
    } else if (carrier.type === 'message_delta' && carrier.usage) {
      if (typeof carrier.usage.output_tokens === 'number') usage.outputTokens = carrier.usage.output_tokens;
      if (typeof carrier.usage.input_tokens === 'number') usage.inputTokens = carrier.usage.input_tokens;
      reading.usage = { ...usage };
    } else if (carrier.type === 'message_stop') {
      reading.complete = true;
      reading.sawTerminator = true;
    } else if (carrier.type === 'error') {
      reading.sawError = true;
    }
  });
}
