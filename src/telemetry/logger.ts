import { openSync, writeSync } from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Environment } from '../config/environment.ts';

/** sonic-boom in its `buffer` content mode, which its types do not describe: it takes bytes where they say text. */
interface ByteDestination {
  write(chunk: Buffer): boolean;
}

/** What any line that logs a request (`{req}`) keeps of it; the request lines themselves are written by the app. */
interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
}

/**
 * Log lines are written in batches of at least this many bytes. Each write handed to libuv's thread pool cost
 * the server 50-90 µs of CPU on a 2-core machine, whatever its size: at 4 KiB batches that was more than
 * building the lines.
 */
const logBatchBytes = 64 * 1024;
/** What is buffered is written at least this often, so a quiet gateway's lines do not wait for a batch to fill. */
const logFlushIntervalMs = 1000;
/**
 * Most a log buffer holds while its reader does not keep up (a stuck pipe, a full disk): lines past it are
 * dropped and counted, rather than the process's memory growing without bound.
 */
export const maxLogBufferBytes = 16 * 1024 * 1024;

/**
 * Fields pino censors as `[redacted]` on every line: a second line of defence behind `Secret` (which already
 * prints as `[redacted]`), for credentials that reach a line as plain strings: a client's headers, a token or a
 * password in an object someone logs whole. Paths only one level under the line (fast-redact's wildcards).
 */
export const redactedLogPaths = [
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'password',
  '*.password',
  'secret',
  '*.secret',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["x-goog-api-key"]',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  '*.headers["x-goog-api-key"]',
  '*.headers.cookie',
  '*.headers["set-cookie"]',
];

/**
 * A request's logger carries its id (`reqId`) as a property that `createLogger`'s mixin puts on each line, where
 * pino's binding would run the wildcard redaction paths over the id once per request, logged or not: 4.5% of the
 * bytes a chat request allocated. The lines are the same: the mixin's `reqId` comes right after the bindings
 * (a child of a request's logger writes its own bindings first, then `reqId`).
 */
const requestIdOfLogger = Symbol('request id of a logger');
/** Set on `createLogger`'s loggers (and so inherited by their children), whose mixin writes `requestIdOfLogger`. */
const writesRequestIds = Symbol('writes request ids');
/** The mixin's answer on a line of no request's: the merging object is then used as it is. */
const noRequestId = Object.freeze({});

/**
 * Fastify's `childLoggerFactory`: a request's logger, its id kept for `createLogger`'s mixin when `logger` is one
 * of its loggers; otherwise (another logger, other bindings) the child Fastify would have made.
 */
export function requestLogger(
  logger: FastifyBaseLogger,
  bindings: Readonly<Record<string, unknown>>,
  options?: Parameters<FastifyBaseLogger['child']>[1],
): FastifyBaseLogger {
  const requestId = bindings.reqId;
  if (typeof requestId !== 'string' || Reflect.get(logger, writesRequestIds) !== true)
    return logger.child(bindings, options);
  const child = options && Object.keys(options).length > 0 ? logger.child({}, options) : logger.child({});
  Reflect.set(child, requestIdOfLogger, requestId);
  return child;
}

/** What a redacted field's value becomes. */
export const redactionCensor = '[redacted]';

/**
 * `redactedLogPaths` for a line whose only object field is `generation` (a request's line, a generation's line):
 * the wildcard paths (`*.apiKey`) spelled out under `generation`, the others as they are, so that such a line is
 * censored exactly where `redactedLogPaths` censors it. pino runs a wildcard path's redactor on every field of
 * every line, the strings and numbers too, parsing its paths again each time: on the line written once per
 * request, that was most of the line's cost.
 */
export const generationLineRedactedPaths = redactedLogPaths.map((path) =>
  path.startsWith('*.') ? `generation.${path.slice(2)}` : path,
);

const generationLineLoggers = new WeakMap<FastifyBaseLogger, FastifyBaseLogger>();

/**
 * The logger that writes the lines of `generationLineRedactedPaths`: one child of `root` (the application's
 * logger), made once, at the level of the request loggers it stands in for.
 */
export function generationLineLogger(root: FastifyBaseLogger): FastifyBaseLogger {
  let lines = generationLineLoggers.get(root);
  if (!lines) {
    lines = root.child({}, { redact: { paths: generationLineRedactedPaths, censor: redactionCensor } });
    generationLineLoggers.set(root, lines);
  }
  return lines;
}

/**
 * pino JSON lines on `destination` (stdout, or a file path), written asynchronously in batches. What is
 * buffered is written on exit (pino flushes its destinations then), and within a second otherwise; a process
 * killed outright (SIGKILL) loses at most that second's lines, never a usage record (those are in the database).
 * Lines a reader too slow leaves no room for are dropped; the next line that fits says how many.
 */
export function createLogger(environment: Environment, destination: number | string = 1): Logger {
  // A file is opened here rather than by pino, so that lines logged before it would have opened are still written on an early exit.
  const stream = pino.destination({
    dest: typeof destination === 'string' ? openSync(destination, 'a') : destination,
    sync: false,
    minLength: logBatchBytes,
    maxWrite: 4 * logBatchBytes,
    maxLength: maxLogBufferBytes,
    periodicFlush: logFlushIntervalMs,
    // Lines kept as bytes: in its text mode sonic-boom measures the whole pending batch on every line and encodes each batch twice.
    contentMode: 'buffer',
  });
  const batches = stream as unknown as ByteDestination;
  // Bytes taken and not yet written: sonic-boom calls a flush done once less than a batch is left, so a flush
  // that must write everything asks again until nothing is left.
  let pendingBytes = 0;
  stream.on('write', (written: number) => {
    pendingBytes -= written;
  });
  stream.on('drop', (line: Buffer) => {
    pendingBytes -= line.length;
  });
  const flushAll = (done: (error?: Error) => void): void => {
    if (pendingBytes <= 0) {
      done();
      return;
    }
    stream.flush((error) => (error ? done(error) : flushAll(done)));
  };
  const lines = {
    write: (line: string) => {
      const bytes = Buffer.from(line);
      pendingBytes += bytes.length;
      return batches.write(bytes);
    },
    flush: flushAll,
  };
  const logger = pino(
    {
      level: environment.logLevel,
      redact: { paths: redactedLogPaths, censor: redactionCensor },
      mixin: (_fields, _level, instance) => {
        const requestId: unknown = Reflect.get(instance, requestIdOfLogger);
        return typeof requestId === 'string' ? { reqId: requestId } : noRequestId;
      },
      mixinMergeStrategy: (fields, mixed) => (mixed === noRequestId ? fields : Object.assign(mixed, fields)),
      // Method and path only: no headers, and no query string, where a client may have put a credential (`?key=`).
      serializers: {
        req: (request: LoggedRequest) => ({
          method: request.method,
          path: request.url?.split('?')[0],
          host: request.host,
          remoteAddress: request.ip,
        }),
      },
    },
    lines,
  );
  Reflect.set(logger, writesRequestIds, true);
  outlastWriteErrors(stream);
  let dropped = 0;
  stream.on('drop', () => {
    dropped += 1;
  });
  stream.on('drain', () => {
    if (dropped === 0) return;
    const count = dropped;
    dropped = 0;
    logger.error({ droppedLines: count }, 'log lines dropped: the log reader did not keep up');
  });
  return logger;
}

/**
 * A destination that refuses writes (a full disk, an I/O error) neither stops the gateway nor keeps it from
 * exiting: its lines wait in the bounded buffer and are written once it takes writes again, or dropped. Left
 * alone, sonic-boom emits the error with no listener (the process crashed) and its flush on exit retries a
 * failing write forever (the process never ended), so that flush is skipped while writes fail. The failure is
 * said once on stderr, as the log itself cannot take it.
 */
function outlastWriteErrors(stream: ReturnType<typeof pino.destination>): void {
  const flushOnExit = stream.flushSync;
  let failing = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    stream.flushSync = () => undefined;
    if (failing) return;
    failing = true;
    try {
      writeSync(
        2,
        `the log destination refuses writes (${error.code ?? error.message}): its lines wait in memory up to ${maxLogBufferBytes} bytes, then are dropped\n`,
      );
    } catch {
      // stderr refuses too: nothing is left to tell.
    }
  });
  stream.on('write', () => {
    if (!failing) return;
    failing = false;
    stream.flushSync = flushOnExit;
  });
}
