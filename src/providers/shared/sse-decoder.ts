import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import { unreachable, type UpstreamBody } from './upstream-http.ts';

/** Server-sent events of an upstream body, one at a time, as they arrive. */
export async function* decodeSse(body: UpstreamBody): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of body) {
      parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      while (pending.length > 0) yield pending.shift()!;
    }
  } catch (error) {
    if (error instanceof UpstreamUnreachableError) throw error;
    throw unreachable(error);
  } finally {
    if (!body.destroyed) body.destroy();
  }
}

/** The JSON of one upstream event; an event that is not JSON breaks the protocol. */
export function parseEventData<T>(data: string): T {
  try {
    return JSON.parse(data) as T;
  } catch {
    throw new UpstreamUnreachableError('protocol', 'the upstream sent an event that is not JSON');
  }
}
