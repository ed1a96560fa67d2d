import { DeliveredOutput } from '../../domain/delivered-output.ts';
import type { OutputLimit } from '../../domain/output-limit.ts';
import type { WireCheck } from '../../protocols/wire-check.ts';
import type { RelayMeter, RelayReading, ServedModel } from '../provider-adapter.ts';
import { JsonCopy, type ReadJson } from './json-copy.ts';
import {
  type MemberSplice as Splice,
  nameServedModel,
  type RenamedField,
  sseDataStart,
  topLevelSplicer,
} from './served-model.ts';
import type { StreamSplitter } from './stream-splitters.ts';
import { bodyBytes } from './upstream-http.ts';
import { checkedEvent } from './wire-data.ts';

const emptyReading = (): RelayReading => ({
  usage: undefined,
  complete: false,
  sawTerminator: false,
  sawError: false,
  output: new DeliveredOutput(),
  lastSequenceNumber: undefined,
});

const nothing = new Uint8Array(0);

/**
 * The first `upTo` bytes with each splice's range replaced (splices in order, none overlapping), copied once
 * into one buffer; without splices, the bytes themselves.
 */
function spliced(bytes: Buffer, upTo: number, splices: readonly Splice[]): Uint8Array {
  if (splices.length === 0) return bytes.subarray(0, upTo);
  let size = upTo;
  for (const { length, replacement } of splices) size += replacement.length - length;
  const out = Buffer.allocUnsafe(size);
  let from = 0;
  let written = 0;
  for (const { at, length, replacement } of splices) {
    written += bytes.copy(out, written, from, at);
    out.set(replacement, written);
    written += replacement.length;
    from = at + length;
  }
  bytes.copy(out, written, from, upTo);
  return out;
}

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

/** An event read whose model fields were set to the served model: the event as it now is, and the fields changed. */
interface RenamedEvent {
  event: unknown;
  renamed: readonly RenamedField[];
}

/**
 * An event's data written again whole, from the event as read. Data sent on several `data:` lines (which a
 * client joins) is not found whole in the bytes: the event is written with its data on the first data line and
 * its other lines (`event:`, `id:`, comments) as they were.
 */
function withDataWritten(bytes: Uint8Array, data: string, event: unknown): Uint8Array {
  const text = bodyBytes(bytes).toString('utf8');
  const written = JSON.stringify(event);
  const at = text.indexOf(data);
  if (at !== -1) return Buffer.from(text.slice(0, at) + written + text.slice(at + data.length));
  let dataWritten = false;
  const lines = text.split(/\r\n|\r|\n/).flatMap((line) => {
    if (!/^data(:|$)/.test(line)) return [line];
    if (dataWritten) return [];
    dataWritten = true;
    return [`data: ${written}`];
  });
  return Buffer.from(lines.join('\n'));
}

/**
 * A relay meter for a stream: reads the bytes event by event as the splitter completes them (each checked
 * against the protocol and observed), and relays whole events only, holding back one not yet complete. Once
 * the output delivered has reached `limit`, the next event that would add output is not relayed: the answer
 * ends there with the protocol's length finish, and the upstream is not read further. An event that breaks
 * the protocol (or grows past the splitter's bound) throws, which ends the relay as a failure mid-stream. An
 * event that names a model other than `servedAs` is relayed naming it (read once, written again); every other
 * byte passes as it came.
 */
export function streamRelayMeter<T>(
  rules: StreamMeterRules<T>,
  { limit, servedAs }: { limit: OutputLimit; servedAs?: ServedModel | undefined },
): RelayMeter {
  const reading = emptyReading();
  let held: Uint8Array = nothing;
  let cut = false;
  const splice = servedAs && topLevelSplicer(servedAs);

  /**
   * Reads one whole event: false (the reading unchanged) when the limit refuses it, true when it is relayed as
   * it came, the event renamed when it is relayed naming the served model.
   */
  const read = (data: string): boolean | RenamedEvent => {
    if (data === rules.terminator?.data) {
      reading.sawTerminator = true;
      if (rules.terminator.completes) reading.complete = true;
      return true;
    }
    const event = checkedEvent(data, rules.check);
    // Named before it is observed and followed, so that a length finish repeating it names the served model too.
    const renamed = servedAs === undefined ? [] : nameServedModel(event, servedAs);
    // Only an event read past the limit may have to be taken back; whether the limit is reached is asked (and
    // the output counted) only of an event that would add output once it may be.
    const before = limit.mayBeReached ? { ...reading } : undefined;
    const mark = reading.output.mark();
    rules.observe(reading, event);
    const added = reading.output.since(mark);
    if (before && (added.text !== '' || added.charactersBeyond > 0) && limit.reached) {
      Object.assign(reading, before);
      reading.output.rewind(mark);
      return false;
    }
    limit.add(added.text, added.charactersBeyond);
    if (reading.usage) limit.report(reading.usage.outputTokens);
    rules.follow?.(event);
    return renamed.length === 0 || { event, renamed };
  };

  return {
    push: (chunk) => {
      if (cut) return nothing;
      const events = rules.split(chunk);
      const bytes = bodyBytes(held.length === 0 ? chunk : Buffer.concat([held, chunk]));
      const shift = bytes.length - chunk.length;
      // The events written again: where each one's bytes are replaced, and by what; every other byte passes.
      const splices: Splice[] = [];
      let relayed = 0;
      for (const { data, end } of events) {
        if (data !== undefined) {
          const outcome = read(data);
          if (outcome === false) {
            cut = true;
            held = nothing;
            return spliced(bytes, relayed, splices);
          }
          if (outcome !== true) {
            // The event names the served model: its one top-level field spliced in place (a chat chunk names its
            // model in each event), else its data written again whole.
            const dataStart = sseDataStart(bytes, relayed);
            const member =
              outcome.renamed.length === 1 && dataStart !== undefined
                ? splice?.({ bytes, dataStart, data }, outcome.renamed[0]!)
                : undefined;
            splices.push(
              member ?? {
                at: relayed,
                length: end + shift - relayed,
                replacement: withDataWritten(bytes.subarray(relayed, end + shift), data, outcome.event),
              },
            );
          }
        }
        relayed = end + shift;
      }
      held = bytes.subarray(relayed);
      return spliced(bytes, relayed, splices);
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
 * marks it so; its content is passed through as it came). An answer that names a model other than `servedAs`
 * is written again naming it; any other passes byte for byte.
 */
export function jsonRelayMeter<T>(
  check: WireCheck<T>,
  interpret: (answer: T) => Partial<RelayReading>,
  {
    limit,
    lengthFinished,
    servedAs,
    alreadyRead,
  }: {
    limit: OutputLimit;
    lengthFinished: (answer: T) => object;
    servedAs?: ServedModel | undefined;
    /** The answer as its adapter read it (`RawExchange.whole`), used when the meter is given just those bytes. */
    alreadyRead?: ReadJson | undefined;
  },
): RelayMeter {
  // The answer's bytes, joined once (or as its adapter read them): parsed once and relayed as they are.
  const copy = new JsonCopy(Number.POSITIVE_INFINITY, alreadyRead);
  let answer: { value: T | undefined; renamed: readonly RenamedField[] } | undefined;
  const read = () => {
    if (!answer) {
      const value = copy.parse();
      answer = check(value)
        ? { value, renamed: servedAs === undefined ? [] : nameServedModel(value, servedAs) }
        : { value: undefined, renamed: [] };
    }
    return answer;
  };
  /** The answer as relayed: as it came, its one top-level model field spliced in place, or written again. */
  const relayed = (value: T): Uint8Array => {
    const { renamed } = read();
    const bytes = copy.bytes();
    if (renamed.length === 0) return bytes;
    const member =
      renamed.length === 1 && servedAs
        ? topLevelSplicer(servedAs)({ bytes, dataStart: 0, data: bytes.toString('utf8') }, renamed[0]!)
        : undefined;
    if (!member) return Buffer.from(JSON.stringify(value));
    return Buffer.concat([bytes.subarray(0, member.at), member.replacement, bytes.subarray(member.at + member.length)]);
  };
  const parsed = () => read().value;
  const readingOf = (value: T | undefined): RelayReading =>
    value === undefined ? emptyReading() : { ...emptyReading(), complete: true, ...interpret(value) };
  return {
    push: (chunk) => {
      copy.push(chunk);
      return nothing;
    },
    end: () => {
      const value = parsed();
      if (value === undefined) return copy.bytes();
      const reading = readingOf(value);
      if (reading.usage) limit.report(reading.usage.outputTokens);
      else limit.add(reading.output.text, reading.output.charactersBeyond);
      if (limit.delivered <= limit.maxTokens) return relayed(value);
      return Buffer.from(JSON.stringify(lengthFinished(value)));
    },
    cut: false,
    reading: () => readingOf(parsed()),
  };
}
