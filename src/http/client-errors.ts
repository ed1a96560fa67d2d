import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorCode } from '../domain/errors.ts';
import { errorEnvelope } from './error-envelope.ts';

/** What Node's HTTP parser hands to `clientError`: an llhttp code (`HPE_…`) or a timeout, and the bytes read so far. */
export interface ClientError extends Error {
  code?: string;
  reason?: string;
  rawPacket?: unknown;
}

interface Answer {
  status: number;
  code: ErrorCode;
  message: string;
}

function answerFor(error: ClientError, timeouts: { headersTimeoutMs: number; requestTimeoutMs: number }): Answer {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        code: 'GW_REQUEST_TIMEOUT',
        message: `the request was not received in time (headers within ${timeouts.headersTimeoutMs} ms, the whole request within ${timeouts.requestTimeoutMs} ms)`,
      };
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: 'GW_HEADERS_TOO_LARGE',
        message: `the request line and headers are larger than the limit of ${maxHeaderSize} bytes`,
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return {
        status: 413,
        code: 'GW_PAYLOAD_TOO_LARGE',
        message: 'the chunk extensions of the request body are too large',
      };
    default:
      return {
        status: 400,
        code: 'GW_VALIDATION',
        message: `malformed HTTP request: ${error.reason ?? error.code ?? 'unparsable'}`,
      };
  }
}

const maxReportedPathLength = 1024;

/** The request path as far as the parser got, for the envelope's `path`; empty when not even the request line arrived. */
function pathOf(rawPacket: unknown): string {
  if (!Buffer.isBuffer(rawPacket)) return '';
  const requestLine = rawPacket.subarray(0, maxReportedPathLength + 64).toString('latin1');
  const target = /^[A-Za-z]+ ([^\s?#]+)/.exec(requestLine)?.[1] ?? '';
  return target.slice(0, maxReportedPathLength);
}

interface SocketWithResponse extends Socket {
  /** Node's own bookkeeping: the response currently being written on this connection, if any. */
  _httpMessage?: { headersSent?: boolean } | null;
}

/**
 * Answers a request Node's HTTP parser refused before Fastify saw it (framing errors, oversized headers,
 * timeouts) with the gateway's error envelope, written raw to the socket, then closes the connection:
 * after a framing error the rest of the stream cannot be trusted.
 */
export function answerClientError(
  error: ClientError,
  socket: Socket,
  timeouts: { headersTimeoutMs: number; requestTimeoutMs: number },
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A response already under way on this connection cannot be followed by another status line.
  const inFlight = (socket as SocketWithResponse)._httpMessage?.headersSent === true;
  if (!socket.writable || inFlight) {
    socket.destroy();
    return;
  }
  const { status, code, message } = answerFor(error, timeouts);
  const body = JSON.stringify(errorEnvelope({ status, code, messages: [message] }, pathOf(error.rawPacket)));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `x-gateway-error-code: ${code}\r\n` +
      'connection: close\r\n\r\n' +
      body,
    () => socket.destroy(),
  );
}
