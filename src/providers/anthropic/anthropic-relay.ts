import {
  blockName,
  deltaOutput,
  isKnownStreamEvent,
  isMessage,
  isMessagesStreamEvent,
  messagesReadServerInput,
  streamUsageAfter,
  usageOf,
  type MessagesUsage,
} from '../../protocols/anthropic/messages.ts';
import type {
  CallOptions,
  RawExchange,
  RelayMeter,
  RelayMeterOptions,
  RelayOperation,
  RelayRequest,
} from '../provider-adapter.ts';
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
  const response = await http.postJson(options.target, {
    path: '/messages',
    headers: anthropicHeaders(options.target, options.headers),
    body,
  });
  return {
    ...(await checkedRelay(
      response,
      { answer: isMessage, event: isMessagesStreamEvent, what: 'a message' },
      body.stream === true ? { split: sseSplitter(options.target.maxEventCharacters), meteredHead: true } : undefined,
    )),
    ...(messagesReadServerInput(body) ? { unseenInput: true } : {}),
  };
}

/** A named SSE event as the protocol writes it. */
const namedEvent = (payload: { type: string }) => `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`;

/** Usage of a messages answer: the JSON body's `usage`, or message_start (input) and the last message_delta (output). */
export function anthropicRelayMeter(
  _operation: RelayOperation,
  { streaming, maxEventCharacters, limit, servedAs, whole }: RelayMeterOptions,
): RelayMeter {
  if (!streaming)
    return jsonRelayMeter(isMessage, (answer) => ({ usage: usageOf(answer.usage) }), {
      limit,
      servedAs,
      alreadyRead: whole,
      lengthFinished: (answer) => ({ ...answer, stop_reason: 'max_tokens', stop_sequence: null }),
    });
  // The content block still open, which a cut stream closes before its end.
  let openBlock: number | undefined;
  // The stream's usage reports merged so far: message_delta's may leave out counts message_start gave.
  let reported: MessagesUsage = {};
  return streamRelayMeter(
    {
      split: sseSplitter(maxEventCharacters),
      check: isMessagesStreamEvent,
      observe: (reading, event) => {
        if (!isKnownStreamEvent(event)) return;
        const report =
          event.type === 'message_start'
            ? event.message.usage
            : event.type === 'message_delta'
              ? event.usage
              : undefined;
        if (report) {
          reported = streamUsageAfter(reported, report);
          reading.usage = usageOf(reported);
        } else if (event.type === 'content_block_start') {
          const name = blockName(event.content_block);
          if (name) reading.output.add(name);
        } else if (event.type === 'content_block_delta') {
          reading.output.add(deltaOutput(event.delta));
        } else if (event.type === 'message_stop') {
          reading.complete = true;
          reading.sawTerminator = true;
        } else if (event.type === 'error') {
          reading.sawError = true;
        }
      },
      follow: (event) => {
        if (isKnownStreamEvent(event) && event.type === 'content_block_start') openBlock = event.index ?? 0;
        else if (event.type === 'content_block_stop') openBlock = undefined;
      },
      lengthFinish: () =>
        [
          ...(openBlock !== undefined ? [{ type: 'content_block_stop', index: openBlock }] : []),
          {
            type: 'message_delta',
            delta: { stop_reason: 'max_tokens', stop_sequence: null },
            usage: { output_tokens: limit.delivered },
          },
          { type: 'message_stop' },
        ]
          .map(namedEvent)
          .join(''),
    },
    { limit, servedAs },
  );
}
