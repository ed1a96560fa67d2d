/**
 * Webhook deliveries are shared out between accounts, and within an account between its endpoints: a backlog
 * of one (an account's endpoints that never answer, each attempt holding a sending slot for `timeoutMs`) must
 * not keep another's deliveries waiting behind it. The claim gives the next free slot to the account with the
 * fewest deliveries in flight, counted across processes, so another account waits for one slot to free at most.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { WebhooksRepository } from '../../src/storage/webhooks-repository.ts';
import { bearer, createKeyOverHttp, shippedConfigWith, signup } from '../support/http-helpers.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

describe('claiming webhook deliveries', () => {
  let database: TestDatabase;
  let storage: Storage;
  let webhooks: WebhooksRepository;
  /** Deliveries queued by `queue`, oldest first: each is a second younger than the one before. */
  let queued = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.options);
    webhooks = new WebhooksRepository(storage.db);
    for (const account of ['flood', 'quiet', 'third'])
      await storage.db.execute(
        sql`INSERT INTO accounts (id, email, balance_nanos) VALUES (${account}, ${`${account}@example.com`}, 0)`,
      );
    for (const [endpoint, account] of [
      ['flood_1', 'flood'],
      ['flood_2', 'flood'],
      ['quiet_1', 'quiet'],
      ['third_1', 'third'],
    ] as const)
      await storage.db.execute(
        sql`INSERT INTO webhook_endpoints (id, account_id, url, event_types, sealed_secret)
            VALUES (${endpoint}, ${account}, 'https://hooks.example.com/', ARRAY['webhook.test'], 'sealed')`,
      );
  });
  beforeEach(async () => {
    await storage.db.execute(sql`DELETE FROM webhook_deliveries`);
  });
  afterAll(async () => {
    await storage?.close();
    await database?.drop();
  });

  /** Queues `count` due deliveries to the endpoint, each created (and due) after every one queued before. */
  async function queue(endpoint: string, count = 1): Promise<string[]> {
    const ids: string[] = [];
    for (let n = 0; n < count; n++) {
      const id = `msg_${String(queued++).padStart(6, '0')}`;
      const at = new Date(Date.UTC(2026, 0, 1) + queued * 1000).toISOString();
      await storage.db.execute(
        sql`INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_type, data, run_after, created_at)
            SELECT ${id}, e.id, e.account_id, 'webhook.test', '{}'::jsonb, ${at}::timestamptz, ${at}::timestamptz
              FROM webhook_endpoints e WHERE e.id = ${endpoint}`,
      );
      ids.push(id);
    }
    return ids;
  }

  const claim = async (owner: string, limit = 1) =>
    (await webhooks.claim(owner, { limit, claimSeconds: 60 })).map((delivery) => delivery.id);

  it("gives the next free slot to another account's delivery, not to the backlog queued before it", async () => {
    const flood = await queue('flood_1', 50);
    const [quiet] = await queue('quiet_1');
    // The oldest delivery goes first while no account has one in flight; after it, the account that has none.
    expect(await claim('process-a')).toEqual([flood[0]]);
    expect(await claim('process-b')).toEqual([quiet]);
    expect(await claim('process-a')).toEqual([flood[1]]);
  });

  it("shares out one claim's slots between the accounts with deliveries due, oldest first within each", async () => {
    const flood = await queue('flood_1', 20);
    const [quiet] = await queue('quiet_1');
    const [third] = await queue('third_1');
    expect((await claim('process-a', 4)).sort()).toEqual([flood[0], flood[1], quiet, third].sort());
  });

  it('counts the deliveries in flight in every process, and not those whose claim ran out (their process died)', async () => {
    const flood = await queue('flood_1', 3);
    const [quietStale] = await queue('quiet_1');
    // The quiet account's delivery was claimed by a process that died: due again, and holding no slot.
    await storage.db.execute(
      sql`UPDATE webhook_deliveries SET state = 'delivering', attempts = 1, claimed_by = 'process-dead',
                 claim_expires_at = now() - interval '1 second'
           WHERE id = ${quietStale}`,
    );
    // Another process has one of the flooding account's deliveries under way.
    expect(await claim('process-a')).toEqual([flood[0]]);
    // Here the flooding account has one in flight and the quiet one none: the quiet account's turn.
    expect(await claim('process-b')).toEqual([quietStale]);
  });

  it("shares out an account's slots between its endpoints: a backlog of one does not hold back the others", async () => {
    const first = await queue('flood_1', 30);
    const [second] = await queue('flood_2');
    expect(await claim('process-a')).toEqual([first[0]]);
    expect(await claim('process-b')).toEqual([second]);
  });

  it('never claims one delivery for two processes claiming at once', async () => {
    await queue('flood_1', 20);
    await queue('flood_2', 20);
    await queue('quiet_1', 20);
    const claims = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((owner) => claim(`process-${owner}`, 8)));
    const ids = claims.flat();
    expect(new Set(ids).size).toBe(ids.length);
    const [row] = await uncheckedRows<{ claimed: number }>(
      storage.db,
      sql`SELECT count(*)::int AS claimed FROM webhook_deliveries WHERE claimed_by IS NOT NULL`,
    );
    expect(row?.claimed).toBe(ids.length);
  });
});

describe("webhook deliveries: one account's endpoints that never answer", () => {
  const timeoutMs = 500;
  let gateway: TestGateway;
  let silent: WebhookReceiver;
  let answering: WebhookReceiver;

  beforeAll(async () => {
    gateway = await startTestGateway({
      configText: shippedConfigWith({
        remoteMedia: 'remoteMedia:\n  allowPrivateAddresses: true',
        webhooks: `webhooks:\n  maxAttempts: 1\n  timeoutMs: ${timeoutMs}\n  claimSeconds: 5\n  concurrency: 2\n  idlePollMs: 20`,
      }),
    });
    silent = await WebhookReceiver.start();
    silent.next = () => 'stall';
    answering = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await gateway?.close();
    await silent?.close();
    await answering?.close();
  });

  it("do not keep another account's test event waiting behind their backlog", async () => {
    // Twenty endpoints (an account's most) that never answer, each sent api_key.disabled three times: 60
    // attempts of `timeoutMs` each, two at a time, 15 s of sending if the queue were first in, first out.
    const flooding = await signup(gateway);
    const key = await createKeyOverHttp(gateway, bearer(flooding.token));
    for (let n = 0; n < 20; n++) {
      const created = await gateway.request({
        method: 'POST',
        url: '/api/v1/webhooks/endpoints',
        headers: bearer(flooding.token),
        payload: { url: silent.url, eventTypes: ['api_key.disabled'] },
      });
      expect(created.statusCode, created.body).toBe(201);
    }
    for (let round = 0; round < 3; round++)
      for (const isActive of [false, true]) {
        const toggled = await gateway.request({
          method: 'PATCH',
          url: `/api/v1/api-keys/${key.id}`,
          headers: bearer(flooding.token),
          payload: { isActive },
        });
        expect(toggled.statusCode, toggled.body).toBe(200);
      }
    await silent.waitFor(2);

    const other = await signup(gateway);
    const endpoint = await gateway.request({
      method: 'POST',
      url: '/api/v1/webhooks/endpoints',
      headers: bearer(other.token),
      payload: { url: answering.url, eventTypes: ['media_job.completed'] },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const sent = Date.now();
    const test = await gateway.request({
      method: 'POST',
      url: `/api/v1/webhooks/endpoints/${endpoint.json<{ id: string }>().id}/test`,
      headers: bearer(other.token),
    });
    expect(test.statusCode, test.body).toBe(202);
    // Both slots are held by silent endpoints: the test event takes the first to free, within one time-out
    // (and a loaded machine's slack), not after the whole backlog.
    await answering.waitFor(1, 10 * timeoutMs);
    expect(Date.now() - sent).toBeLessThan(6 * timeoutMs);
  });
});
