import { countTextTokens } from '../billing/token-estimate.ts';
import type { ChatStreamEvent } from '../domain/chat.ts';
import { OutputLimit } from '../domain/output-limit.ts';
import type { RelayMeter } from '../providers/provider-adapter.ts';
import type { MeterLimit } from './metered.ts';
import { asUpstreamFailure } from './upstream-reading.ts';

/** The held output limit, counted with the gateway's own estimate of each piece of text as it is delivered. */
export function heldOutputLimit(maxTokens: number): OutputLimit {
  return new OutputLimit(maxTokens, countTextTokens);
}

/** The output a canonical event delivers: its text, or a tool call's name or argument text. */
function outputOf(event: ChatStreamEvent): string {
  if (event.type === 'text-delta') return event.text;
  if (event.type === 'tool-call-start') return event.name;
  if (event.type === 'tool-call-delta') return event.arguments;
  return '';
}

const lengthFinish: ChatStreamEvent = {
  type: 'finish',
  finishReason: { unified: 'length', raw: undefined },
  usage: undefined,
};

/**
 * The held output limit on canonical events: output passes until what was delivered reaches `maxTokens`; the
 * answer then ends as a `length` finish, which every surface writes as its own (usage left to the gateway's count).
 */
export function chatEventLimit(maxTokens: number): MeterLimit<ChatStreamEvent> {
  const limit = heldOutputLimit(maxTokens);
  return {
    admits: (event) => {
      const output = outputOf(event);
      if (output === '') return true;
      if (limit.reached) return false;
      limit.add(output);
      return true;
    },
    ending: () => [lengthFinish],
  };
}

/**
 * A relayed answer as its meter lets it through: whole events, none past the output limit. Once the limit
 * ends the answer, the upstream is let go of (its exchange closed) and the meter's length finish is relayed;
 * an answer that breaks its protocol ends as an upstream failure.
 */
export async function* relayedWithin(source: AsyncIterable<Uint8Array>, meter: RelayMeter): AsyncGenerator<Uint8Array> {
  let rest: Uint8Array;
  try {
    for await (const chunk of source) {
      const relayed = meter.push(chunk);
      if (relayed.length > 0) yield relayed;
      if (meter.cut) break;
    }
    rest = meter.end();
  } catch (error) {
    throw asUpstreamFailure(error);
  }
  if (rest.length > 0) yield rest;
}
