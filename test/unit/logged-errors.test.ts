import { DrizzleQueryError } from 'drizzle-orm';
import pg from 'pg';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { logRequestFailure } from '../../src/http/error-envelope.ts';
import { GatewayError } from '../../src/domain/errors.ts';
import { serializeLoggedError, withSafeErrorLogging } from '../../src/storage/logged-errors.ts';

const prompt = 'a tenant prompt with private words';

/** A failed insert as node-postgres and drizzle report it: the values in the message, `detail` and `params`. */
function failedInsert(): DrizzleQueryError {
  const server = new pg.DatabaseError(
    'new row for relation "media_jobs" violates check constraint "refuses"',
    200,
    'error',
  );
  Object.assign(server, {
    code: '23514',
    severity: 'ERROR',
    table: 'media_jobs',
    constraint: 'refuses',
    schema: 'public',
    detail: `Failing row contains (gen_1, ${prompt}).`,
    where: `SQL statement with ${prompt}`,
  });
  return new DrizzleQueryError(
    'insert into "media_jobs" ("id", "request") values ($1, $2)',
    ['gen_1', { prompt }],
    server,
  );
}

function capture(): { lines: Array<Record<string, unknown>>; logger: pino.Logger } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'trace' },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { lines, logger };
}

describe('serializeLoggedError', () => {
  it('keeps the code, constraint, table and statement of a failed query, and none of its values', () => {
    const serialized = serializeLoggedError(failedInsert());
    expect(serialized).toMatchObject({
      type: 'StorageQueryError',
      code: '23514',
      constraint: 'refuses',
      table: 'media_jobs',
      statement: 'insert',
    });
    const text = JSON.stringify(serialized);
    for (const leak of ['Failed query', 'params', prompt, 'Failing row', 'gen_1']) expect(text).not.toContain(leak);
    expect(String((serialized as { stack: string }).stack)).toMatch(
      /^StorageQueryError: storage query failed \(insert on media_jobs\)/,
    );
  });

  it('makes a storage error safe wherever it sits: as a cause, in an AggregateError, in a field', () => {
    const wrapped = new Error('media job failed', { cause: failedInsert() });
    const aggregate = new AggregateError([failedInsert()], 'several failed');
    const inField = Object.assign(new Error('settlement failed'), { storage: failedInsert() });
    for (const error of [wrapped, aggregate, inField]) {
      const text = JSON.stringify(serializeLoggedError(error));
      expect(text).toContain('23514');
      for (const leak of ['Failed query', prompt, 'Failing row']) expect(text).not.toContain(leak);
    }
    expect(serializeLoggedError(wrapped)).toMatchObject({
      message: 'media job failed',
      cause: { type: 'StorageQueryError' },
    });
  });

  it('withholds a value the server quotes at the end of its message', () => {
    const server = new pg.DatabaseError(`invalid input syntax for type integer: "${prompt}"`, 100, 'error');
    Object.assign(server, { code: '22P02' });
    const text = JSON.stringify(serializeLoggedError(server));
    expect(text).toContain('22P02');
    expect(text).not.toContain(prompt);
  });

  it('leaves other errors as pino serializes them', () => {
    const error = Object.assign(new Error('plain failure'), { code: 'ECONNRESET' });
    expect(serializeLoggedError(error)).toMatchObject({ type: 'Error', message: 'plain failure', code: 'ECONNRESET' });
    expect(serializeLoggedError('not an error')).toBe('not an error');
  });

  it('is the `err` serializer of a logger given to withSafeErrorLogging, and of its children', () => {
    const { lines, logger } = capture();
    const safe = withSafeErrorLogging(logger);
    safe.error({ err: failedInsert() }, 'request failed');
    safe.child({ reqId: 'r1' }).error({ err: new Error('job failed', { cause: failedInsert() }) }, 'job failed');
    expect(lines).toHaveLength(2);
    const text = JSON.stringify(lines);
    expect(text).toContain('23514');
    for (const leak of ['Failed query', prompt, 'Failing row']) expect(text).not.toContain(leak);
  });
});

describe('logRequestFailure', () => {
  it("logs an open breaker's 503 at warn without a stack, other 5xx at error with one, and no 4xx", () => {
    const { lines, logger } = capture();
    const unavailable = new GatewayError('GW_UPSTREAM_UNAVAILABLE', 'model "m" is temporarily unavailable').retryAfter(
      30,
    );
    logRequestFailure(logger, unavailable, {
      status: 503,
      code: 'GW_UPSTREAM_UNAVAILABLE',
      messages: unavailable.messages,
    });
    logRequestFailure(logger, new Error('boom'), { status: 500, code: 'GW_INTERNAL', messages: ['internal error'] });
    logRequestFailure(logger, new Error('bad input'), { status: 400, code: 'GW_VALIDATION', messages: ['bad input'] });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 40, code: 'GW_UPSTREAM_UNAVAILABLE' });
    expect(JSON.stringify(lines[0])).not.toMatch(/stack|"err"/);
    expect(lines[1]).toMatchObject({ level: 50, msg: 'request failed', err: { message: 'boom' } });
    expect(String((lines[1]!.err as { stack: string }).stack)).toContain('at ');
  });

  it('logs the 503 of rate limits failing closed (Redis down) at warn without a stack', () => {
    const { lines, logger } = capture();
    const unavailable = new GatewayError(
      'GW_RATE_LIMITS_UNAVAILABLE',
      'rate limits cannot be checked right now (their store is unreachable)',
    ).retryAfter(1);
    logRequestFailure(logger, unavailable, {
      status: 503,
      code: 'GW_RATE_LIMITS_UNAVAILABLE',
      messages: unavailable.messages,
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, code: 'GW_RATE_LIMITS_UNAVAILABLE', reason: unavailable.messages[0] });
    expect(JSON.stringify(lines[0])).not.toMatch(/stack|"err"/);
  });
});
