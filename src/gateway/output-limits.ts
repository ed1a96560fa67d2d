import { countTextTokens } from '../domain/tokenizer.ts';
import type { ChatStreamEvent, FinishReason, TokenUsage } from '../domain/chat.ts';
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

/**
 * The held output limit on canonical events: output passes until what was delivered reaches `maxTokens`; the
 * answer then ends as a `length` finish, which every surface writes as its own, with the usage `usageAtLimit` counts.
 * Every other choice that delivered output and had not finished ends there too (a `choice-finish` of `length`):
 * a client's SDK wants a finish for each choice it was sent, and OpenAI's refuses a stream without one.
 * Log probabilities pass for as many tokens as are held.
 */
export function chatEventLimit(maxTokens: number, usageAtLimit: () => TokenUsage): MeterLimit<ChatStreamEvent> {
  const limit = heldOutputLimit(maxTokens);
  // A log probability is one token's: an upstream that sends more than the tokens held is not believed past them.
  let logprobs = 0;
  // The choices after the first that delivered something and have not finished.
  const open = new Set<number>();
  const underLimit = (event: ChatStreamEvent): boolean => {
    if (event.type === 'logprobs') {
      logprobs += event.tokens.length;
      return logprobs <= maxTokens;
    }
    const output = outputOf(event);
    if (output === '') return true;
    if (limit.reached) return false;
    limit.add(output);
    return true;
  };
  return {
    admits: (event) => {
      if (!underLimit(event)) return false;
      if (event.type === 'choice-finish') open.delete(event.choice);
      else if (event.type !== 'finish' && event.choice !== undefined) open.add(event.choice);
      return true;
    },
    // The upstream said nothing of the usage of an answer ended here: the client is told the gateway's count,
    // which is what is billed.
    ending: () => [
      ...[...open]
        .sort((a, b) => a - b)
        .map((choice): ChatStreamEvent => ({ type: 'choice-finish', choice, finishReason: lengthFinish })),
      { type: 'finish', finishReason: lengthFinish, usage: usageAtLimit() },
    ],
  };
}

const lengthFinish: FinishReason = { unified: 'length', raw: undefined };

/**
 * A relayed answer as its meter lets it through: whole events, none past the output limit. Once the limit
 * ends the answer, the upstream is let go of (its exchange closed) and the meter's length finish is relayed;
 * an answer that breaks its protocol ends as an upstream failure. A plain iterator, not a generator: each
 * chunk takes one step through it.
 */
export function relayedWithin(source: AsyncIterable<Uint8Array>, meter: RelayMeter): AsyncIterable<Uint8Array> {
  return { [Symbol.asyncIterator]: () => new MeteredRelay(source[Symbol.asyncIterator](), meter) };
}

const finished: IteratorReturnResult<undefined> = { done: true, value: undefined };

class MeteredRelay implements AsyncIterator<Uint8Array> {
  private over = false;

  constructor(
    private readonly source: AsyncIterator<Uint8Array>,
    private readonly meter: RelayMeter,
  ) {}

  async next(): Promise<IteratorResult<Uint8Array>> {
    if (this.over) return finished;
    try {
      while (!this.meter.cut) {
        const next = await this.source.next();
        if (next.done) break;
        let relayed: Uint8Array;
        try {
          relayed = this.meter.push(next.value);
        } catch (error) {
          await this.source.return?.();
          throw error;
        }
        if (this.meter.cut) await this.source.return?.();
        if (relayed.length > 0) return { done: false, value: relayed };
      }
      this.over = true;
      const rest = this.meter.end();
      return rest.length > 0 ? { done: false, value: rest } : finished;
    } catch (error) {
      this.over = true;
      throw asUpstreamFailure(error);
    }
  }

  async return(): Promise<IteratorResult<Uint8Array>> {
    if (!this.over) {
      this.over = true;
      await this.source.return?.();
    }
    return finished;
  }
}
