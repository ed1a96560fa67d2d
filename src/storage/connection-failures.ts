/**
 * Whether a storage error is a connection's failure rather than the server's answer: pg reports a connection that
 * dropped, timed out or could not be opened as a plain `Error` with no SQLSTATE (its own messages below, or the
 * socket's error with its system code), wrapped by drizzle (a failed query's `cause`) or by pg-pool (its
 * connection time-out's `cause`). A statement sent on such a connection may or may not have run; any other error
 * without a SQLSTATE is the gateway's own (a bug, a bad argument) and would come again each time.
 */

/** pg's and pg-pool's messages for a connection lost, never opened, or closed under a query. */
const connectionMessages = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Query read timeout',
]);

/** The socket's system codes for a peer that refused, reset, vanished or did not answer. */
const socketCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** How far down a chain of causes to look: drizzle's wrapper over pg-pool's over the socket's is three. */
const causeDepth = 4;

function isConnectionFailure(error: Error): boolean {
  if (connectionMessages.has(error.message)) return true;
  const code: unknown = Reflect.get(error, 'code');
  if (typeof code !== 'string') return false;
  // A socket that could not connect (the embedded server's Unix socket file missing while it restarts: ENOENT).
  return socketCodes.has(code) || Reflect.get(error, 'syscall') === 'connect';
}

export function connectionFailed(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < causeDepth && current instanceof Error; depth++) {
    if (isConnectionFailure(current)) return true;
    current = current.cause;
  }
  return false;
}
