import { createParser } from 'eventsource-parser';
import type { WireCheck } from '../../protocols/wire-check.ts';
import type { RelayMeter, RelayReading } from '../provider-adapter.ts';
import { JsonCopy } from './json-copy.ts';
import { checkedEvent } from './wire-data.ts';

const emptyReading = (): RelayReading => ({ usage: undefined, complete: false, sawTerminator: false, sawError: false });

/**
 * A relay meter for an event stream: parses a copy of the bytes, checks each event against the protocol and
 * hands it to `observe`, which updates the reading. An event that breaks the protocol throws, which ends the
 * relay as a failure mid-stream; `terminator` is the protocol's end-of-stream `data:` that is not JSON.
 */
export function sseRelayMeter<T>(check: WireCheck<T>, observe: (reading: RelayReading, event: T) => void, terminator?: string): RelayMeter {
  const reading = emptyReading();
  const parser = createParser({
    onEvent: (event) => {
      if (event.data === terminator) {
        reading.sawTerminator = true;
        reading.complete = true;
      } else observe(reading, checkedEvent(event.data, check));
    },
  });
  const decoder = new TextDecoder();
  return { push: (chunk) => parser.feed(decoder.decode(chunk, { stream: true })), reading: () => ({ ...reading }) };
}

/**
 * A relay meter for a JSON answer: keeps a bounded copy and reads it once complete. An answer that follows
 * the protocol is complete unless `interpret` says otherwise; one that does not is never complete.
 */
export function jsonRelayMeter<T>(check: WireCheck<T>, interpret: (answer: T) => Partial<RelayReading>): RelayMeter {
  const copy = new JsonCopy();
  return {
    push: (chunk) => copy.push(chunk),
    reading: () => {
      const answer = copy.parse();
      return check(answer) ? { ...emptyReading(), complete: true, ...interpret(answer) } : emptyReading();
    },
  };
}
