import type { TokenUsage } from '../../domain/chat.ts';
import { isMessage, isMessagesStreamEvent, usageOf } from '../../protocols/anthropic/messages.ts';
import type { CallOptions, RawExchange, RelayMeter, RelayOperation, RelayRequest } from '../provider-adapter.ts';
import { checkedRelay } from '../shared/checked-relay.ts';
import { jsonRelayMeter, streamRelayMeter } from '../shared/relay-meters.ts';
import { sseSplitter } from '../shared/stream-splitters.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { anthropicHeaders } from './anthropic-messages.ts';

export async function relayAnthropic(http: UpstreamHttp, { operation, body }: RelayRequest, options: CallOptions): Promise<RawExchange> {
  if (operation !== 'messages') throw new Error(`the Anthropic protocol has no ${operation} operation`);
  const response = await http.postJson(options.target, '/messages', anthropicHeaders(options.target, options.headers), body);
  return checkedRelay(response, { answer: isMessage, event: isMessagesStreamEvent, what: 'a message' }, body.stream === true ? sseSplitter() : undefined);
}

/** Usage of a messages answer: the JSON body's `usage`, or message_start (input) and the last message_delta (output). */
export function anthropicRelayMeter(_operation: RelayOperation, streaming: boolean): RelayMeter {
  if (!streaming) return jsonRelayMeter(isMessage, (answer) => ({ usage: usageOf(answer.usage) }));
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  return streamRelayMeter(sseSplitter(), isMessagesStreamEvent, (reading, event) => {
    if (event.type === 'message_start' && event.message?.usage) {
      usage.inputTokens = event.message.usage.input_tokens ?? 0;
      usage.outputTokens = event.message.usage.output_tokens ?? 0;
      reading.usage = { ...usage };
    } else if (event.type === 'message_delta' && event.usage) {
      if (typeof event.usage.output_tokens === 'number') usage.outputTokens = event.usage.output_tokens;
      if (typeof event.usage.input_tokens === 'number') usage.inputTokens = event.usage.input_tokens;
      reading.usage = { ...usage };
    } else if (event.type === 'content_block_start' && event.content_block?.name) {
      reading.output += event.content_block.name;
    } else if (event.type === 'content_block_delta' && event.delta) {
      reading.output += event.delta.text ?? event.delta.partial_json ?? '';
    } else if (event.type === 'message_stop') {
      reading.complete = true;
      reading.sawTerminator = true;
    } else if (event.type === 'error') {
      reading.sawError = true;
    }
  });
}
