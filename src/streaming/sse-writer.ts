import { once } from 'node:events';
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply } from 'fastify';

export interface SseWriter {
  /** Writes one `data:` event; waits while the client's socket buffer is full. No-op once the client left. */
  data(payload: unknown): Promise<void>;
  /** Writes one named event (`event:` line, then the JSON `data:` line). */
  event(name: string, payload: unknown): Promise<void>;
  /** Writes the literal `data: [DONE]` terminator. */
  done(): Promise<void>;
  /** Relays bytes of an upstream's own event stream as they came. */
  raw(chunk: Uint8Array | string): Promise<void>;
  end(): void;
  readonly clientGone: boolean;
}

/** Waits for the socket buffer to empty or the client to leave, leaving no listener behind either way. */
async function drainedOrClosed(response: FastifyReply['raw']): Promise<void> {
  const settled = new AbortController();
  try {
    await Promise.race([
      once(response, 'drain', { signal: settled.signal }),
      once(response, 'close', { signal: settled.signal }),
    ]);
  } finally {
    settled.abort();
  }
}

/**
 * The one SSE writer: takes the response over from Fastify, sends the streaming headers (with any headers
 * already set on the reply, such as x-request-id) and respects backpressure, so a slow client never makes
 * the gateway buffer without bound.
 */
export function openSse(reply: FastifyReply, options: { noBuffering?: boolean } = {}): SseWriter {
  reply.hijack();
  const response = reply.raw;
  // The client may have left while the upstream was still being asked, before this writer existed.
  let gone = response.destroyed;
  response.on('close', () => {
    gone = true;
  });
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
  response.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    ...(options.noBuffering ? { 'x-accel-buffering': 'no' } : {}),
  });
  // The headers go out with the first event: one socket write instead of two.
  const write = async (chunk: Uint8Array | string) => {
    if (gone || response.destroyed || response.writableEnded) return;
    if (!response.write(chunk)) await drainedOrClosed(response);
  };
  return {
    data: (payload) => write(`data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`),
    event: (name, payload) => write(`event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`),
    done: () => write('data: [DONE]\n\n'),
    raw: write,
    end: () => {
      if (!response.writableEnded) response.end();
    },
    get clientGone() {
      return gone;
    },
  };
}
