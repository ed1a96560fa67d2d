import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import type { WireCheck } from '../../protocols/wire-check.ts';
import type { RawExchange } from '../provider-adapter.ts';
import { JsonCopy } from './json-copy.ts';
import { dataOf, type StreamSplitter } from './stream-splitters.ts';
import { relayedContentType, unreachable, type UpstreamBody } from './upstream-http.ts';
import { checked, checkedEvent } from './wire-data.ts';

/** Most bytes a stream may send before its first event is complete; a real first event is far smaller. */
const maxStreamHeadBytes = 1024 * 1024;

type UpstreamAnswer = { status: number; headers: Record<string, string | string[] | undefined>; body: UpstreamBody };

const contentTypeOf = (answer: UpstreamAnswer) => relayedContentType(answer.headers['content-type']);

async function nextChunk(iterator: AsyncIterator<Buffer>): Promise<IteratorResult<Buffer>> {
  try {
    return await iterator.next();
  } catch (error) {
    throw unreachable(error);
  }
}

/** The held chunks, then the rest of the body as it arrives; the body is let go of however the relay ends. */
async function* heldThenRest(
  held: readonly Uint8Array[],
  iterator: AsyncIterator<Buffer>,
  body: UpstreamBody,
): AsyncGenerator<Uint8Array> {
  try {
    yield* held;
    for (let next = await nextChunk(iterator); !next.done; next = await nextChunk(iterator)) yield next.value;
  } finally {
    if (!body.destroyed) body.destroy();
  }
}

/** Stops reading an answer that broke its protocol before any of it was relayed. */
function rejecting<T>(body: UpstreamBody, check: () => T): T {
  try {
    return check();
  } catch (error) {
    body.destroy();
    throw error;
  }
}

function broken(body: UpstreamBody, message: string): never {
  body.destroy();
  throw new UpstreamUnreachableError('protocol', message);
}

/**
 * A non-streamed answer read whole (bounded) and checked as its protocol's JSON before any byte of it goes to
 * the client: an answer that does not parse is a protocol failure, never relayed as a success.
 */
async function checkedJsonRelay(
  answer: UpstreamAnswer,
  check: (value: unknown) => void,
  maxBytes: number | undefined,
): Promise<RawExchange> {
  const copy = new JsonCopy(maxBytes);
  const iterator: AsyncIterator<Buffer> = answer.body[Symbol.asyncIterator]();
  for (let next = await nextChunk(iterator); !next.done && !copy.overflowed; next = await nextChunk(iterator))
    copy.push(next.value);
  const whole = rejecting(answer.body, () => {
    if (copy.overflowed)
      throw new UpstreamUnreachableError('protocol', 'the upstream answer is larger than the gateway relays');
    const read = copy.read();
    if (read === undefined)
      throw new UpstreamUnreachableError('protocol', 'the upstream answered with a body that is not JSON');
    check(read.value);
    return read;
  });
  return {
    status: answer.status,
    contentType: contentTypeOf(answer),
    body: heldThenRest([whole.bytes], iterator, answer.body),
    whole,
  };
}

/**
 * A stream whose first event is read before the answer is relayed, and every event read by then checked (here,
 * or by the caller's meter before the answer starts): garbage from the first byte is a protocol failure the
 * next provider row may still serve, and no event the meter reads before the answer starts can fail its
 * protocol check. The bytes read are relayed as they came, in one piece.
 */
async function checkedStreamRelay(
  answer: UpstreamAnswer,
  split: StreamSplitter,
  checkHead: (events: readonly string[]) => void,
): Promise<RawExchange> {
  const held: Buffer[] = [];
  const events: string[] = [];
  let size = 0;
  const iterator: AsyncIterator<Buffer> = answer.body[Symbol.asyncIterator]();
  while (events.length === 0) {
    const next = await nextChunk(iterator);
    if (next.done) broken(answer.body, 'the upstream stream ended before its first event');
    size += next.value.length;
    if (size > maxStreamHeadBytes) broken(answer.body, 'the upstream stream sent no event in its first megabyte');
    held.push(next.value);
    rejecting(answer.body, () => events.push(...dataOf(split(next.value))));
  }
  rejecting(answer.body, () => checkHead(events));
  // One piece, so a meter reads every event of it before the answer starts, not just those of its first chunk
  // (which may hold only a comment).
  const head = held.length === 1 ? held : [Buffer.concat(held)];
  return { status: answer.status, contentType: contentTypeOf(answer), body: heldThenRest(head, iterator, answer.body) };
}

/** The shapes an operation answers with: a whole answer, or the events of a stream ending at `terminator`. */
export interface AnswerShapes {
  answer: WireCheck<unknown>;
  event: WireCheck<unknown>;
  /** The answer as named in a protocol failure ("a chat completion"). */
  what: string;
  /** A stream's end-of-stream data that is not JSON. */
  terminator?: string;
  /** Largest whole answer relayed (images carry megabytes of base64); 16 MiB when unset. */
  maxAnswerBytes?: number;
}

/** How a stream is read: cut into events by `split`; `meteredHead`, see `checkedRelay`. */
export interface StreamReading {
  split: StreamSplitter;
  meteredHead?: boolean;
}

/**
 * An upstream answer checked against its operation's shapes before any of it is relayed: whole when
 * `stream` is undefined, else cut into events. With `meteredHead`, the caller's relay meter reads (and checks)
 * the stream's first event and every event that came with it before the answer starts, so none is parsed
 * here as well: this only waits for the first event to be whole.
 */
export function checkedRelay(
  answer: UpstreamAnswer,
  shapes: AnswerShapes,
  stream: StreamReading | undefined,
): Promise<RawExchange> {
  if (stream === undefined)
    return checkedJsonRelay(answer, (value) => checked(value, shapes.answer, shapes.what), shapes.maxAnswerBytes);
  const checkEvent = (data: string) => {
    if (data !== shapes.terminator) checkedEvent(data, shapes.event);
  };
  return checkedStreamRelay(answer, stream.split, (events) => {
    if (!stream.meteredHead) events.forEach(checkEvent);
  });
}
