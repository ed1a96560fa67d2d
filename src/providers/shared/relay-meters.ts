import { createParser } from 'eventsource-parser';
import type { RelayMeter, RelayReading } from '../provider-adapter.ts';
import { JsonCopy } from './json-copy.ts';

/**
 * A relay meter for an event stream: parses a copy of the bytes and hands each event's JSON to `observe`,
 * which updates the reading. Events that are not JSON are relayed as they came and carry nothing to read.
 */
export function sseRelayMeter<T>(observe: (reading: RelayReading, data: T, raw: string) => void): RelayMeter {
  const reading: RelayReading = { usage: undefined, complete: false, sawTerminator: false, sawError: false };
  const parser = createParser({
    onEvent: (event) => {
      let data: T;
      try {
        data = JSON.parse(event.data) as T;
      } catch {
        observe(reading, undefined as T, event.data);
        return;
      }
      if (data !== null && typeof data === 'object') observe(reading, data, event.data);
    },
  });
  const decoder = new TextDecoder();
  return { push: (chunk) => parser.feed(decoder.decode(chunk, { stream: true })), reading: () => ({ ...reading }) };
}

/**
 * A relay meter for a non-streamed JSON answer: keeps a bounded copy and reads it once complete. An answer
 * that parsed is complete unless `interpret` says otherwise.
 */
export function jsonRelayMeter<T>(interpret: (answer: T) => Partial<RelayReading>): RelayMeter {
  const copy = new JsonCopy();
  const empty: RelayReading = { usage: undefined, complete: false, sawTerminator: false, sawError: false };
  return {
    push: (chunk) => copy.push(chunk),
    reading: () => {
      const answer = copy.parse();
      return answer === undefined || answer === null ? { ...empty } : { ...empty, complete: true, ...interpret(answer as T) };
    },
  };
}
