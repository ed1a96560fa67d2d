import { isMessage, isMessagesStreamEvent, streamUsageAfter, usageOf } from '../../protocols/anthropic/messages.ts';
import type { CallOptions, RawExchange, RelayMeter, RelayOperation, RelayRequest } from '../provider-adapter.ts';
import { checkedRelay } from '../shared/checked-relay.ts';
import { jsonRelayMeter, streamRelayMeter } from '../shared/relay-meters.ts';
import { sseSplitter } from '../shared/stream-splitters.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { anthropicHeaders } from './anthropic-messages.ts';

export async function relayAnthropic(
  http: UpstreamHttp,
  { operation, body }: RelayRequest,
  options: CallOptions,
): Promise<RawExchange> {
  if (operation !== 'messages') throw new Error(`the Anthropic protocol has no ${operation} operation`);
  const response = await http.postJson(
    options.target,
    '/messages',
    anthropicHeaders(options.target, options.headers),
    body,
  );
  return checkedRelay(
    response,
    { answer: isMessage, event: isMessagesStreamEvent, what: 'a message' },
    body.stream === true ? sseSplitter(options.target.maxEventCharacters) : undefined,
  );
}

/** Usage of a messages answer: the JSON body's `usage`, or message_start (input) and the last message_delta (output). */
export function anthropicRelayMeter(
  _operation: RelayOperation,
  streaming: boolean,
  maxEventCharacters: number,
): RelayMeter {
  if (!streaming) return jsonRelayMeter(isMessage, (answer) => ({ usage: usageOf(answer.usage) }));
  return streamRelayMeter(sseSplitter(maxEventCharacters), isMessagesStreamEvent, (reading, event) => {
    const report =
      event.type === 'message_start' ? event.message?.usage : event.type === 'message_delta' ? event.usage : undefined;
    if (report) reading.usage = streamUsageAfter(reading.usage ?? { inputTokens: 0, outputTokens: 0 }, report);
    else if (event.type === 'content_block_start' && event.content_block?.name) {
      reading.output.add(event.content_block.name);
    } else if (event.type === 'content_block_delta' && event.delta) {
      reading.output.add(event.delta.text ?? event.delta.partial_json ?? '');
    } else if (event.type === 'message_stop') {
      reading.complete = true;
      reading.sawTerminator = true;
    } else if (event.type === 'error') {
      reading.sawError = true;
    }
  });
}
