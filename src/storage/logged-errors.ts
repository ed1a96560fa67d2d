import { DrizzleQueryError } from 'drizzle-orm';
import pg from 'pg';
import type { Logger } from 'pino';
import pino from 'pino';

/**
 * Errors as log lines show them, storage errors without the values they carry. A failed query's error says
 * `Failed query: <sql> params: <every bound value>` (a tenant's prompt, an email, a key hash), and the
 * server's error adds `detail` (`Key (email)=(…)`, `Failing row contains (…)`) and `where`. A log line keeps
 * what says which statement failed and why: the SQLSTATE code, constraint, table, column, the kind of statement,
 * and the stack's frames, never a value.
 */

/** What a log line keeps of a storage error. */
export interface LoggedStorageError {
  type: string;
  message: string;
  /** SQLSTATE, e.g. `23505` (unique violation), `22021` (bad byte sequence). */
  code?: string;
  severity?: string;
  constraint?: string;
  schema?: string;
  table?: string;
  column?: string;
  dataType?: string;
  /** The statement's kind (`insert`, `select`, …) when the query text was at hand. */
  statement?: string;
  stack?: string;
}

/** The server's message, with a trailing quoted value withheld (`invalid input syntax for type uuid: "…"`). */
function withoutValue(message: string): string {
  return message.replace(/: ".*"$/s, ': [value withheld]');
}

/** The stack's frames only: its first lines repeat the message, and with it the query and its parameters. */
function framesOf(stack: string | undefined): string {
  if (!stack) return '';
  return stack
    .split('\n')
    .filter((line) => line.startsWith('    at '))
    .join('\n');
}

const statementHead = /^\s*(select|insert|update|delete|with|lock|call)\b/i;
const statementTable = /\b(?:into|update|from)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/i;

function serverFields(error: pg.DatabaseError): Omit<LoggedStorageError, 'type' | 'message' | 'stack'> {
  const fields: Omit<LoggedStorageError, 'type' | 'message' | 'stack'> = {};
  if (error.code) fields.code = error.code;
  if (error.severity) fields.severity = error.severity;
  if (error.constraint) fields.constraint = error.constraint;
  if (error.schema) fields.schema = error.schema;
  if (error.table) fields.table = error.table;
  if (error.column) fields.column = error.column;
  if (error.dataType) fields.dataType = error.dataType;
  return fields;
}

/**
 * The database server's own answer inside a storage error (bare, or the cause of a failed query): present when
 * the server refused the statement, which rolled its transaction back; absent for a connection's failure.
 */
export function serverErrorOf(error: unknown): pg.DatabaseError | undefined {
  if (error instanceof pg.DatabaseError) return error;
  return error instanceof DrizzleQueryError && error.cause instanceof pg.DatabaseError ? error.cause : undefined;
}

/** The storage error as a log line shows it, or undefined when `error` is none (a failed query or a server error). */
export function describeStorageError(error: unknown): LoggedStorageError | undefined {
  if (error instanceof DrizzleQueryError) {
    const cause = serverErrorOf(error);
    const server = cause ? serverFields(cause) : {};
    const statement = statementHead.exec(error.query)?.[1]?.toLowerCase();
    const table = server.table ?? statementTable.exec(error.query)?.[1];
    const reason = cause
      ? withoutValue(cause.message)
      : error.cause instanceof Error
        ? error.cause.name
        : 'unknown cause';
    const message = `storage query failed${statement ? ` (${statement}${table ? ` on ${table}` : ''})` : ''}: ${reason}`;
    return {
      type: 'StorageQueryError',
      message,
      ...server,
      ...(table ? { table } : {}),
      ...(statement ? { statement } : {}),
      stack: `StorageQueryError: ${message}\n${framesOf(error.stack)}`,
    };
  }
  if (error instanceof pg.DatabaseError) {
    const message = `storage error: ${withoutValue(error.message)}`;
    return {
      type: 'StorageError',
      message,
      ...serverFields(error),
      stack: `StorageError: ${message}\n${framesOf(error.stack)}`,
    };
  }
  return undefined;
}

function isErrorLike(value: unknown): value is Error {
  return value instanceof Error;
}

/**
 * pino's `err` serializer, storage errors made safe wherever they sit: the error itself, its `cause` chain,
 * the errors of an AggregateError and any field holding an error. Every other error is serialized as pino
 * does (`errWithCause`: causes nested, not merged into the message).
 */
export function serializeLoggedError(error: unknown, depth = 0): unknown {
  const storage = describeStorageError(error);
  if (storage) return storage;
  if (!isErrorLike(error)) return error;
  const serialized: Record<string, unknown> = pino.stdSerializers.errWithCause(error);
  if (depth >= 8) return serialized;
  if (isErrorLike(error.cause)) serialized.cause = serializeLoggedError(error.cause, depth + 1);
  if (error instanceof AggregateError)
    serialized.aggregateErrors = error.errors.map((inner: unknown) => serializeLoggedError(inner, depth + 1));
  for (const key of Object.keys(error)) {
    const value: unknown = Reflect.get(error, key);
    if (isErrorLike(value)) serialized[key] = serializeLoggedError(value, depth + 1);
  }
  return serialized;
}

/**
 * `logger` with the safe `err` serializer, whoever built it (the server's own logger, a test's, the CLI's):
 * children, Fastify's request loggers among them, inherit it.
 */
export function withSafeErrorLogging(logger: Logger): Logger {
  return logger.child({}, { serializers: { err: serializeLoggedError } });
}
