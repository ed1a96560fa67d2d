/**
 * Connections of the pool cut by the server (a restart, a failover, an operator's pg_terminate_backend) while
 * they sit idle or are checked out. drizzle sends a transaction's BEGIN before the try that gives its client
 * back: a client whose connection was cut just before BEGIN used to stay checked out for good, so the pool
 * never closed (a stopping process hung) and, with enough cuts, ran out of clients. Every error a cut gives is
 * one the ledger's writes know may pass when sent again (seen: the server's 57P01, the socket's EPIPE).
 */
import { sql } from 'drizzle-orm';
import pg from 'pg';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedStatement } from '../../src/storage/checked-rows.ts';
import { mayPassLater } from '../../src/billing/ledger-writes.ts';
import { listenerApplicationName, openStorage, type Storage } from '../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

describe('the pool, when the server cuts its connections', () => {
  let database: TestDatabase;
  let storage: Storage;
  let admin: pg.Client;
  const errors: Error[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4, onError: (e) => errors.push(e) });
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.end();
    await database?.drop();
  });

  it('gives back every client, whatever statement a cut lands on, and closes', { timeout: 60_000 }, async () => {
    const terminate = () =>
      admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> $1`,
        [listenerApplicationName],
      );
    const cuts: unknown[] = [];
    for (let round = 0; round < 30; round++) {
      // Idle clients in the pool, cut under it; then transactions at once, before the pool hears of every cut.
      await Promise.all([1, 2, 3, 4].map(() => storage.db.execute(sql`SELECT 1`)));
      await terminate();
      const outcomes = await Promise.allSettled(
        [1, 2, 3, 4].map(() => storage.db.transaction(async (tx) => tx.execute(sql`SELECT 1`))),
      );
      for (const outcome of outcomes) if (outcome.status === 'rejected') cuts.push(outcome.reason);
    }
    // Cuts were met (else this proves nothing), each an error the ledger's writes send again (a settlement cut
    // off so must not be given up, its generation uncharged), and the pool still serves...
    expect(cuts.length).toBeGreaterThan(0);
    expect(cuts.filter((cut) => !mayPassLater(cut)).map(String)).toEqual([]);
    const two = preparedStatement({
      name: 'pool-cuts-two',
      text: 'SELECT 2 AS two',
      row: Type.Object({ two: Type.Integer() }),
    });
    expect(await storage.prepared(two, [])).toEqual([{ two: 2 }]);
    // ...and closes: no client was kept out.
    let closed = false;
    await Promise.race([
      storage.close().then(() => {
        closed = true;
      }),
      new Promise((resolve) => setTimeout(resolve, 20_000)),
    ]);
    expect(closed).toBe(true);
  });
});
