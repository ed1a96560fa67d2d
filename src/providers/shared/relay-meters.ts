import { DeliveredOutput } from '../../domain/delivered-output.ts';
import type { WireCheck } from '../../protocols/wire-check.ts';
import type { RelayMeter, RelayReading } from '../provider-adapter.ts';
import { JsonCopy } from './json-copy.ts';
import type { StreamSplitter } from './stream-splitters.ts';
import { checkedEvent } from './wire-data.ts';

const emptyReading = (): RelayReading => ({
  usage: undefined,
  complete: false,
  sawTerminator: false,
  sawError: false,
  output: new DeliveredOutput(),
});

/** A stream's end-of-stream data that is not JSON, and whether it alone says the answer is whole. */
export interface StreamTerminator {
  data: string;
  completes: boolean;
}

/**
 * A relay meter for a stream: splits a copy of the bytes into events, checks each against the protocol and
 * hands it to `observe`, which updates the reading. An event that breaks the protocol throws, which ends the
 * relay as a failure mid-stream.
 */
export function streamRelayMeter<T>(
  split: StreamSplitter,
  check: WireCheck<T>,
  observe: (reading: RelayReading, event: T) => void,
  terminator?: StreamTerminator,
): RelayMeter {
  const reading = emptyReading();
  const decoder = new TextDecoder();
  return {
    push: (chunk) => {
      for (const data of split(decoder.decode(chunk, { stream: true }))) {
        if (data !== terminator?.data) observe(reading, checkedEvent(data, check));
        else {
          reading.sawTerminator = true;
          if (terminator.completes) reading.complete = true;
        }
      }
    },
    reading: () => ({ ...reading }),
  };
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
