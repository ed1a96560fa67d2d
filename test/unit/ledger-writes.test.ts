import { DrizzleQueryError } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { LedgerWrites, mayPassLater, type RefusedWrite } from '../../src/billing/ledger-writes.ts';

/** A failed query as drizzle reports it, its cause what pg (or the socket under it) threw. */
const failedQuery = (cause: Error) => new DrizzleQueryError('select gw_settle_batch($1)', ['[]'], cause);

const socketError = (code: string, syscall: string) =>
  Object.assign(new Error(`${syscall} ${code}`), { code, syscall });

const serverError = (code: string) => Object.assign(new pg.DatabaseError('refused', 0, 'error'), { code });

/**
 * A write that ends a hold is sent again only when storage may take it later: the database rolled it back for a
 * passing reason, or the connection failed before an answer came. An error without a SQLSTATE used to count as a
 * dropped connection whatever it was, so a bug thrown inside a settlement was sent again at every heartbeat for
 * as long as the process ran, its hold kept and an error logged each time.
 */
describe('ledger writes: which refusals pass later', () => {
  it.each([
    ['a connection dropped under the query', failedQuery(new Error('Connection terminated unexpectedly'))],
    ['no connection within the pool’s wait', new Error('timeout exceeded when trying to connect')],
    [
      'a connection attempt timed out',
      new Error('Connection terminated due to connection timeout', { cause: new Error('timeout expired') }),
    ],
    ['the server refused the connection', failedQuery(socketError('ECONNREFUSED', 'connect'))],
    ['the connection reset', socketError('ECONNRESET', 'read')],
    ["the embedded server's socket missing while it restarts", socketError('ENOENT', 'connect')],
    ['a lock wait cut short', failedQuery(serverError('55P03'))],
    ['a serialization failure', serverError('40001')],
    ['the server shutting down', serverError('57P01')],
  ])('sends again: %s', (_name, error) => {
    expect(mayPassLater(error)).toBe(true);
  });

  it.each([
    ['a bug in the write', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a bug inside a failed query', failedQuery(new RangeError('a cost cannot be negative'))],
    ['an answer of an unexpected shape', new Error('gw_settle_batch answered an unexpected shape')],
    ['a file missing, not a socket', socketError('ENOENT', 'open')],
    ['a check constraint', failedQuery(serverError('23514'))],
    ['not an error at all', 'refused'],
  ])('refuses for good: %s', (_name, error) => {
    expect(mayPassLater(error)).toBe(false);
  });

  it('ends a write that throws a bug at once, keeping nothing for the heartbeat', async () => {
    const refusals: RefusedWrite[] = [];
    const writes = new LedgerWrites({ retryMs: [1, 1], onRefused: (_error, next) => refusals.push(next) });
    let attempts = 0;
    const write = writes.write(async () => {
      attempts++;
      throw new TypeError('settlement.generation is undefined');
    });
    await expect(write).rejects.toThrow(TypeError);
    expect(attempts).toBe(1);
    expect(refusals).toEqual([]);
    expect(writes.waiting).toBe(0);
  });
});
