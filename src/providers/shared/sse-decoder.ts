import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import { sseSplitter } from './stream-splitters.ts';
import { bodyBytes, unreachable, type UpstreamBody } from './upstream-http.ts';

/** Server-sent events of an upstream body, one at a time, as they arrive: each event's data. */
export async function* decodeSse(body: UpstreamBody, maxEventCharacters: number): AsyncGenerator<{ data: string }> {
  const split = sseSplitter(maxEventCharacters);
  try {
    for await (const chunk of body) {
      for (const { data } of split(bodyBytes(chunk))) if (data !== undefined) yield { data };
    }
  } catch (error) {
    if (error instanceof UpstreamUnreachableError) throw error;
    throw unreachable(error);
  } finally {
    if (!body.destroyed) body.destroy();
  }
}
