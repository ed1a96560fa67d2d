import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { openSse, type SseWriter } from './sse-writer.ts';

/** The request being answered and its reply. */
export interface HttpExchange {
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface RelayedAnswer {
  status: number;
  contentType: string | undefined;
  body: AsyncIterable<Uint8Array>;
}

/**
 * Sends a non-streamed upstream answer once its body is read: the answer is checked and metered whole before
 * any of it may be relayed (its meter gives its bytes only at the end), so it goes out as one buffer, with no
 * stream between the meter and the socket. A client that left stops the relay, which still reads the upstream
 * to its end (or to the output limit) and bills it as aborted.
 */
async function relayWhole(reply: FastifyReply, answer: RelayedAnswer): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of answer.body) {
    if (reply.raw.destroyed) return;
    if (chunk.length > 0) chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  reply
    .code(answer.status)
    .type(answer.contentType ?? 'application/json')
    .send(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
}

/**
 * Sends a body that is not an event stream through as it arrives (a JSON array streamed element by element).
 * If the client goes away the stream is destroyed, which still reads the upstream to its end (or to the
 * output limit) for billing.
 */
function relayChunks(reply: FastifyReply, answer: RelayedAnswer): FastifyReply {
  return reply
    .code(answer.status)
    .type(answer.contentType ?? 'application/json')
    .send(Readable.from(answer.body));
}

export interface StreamRelayHooks {
  /** After the upstream's last byte: what the surface's rules add (an appended terminator, say). */
  onEnd?(sse: SseWriter, endsWithBlankLine: boolean): Promise<void>;
  /** After a failure mid-stream: what the surface's rules say to send before closing, if anything. */
  onFailure?(sse: SseWriter, endsWithBlankLine: boolean): Promise<void>;
}

/** The last two characters of what was relayed, with `chunk` after `tail`; the chunk itself is not copied. */
function lastTwo(tail: string, chunk: Uint8Array): string {
  if (chunk.length >= 2) return String.fromCharCode(chunk[chunk.length - 2]!, chunk[chunk.length - 1]!);
  return chunk.length === 1 ? (tail + String.fromCharCode(chunk[0]!)).slice(-2) : tail;
}

/** Relays an upstream event stream byte for byte, with the streaming headers and backpressure of the SSE writer. */
async function relayStream(
  { request, reply }: HttpExchange,
  answer: RelayedAnswer,
  hooks: StreamRelayHooks = {},
): Promise<void> {
  const sse = openSse(reply);
  let tail = '';
  try {
    for await (const chunk of answer.body) {
      await sse.raw(chunk);
      // Leaving the loop hands the rest of the upstream to the meter, which reads it to its end or to the output
      // limit, and bills it as aborted.
      if (sse.clientGone) return;
      tail = lastTwo(tail, chunk);
    }
    await hooks.onEnd?.(sse, tail === '\n\n');
  } catch (error) {
    request.log.warn({ err: error }, 'relayed stream failed after it began');
    await hooks.onFailure?.(sse, tail === '\n\n');
  } finally {
    sse.end();
  }
}

/** What an answer's meter read of a pass-through stream, as its endings need it. */
export interface PassThroughReading {
  complete: boolean;
  sawError: boolean;
  sawTerminator: boolean;
}

/**
 * The endings of a pass-through stream. An answer its upstream failed mid-way, or closed before it was complete
 * (however cleanly it closed), ends with `failure`, the surface's in-stream error event as its translated
 * streams write it, after a blank line when the relayed bytes did not end with one. One that ended with its
 * own error or terminator is left as it is; a complete one ends with `completed`, if given (an appended
 * terminator the upstream left out).
 */
export function passThroughEndings(
  reading: () => PassThroughReading,
  failure: (sse: SseWriter) => Promise<void>,
  completed?: (sse: SseWriter, endsWithBlankLine: boolean) => Promise<void>,
): StreamRelayHooks {
  const failed = async (sse: SseWriter, endsWithBlankLine: boolean) => {
    if (!endsWithBlankLine) await sse.raw('\n\n');
    await failure(sse);
  };
  return {
    onEnd: async (sse, endsWithBlankLine) => {
      const { complete, sawError, sawTerminator } = reading();
      if (sawTerminator || sawError) return;
      if (!complete) return failed(sse, endsWithBlankLine);
      await completed?.(sse, endsWithBlankLine);
    },
    onFailure: failed,
  };
}

/** Writes canonical-path events through an encoder, and what the surface sends when the upstream fails mid-way. */
export async function streamEncoded<T>(
  { request, reply }: HttpExchange,
  events: AsyncIterable<T>,
  encoding: {
    write(sse: SseWriter, event: T): Promise<void>;
    onEnd(sse: SseWriter): Promise<void>;
    onFailure(sse: SseWriter): Promise<void>;
    noBuffering?: boolean;
  },
): Promise<void> {
  const { write, ...hooks } = encoding;
  const sse = openSse(reply, { noBuffering: hooks.noBuffering });
  try {
    for await (const event of events) {
      await write(sse, event);
      if (sse.clientGone) return;
    }
    await hooks.onEnd(sse);
  } catch (error) {
    request.log.warn({ err: error }, 'stream failed after it began');
    await hooks.onFailure(sse);
  } finally {
    sse.end();
  }
}

/**
 * A same-protocol answer passed through: byte for byte as an event stream, as the whole JSON body it is, or
 * (`asItArrives`, a stream that is not an event stream) as its chunks come.
 */
export function relayAnswer(
  exchange: HttpExchange,
  answer: RelayedAnswer,
  {
    streaming,
    asItArrives = false,
    hooks,
  }: { streaming: boolean; asItArrives?: boolean; hooks?: StreamRelayHooks | undefined },
): Promise<void> | FastifyReply {
  if (streaming) return relayStream(exchange, answer, hooks);
  return asItArrives ? relayChunks(exchange.reply, answer) : relayWhole(exchange.reply, answer);
}
