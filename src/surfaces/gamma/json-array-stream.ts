import type { FastifyBaseLogger } from 'fastify';
import type { ChatStreamEvent } from '../../domain/chat.ts';
import type { PassThroughReading } from '../../streaming/relay.ts';
import { ChunkEncoder, streamError } from './generate-content-codec.ts';

/**
 * `streamGenerateContent` without `alt=sse`: one JSON array written element by element. A stream the upstream
 * failed ends, as the event stream does, with the protocol's error element, and the array is closed so that
 * what the client received is still JSON.
 */

const errorElement = JSON.stringify(streamError);

/** The array of chunks for canonical events. */
export async function* translatedJsonArray(
  log: FastifyBaseLogger,
  events: AsyncIterable<ChatStreamEvent>,
  model: string,
): AsyncGenerator<string> {
  const encoder = new ChunkEncoder(model);
  let separator = '[';
  try {
    for await (const event of events) {
      for (const chunk of encoder.encode(event)) {
        yield `${separator}${JSON.stringify(chunk)}`;
        separator = ',\r\n';
      }
    }
  } catch (error) {
    log.warn({ err: error }, 'stream failed after it began');
    // Closed after its error element, even when that is its only element.
    yield `${separator}${errorElement}]`;
    return;
  }
  yield separator === '[' ? '[]' : ']';
}

const whiteSpace = new Set([0x20, 0x09, 0x0a, 0x0d]);
const [openBracket, closeBracket, comma] = ['[', ']', ','].map((character) => character.charCodeAt(0));

/** The last byte of a chunk that is not white space, if any. */
function lastSignificant(chunk: Uint8Array): number | undefined {
  for (let index = chunk.length - 1; index >= 0; index--) if (!whiteSpace.has(chunk[index]!)) return chunk[index];
  return undefined;
}

/**
 * The upstream's array relayed as it came. One the upstream failed, or ended before its last chunk (the one with
 * a finish reason) without an error element of its own, ends with the error element; one it left open is
 * closed. The relay passes whole elements only, so the bytes so far end at an element, a comma or the `[`.
 */
export async function* relayedJsonArray(
  log: FastifyBaseLogger,
  body: AsyncIterable<Uint8Array>,
  reading: () => PassThroughReading,
): AsyncGenerator<Uint8Array> {
  let last: number | undefined;
  let failed = false;
  try {
    for await (const chunk of body) {
      yield chunk;
      last = lastSignificant(chunk) ?? last;
    }
    const { complete, sawError } = reading();
    failed = !complete && !sawError;
  } catch (error) {
    log.warn({ err: error }, 'relayed stream failed after it began');
    failed = true;
  }
  if (last === closeBracket) return;
  if (!failed) {
    if (last !== undefined) yield Buffer.from(']');
    return;
  }
  const opening = last === undefined ? '[' : last === openBracket || last === comma ? '' : ',\r\n';
  yield Buffer.from(`${opening}${errorElement}]`);
}
