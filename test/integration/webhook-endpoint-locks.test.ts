/**
 * Adding or removing a webhook endpoint while a settlement of its account runs. The endpoints' trigger locks the
 * account's keys; a settlement batch locks keys, then its account, then shares the rows of the endpoints its
 * events go to. Done in another order, the two deadlock and PostgreSQL cancels one of them after its deadlock
 * timeout: an account's request to add or remove an endpoint failed, or a batch of settlements was rolled back.
 *
 * Each case holds the settlement's first lock (its key) in an open transaction, starts the endpoint change,
 * waits until that change waits on a lock, and then runs the real gw_settle_batch in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { usageRecord } from '../../src/domain/generation-route.ts';
import { MediaJobsRepository } from '../../src/storage/media-jobs-repository.ts';
import { WebhooksRepository } from '../../src/storage/webhooks-repository.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const usd = 10n ** 9n;

describe('webhook endpoints changed during a settlement of their account', () => {
  let database: TestDatabase;
  let storage: Storage;
  let webhooks: WebhooksRepository;
  let settler: pg.Client;
  let observer: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.options);
    webhooks = new WebhooksRepository(storage.db);
    settler = new pg.Client({ connectionString: database.url });
    observer = new pg.Client({ connectionString: database.url });
    await Promise.all([settler.connect(), observer.connect()]);
  });
  afterAll(async () => {
    await settler?.end();
    await observer?.end();
    await storage?.close();
    await database?.drop();
  });

  /** An account of $1 that wants a balance.low event below $0.90, its key, and a hold of $0.20 on both. */
  async function accountWithHold(name: string) {
    const ids = { account: `${name}_account`, key: `${name}_key`, hold: `${name}_hold` };
    await observer.query(
      `INSERT INTO accounts (id, email, balance_nanos, held_nanos, balance_alert_nanos) VALUES ($1, $2, $3, $4, $5)`,
      [ids.account, `${name}@example.com`, usd, usd / 5n, (usd * 9n) / 10n],
    );
    await observer.query(
      `INSERT INTO api_keys (id, account_id, name, display_prefix, lookup_hash, sealed_key, held_nanos)
       VALUES ($1, $2, 'locks', 'locks', $1, 'sealed', $3)`,
      [ids.key, ids.account, usd / 5n],
    );
    await observer.query(
      `INSERT INTO holds (id, account_id, api_key_id, amount_nanos, instance_id) VALUES ($1, $2, $3, $4, 'locks-test')`,
      [ids.hold, ids.account, ids.key, usd / 5n],
    );
    return ids;
  }

  const endpointRow = (accountId: string) => ({
    id: `we_${randomUUID()}`,
    accountId,
    url: 'https://hooks.example.com/',
    description: '',
    eventTypes: ['balance.low', 'api_key.cap_reached'],
    isActive: true,
    sealedSecret: 'sealed',
  });

  /** Settles the hold at $0.15, bringing the balance under its alert, in the transaction that holds the key. */
  async function settleHolding(ids: { account: string; key: string; hold: string }, change: () => Promise<unknown>) {
    await settler.query('BEGIN');
    try {
      await settler.query('SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE', [ids.key]);
      // Settled at once: a change the server cancels fails the test below, not as an unhandled rejection.
      const changed = change().then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      await expect.poll(waitingOnLocks).toBe(1);
      const item = {
        lease: false,
        hold: ids.hold,
        account: ids.account,
        key: ids.key,
        claim: String((usd * 3n) / 20n),
        cost: String((usd * 3n) / 20n),
        now: new Date().toISOString(),
        generation: `gen_${ids.hold}`,
        modality: 'text',
        model: 'locks',
        status: 'succeeded',
        request: null,
        usage: null,
        durationMs: 1,
        route: null,
        priceVersion: null,
      };
      await settler.query('SELECT gw_settle_batch($1::jsonb)', [JSON.stringify([item])]);
      await settler.query('COMMIT');
      const outcome = await changed;
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    } catch (error) {
      await settler.query('ROLLBACK');
      throw error;
    }
  }

  /** Sessions of this test's database waiting on a lock (the server may hold other files' databases). */
  const waitingOnLocks = async () => {
    const { rows } = await observer.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return rows[0]?.waiting;
  };

  /** A promise's outcome, settled at once: a change the server cancels fails an assertion, not the run. */
  const outcomeOf = <T>(promise: Promise<T>) =>
    promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error: String(error) }),
    );

  const balanceOf = async (accountId: string) => {
    const { rows } = await observer.query<{ balance: string }>(
      'SELECT balance_nanos::text AS balance FROM accounts WHERE id = $1',
      [accountId],
    );
    return rows.map((row) => BigInt(row.balance));
  };

  it('adds the endpoint and settles, neither cancelled', async () => {
    const ids = await accountWithHold('adding');
    const added = await settleHolding(ids, () => webhooks.createEndpoint(endpointRow(ids.account), 20));
    expect(added).toMatchObject({ accountId: ids.account });
    expect(await balanceOf(ids.account)).toEqual([(usd * 17n) / 20n]);
    const { rows } = await observer.query('SELECT cap_alerts FROM api_keys WHERE id = $1', [ids.key]);
    expect(rows).toEqual([{ cap_alerts: true }]);
  });

  it('removes the endpoint while a media job of its account settles and announces itself, neither cancelled', async () => {
    const ids = await accountWithHold('job');
    const endpoint = await webhooks.createEndpoint(
      { ...endpointRow(ids.account), eventTypes: ['media_job.completed'] },
      20,
    );
    const job = { id: 'job_locks', kind: 'video' as const, model: 'locks', createdAt: new Date() };
    await observer.query(
      `INSERT INTO media_jobs (id, account_id, api_key_id, kind, model, provider_id, upstream_model, request,
                               recorded_request, state, claimed_by, claim_expires_at, price_snapshot, hold_id,
                               hold_nanos, deadline_at)
       VALUES ($1, $2, $3, 'video', 'locks', 'sandbox', 'locks', '{}', '{}', 'processing', 'worker',
               now() + interval '1 hour', '{}', $4, $5, now() + interval '1 hour')`,
      [job.id, ids.account, ids.key, ids.hold, usd / 5n],
    );
    const now = new Date();
    const cost = (usd * 3n) / 20n;
    await settler.query('BEGIN');
    try {
      await settler.query('SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE', [ids.key]);
      // The removal queues for the key first, then the job's settlement: when the key is free, the removal
      // takes it, and then needs the endpoint's row, which the job must not be sharing while it waits for the key.
      const removed = outcomeOf(webhooks.deleteEndpoint(ids.account, endpoint!.id));
      await expect.poll(waitingOnLocks).toBe(1);
      const settled = outcomeOf(
        new MediaJobsRepository(storage.db).settle(
          { ...job, accountId: ids.account, apiKeyId: ids.key, holdId: ids.hold, recordedRequest: {} },
          'worker',
          {
            state: 'succeeded',
            costNanos: cost,
            claimNanos: cost,
            record: usageRecord({
              generationId: job.id,
              accountId: ids.account,
              apiKeyId: ids.key,
              model: job.model,
              modality: 'video',
              status: 'succeeded',
              request: {},
              usage: null,
              startedAt: job.createdAt.getTime(),
              endedAt: now.getTime(),
              claimNanos: cost,
            }),
            result: null,
            error: null,
            assets: [],
            now,
          },
        ),
      );
      await expect.poll(waitingOnLocks).toBe(2);
      await settler.query('COMMIT');
      expect(await removed).toEqual({ value: true });
      expect(await settled).toMatchObject({ value: { held: true, chargedNanos: cost } });
    } catch (error) {
      await settler.query('ROLLBACK');
      throw error;
    }
    expect(await balanceOf(ids.account)).toEqual([(usd * 17n) / 20n]);
  });

  it('removes the endpoint and settles, neither cancelled', async () => {
    const ids = await accountWithHold('removing');
    const endpoint = await webhooks.createEndpoint(endpointRow(ids.account), 20);
    const removed = await settleHolding(ids, () => webhooks.deleteEndpoint(ids.account, endpoint!.id));
    expect(removed).toBe(true);
    expect(await balanceOf(ids.account)).toEqual([(usd * 17n) / 20n]);
    const { rows } = await observer.query('SELECT count(*)::int AS left FROM webhook_endpoints WHERE account_id = $1', [
      ids.account,
    ]);
    expect(rows).toEqual([{ left: 0 }]);
  });
});
