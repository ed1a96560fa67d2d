import { DeliveredOutput } from '../../domain/delivered-output.ts';
import type { OutputLimit } from '../../domain/output-limit.ts';
import type { WireCheck } from '../../protocols/wire-check.ts';
import type { RelayMeter, RelayReading } from '../provider-adapter.ts';
import type { StreamSplitter } from './stream-splitters.ts';
import { checkedEvent } from './wire-data.ts';

const emptyReading = (): RelayReading => ({
  usage: undefined,
  complete: false,
  sawTerminator: false,
  sawError: false,
  output: new DeliveredOutput(),
});

const nothing = new Uint8Array(0);

/** A stream's end-of-stream data that is not JSON, and whether it alone says the answer is whole. */
export interface StreamTerminator {
  data: string;
  completes: boolean;
}

/** How one protocol's stream is read: cut into events, checked, observed, and ended early. */
export interface StreamMeterRules<T> {
  split: StreamSplitter;
  check: WireCheck<T>;
  /** Reads one event into the reading: its output into `output`, its usage, whether it ends the answer. */
  observe(reading: RelayReading, event: T): void;
  /** Follows an event that was relayed: what `lengthFinish` needs of the stream so far. */
  follow?(event: T): void;
  terminator?: StreamTerminator;
  /** What ends the answer where the output limit cut it, as that protocol ends a `length` finish, in the stream's framing. */
  lengthFinish(reading: RelayReading): string;
}

/**
 * A relay meter for a stream: reads the bytes event by event as the splitter completes them (each checked
 * against the protocol and observed), and relays whole events only, holding back one not yet complete. Once
 * the output delivered has reached `limit`, the next event that would add output is not relayed: the answer
 * ends there with the protocol's length finish, and the upstream is not read further. An event that breaks
 * the protocol (or grows past the splitter's bound) throws, which ends the relay as a failure mid-stream.
 */
export function streamRelayMeter<T>(rules: StreamMeterRules<T>, { limit }: { limit: OutputLimit }): RelayMeter {
  const reading = emptyReading();
  let held: Uint8Array = nothing;
  let cut = false;

  /** Reads one whole event; false (the reading unchanged) when the limit refuses it. */
  const read = (data: string): boolean => {
    if (data === rules.terminator?.data) {
      reading.sawTerminator = true;
      if (rules.terminator.completes) reading.complete = true;
      return true;
    }
    const event = checkedEvent(data, rules.check);
    // Only an event read past the limit may have to be taken back.
    const before = limit.reached ? { ...reading } : undefined;
    const mark = reading.output.mark();
    rules.observe(reading, event);
    const added = reading.output.since(mark);
    if (before && (added.text !== '' || added.charactersBeyond > 0)) {
      Object.assign(reading, before);
      reading.output.rewind(mark);
      return false;
    }
    limit.add(added.text, added.charactersBeyond);
    if (reading.usage) limit.report(reading.usage.outputTokens);
    rules.follow?.(event);
    return true;
  };

  return {
    push: (chunk) => {
      if (cut) return nothing;
      const events = rules.split(chunk);
      const bytes = held.length === 0 ? chunk : Buffer.concat([held, chunk]);
      const shift = bytes.length - chunk.length;
      let relayed = 0;
      for (const { data, end } of events) {
        if (data !== undefined && !read(data)) {
          cut = true;
          held = nothing;
          return bytes.subarray(0, relayed);
        }
        relayed = end + shift;
      }
      held = bytes.subarray(relayed);
      return bytes.subarray(0, relayed);
    },
    end: () => {
      if (cut) {
        reading.complete = true;
        return Buffer.from(rules.lengthFinish(reading));
      }
      // What follows the last whole event (an event the upstream never ended) is passed on as it came.
      const rest = held;
      held = nothing;
      return rest;
    },
    get cut() {
      return cut;
    },
    reading: () => ({ ...reading }),
  };
}

/**
 * A relay meter for a JSON answer, relayed once whole. An answer that follows the protocol is complete
 * unless `interpret` says otherwise; one that does not is never complete. An answer whose output is past
 * `limit` (by its reported usage, else by the gateway's count) is relayed as a length finish (`lengthFinished`
 * marks it so; its content is passed through as it came).
 */
export function jsonRelayMeter<T>(
  check: WireCheck<T>,
  interpret: (answer: T) => Partial<RelayReading>,
  { limit, lengthFinished }: { limit: OutputLimit; lengthFinished: (answer: T) => object },
): RelayMeter {
  const chunks: Uint8Array[] = [];
  // The answer's bytes, joined once: read by the parse and relayed as they are.
  let joined: Buffer | undefined;
  const whole = () => {
    joined ??= Buffer.concat(chunks);
    return joined;
  };
  let answer: { value: T | undefined } | undefined;
  const parsed = (): T | undefined => {
    if (!answer) {
      let value: unknown;
      try {
        value = JSON.parse(whole().toString('utf8'));
      } catch {
        value = undefined;
      }
      answer = { value: check(value) ? value : undefined };
    }
    return answer.value;
  };
  const readingOf = (value: T | undefined): RelayReading =>
    value === undefined ? emptyReading() : { ...emptyReading(), complete: true, ...interpret(value) };
  return {
    push: (chunk) => {
      chunks.push(chunk);
      return nothing;
    },
    end: () => {
      const value = parsed();
      if (value === undefined) return whole();
      const reading = readingOf(value);
      if (reading.usage) limit.report(reading.usage.outputTokens);
      else limit.add(reading.output.text, reading.output.charactersBeyond);
      if (limit.delivered <= limit.maxTokens) return whole();
      return Buffer.from(JSON.stringify(lengthFinished(value)));
    },
    cut: false,
    reading: () => readingOf(parsed()),
  };
}
