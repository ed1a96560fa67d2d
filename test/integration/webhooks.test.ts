import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebhooksRepository } from '../../src/storage/webhooks-repository.ts';
import {
  adminHeaders,
  bearer,
  createKeyOverHttp,
  keyHeaders,
  shippedConfigWith,
  signup,
} from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

interface CreatedEndpoint {
  id: string;
  secret: string;
  eventTypes: string[];
}

interface DeliveryPage {
  results: Array<{
    id: string;
    eventType: string;
    state: string;
    attempts: number;
    nextAttemptAt: string | null;
    log: Array<{ attempt: number; statusCode: number | null; error: string | null; responseExcerpt: string | null }>;
  }>;
  total: number;
}

const maxAttempts = 3;
const timeoutMs = 1000;

describe('webhooks', () => {
  let gateway: TestGateway;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    gateway = await startTestGateway({
      configText: shippedConfigWith({
        remoteMedia: 'remoteMedia:\n  allowPrivateAddresses: true',
        webhooks: `webhooks:\n  maxAttempts: ${maxAttempts}\n  timeoutMs: ${timeoutMs}\n  retryBaseMs: 20\n  claimSeconds: 2\n  idlePollMs: 20`,
        jobs: 'jobs:\n  idlePollMs: 20',
      }),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });
  afterEach(async () => {
    await receiver?.close();
  });

  async function endpointFor(key: string, eventTypes: string[]): Promise<CreatedEndpoint> {
    receiver = await WebhookReceiver.start();
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/webhooks/endpoints',
      headers: keyHeaders(key),
      payload: { url: receiver.url, eventTypes, description: 'test receiver' },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<CreatedEndpoint>();
  }

  async function sendTest(key: string, endpointId: string): Promise<string> {
    const response = await gateway.request({
      method: 'POST',
      url: `/api/v1/webhooks/endpoints/${endpointId}/test`,
      headers: keyHeaders(key),
    });
    expect(response.statusCode, response.body).toBe(202);
    return response.json<{ deliveryId: string }>().deliveryId;
  }

  async function deliveries(key: string, endpointId: string): Promise<DeliveryPage> {
    const response = await gateway.request({
      method: 'GET',
      url: `/api/v1/webhooks/endpoints/${endpointId}/deliveries`,
      headers: keyHeaders(key),
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<DeliveryPage>();
  }

  /** Reads the endpoint's log until its newest delivery has ended. */
  async function ended(key: string, endpointId: string): Promise<DeliveryPage['results'][number]> {
    for (let tries = 0; tries < 300; tries++) {
      const [newest] = (await deliveries(key, endpointId)).results;
      if (newest && (newest.state === 'succeeded' || newest.state === 'failed')) return newest;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('the delivery did not end');
  }

  const verify = (secret: string, request: { headers: Record<string, unknown>; body: string }) =>
    new Webhook(secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    });

  it('signs each event as the standardwebhooks library verifies it, and shows the secret only when made', async () => {
    const { key } = await gateway.createFundedKey();
    const endpoint = await endpointFor(key, ['balance.low']);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const listed = await gateway.request({
      method: 'GET',
      url: '/api/v1/webhooks/endpoints',
      headers: keyHeaders(key),
    });
    expect(listed.body).not.toContain(endpoint.secret);
    expect(listed.json()).toEqual([expect.objectContaining({ id: endpoint.id, eventTypes: ['balance.low'] })]);

    const deliveryId = await sendTest(key, endpoint.id);
    const [request] = await receiver.waitFor(1);
    expect(request!.headers['webhook-id']).toBe(deliveryId);
    expect(request!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(verify(endpoint.secret, request!)).toEqual({
      type: 'webhook.test',
      timestamp: expect.any(String),
      data: expect.objectContaining({ endpointId: endpoint.id }),
    });
    // Any change to the body breaks the signature.
    expect(() => verify(endpoint.secret, { ...request!, body: request!.body.replace('test', 'tesT') })).toThrow();

    const delivery = await ended(key, endpoint.id);
    expect(delivery).toMatchObject({ id: deliveryId, state: 'succeeded', attempts: 1 });
    expect(delivery.log).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, responseExcerpt: 'ok' })]);

    // A rotated secret signs from now on; the old one no longer verifies.
    const rotated = await gateway.request({
      method: 'POST',
      url: `/api/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`,
      headers: keyHeaders(key),
    });
    const { secret } = rotated.json<{ secret: string }>();
    expect(secret).not.toBe(endpoint.secret);
    await sendTest(key, endpoint.id);
    const [, second] = await receiver.waitFor(2);
    expect(verify(secret, second!)).toMatchObject({ type: 'webhook.test' });
    expect(() => verify(endpoint.secret, second!)).toThrow();

    // Each change is in the account's audit log, which holds neither secret.
    const audit = await gateway.request({ method: 'GET', url: '/api/v1/audit-log', headers: keyHeaders(key) });
    const actions = audit.json<{ results: Array<{ action: string }> }>().results.map((entry) => entry.action);
    expect(actions).toEqual(['webhook.test', 'webhook.rotate-secret', 'webhook.test', 'webhook.create']);
    expect(audit.body).not.toContain(endpoint.secret.slice(6));
    expect(audit.body).not.toContain(secret.slice(6));
  });

  it('queues one test event at a time: sent side by side while one is being delivered, the others answer 409', async () => {
    const { key } = await gateway.createFundedKey();
    const endpoint = await endpointFor(key, ['api_key.disabled']);
    receiver.next = (_request, index) => (index === 0 ? 'stall' : { status: 204 });
    const first = await sendTest(key, endpoint.id);
    const send = () =>
      gateway.request({
        method: 'POST',
        url: `/api/v1/webhooks/endpoints/${endpoint.id}/test`,
        headers: keyHeaders(key),
      });
    const refused = await Promise.all(Array.from({ length: 5 }, send));
    for (const response of refused) {
      expect(response.statusCode, response.body).toBe(409);
      expect(response.headers['x-gateway-error-code']).toBe('GW_CONFLICT');
    }
    const delivery = await ended(key, endpoint.id);
    expect(delivery).toMatchObject({ id: first, state: 'succeeded' });
    expect((await deliveries(key, endpoint.id)).results).toHaveLength(1);
    // Once it has ended, the next test event is queued.
    expect(await sendTest(key, endpoint.id)).not.toBe(first);
  });

  it('retries after a 500 and after a time-out under the same webhook-id, then succeeds', async () => {
    const { key } = await gateway.createFundedKey();
    const endpoint = await endpointFor(key, ['api_key.disabled']);
    receiver.next = (_request, index) =>
      index === 0 ? { status: 500, body: 'boom' } : index === 1 ? 'stall' : { status: 204 };
    const deliveryId = await sendTest(key, endpoint.id);
    const delivery = await ended(key, endpoint.id);
    expect(receiver.received.map((request) => request.headers['webhook-id'])).toEqual([
      deliveryId,
      deliveryId,
      deliveryId,
    ]);
    for (const request of receiver.received)
      expect(verify(endpoint.secret, request)).toMatchObject({ type: 'webhook.test' });
    expect(delivery).toMatchObject({ state: 'succeeded', attempts: 3 });
    expect(delivery.log).toEqual([
      expect.objectContaining({
        attempt: 1,
        statusCode: 500,
        error: 'the endpoint answered HTTP 500',
        responseExcerpt: 'boom',
      }),
      expect.objectContaining({ attempt: 2, statusCode: null, error: `no answer within ${timeoutMs} ms` }),
      expect.objectContaining({ attempt: 3, statusCode: 204, error: null }),
    ]);
  });

  it("keeps a bounded, storable excerpt of the receiver's answer, whatever bytes it holds", async () => {
    const { key } = await gateway.createFundedKey();
    const endpoint = await endpointFor(key, ['balance.low']);
    receiver.next = () => ({ status: 200, body: `ok\u0000${'x'.repeat(5000)}` });
    await sendTest(key, endpoint.id);
    const delivery = await ended(key, endpoint.id);
    expect(delivery).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect(delivery.log[0]!.responseExcerpt).toBe(`ok\uFFFD${'x'.repeat(509)}`);
    expect(receiver.received).toHaveLength(1);
  });

  it("waits out a 429's retry-after when it asks for longer than the backoff", async () => {
    const { key } = await gateway.createFundedKey();
    const endpoint = await endpointFor(key, ['balance.low']);
    receiver.next = () => ({ status: 429, headers: { 'retry-after': '3600' } });
    await sendTest(key, endpoint.id);
    await receiver.waitFor(1);
    let delivery: DeliveryPage['results'][number] | undefined;
    for (let tries = 0; tries < 100 && delivery?.state !== 'queued'; tries++) {
      [delivery] = (await deliveries(key, endpoint.id)).results;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(delivery).toMatchObject({
      state: 'queued',
      attempts: 1,
      log: [expect.objectContaining({ statusCode: 429 })],
    });
    // The backoff alone (20 ms) would have sent it again by now: the next attempt waits the hour asked for.
    expect(Date.parse(delivery!.nextAttemptAt!)).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect(receiver.received).toHaveLength(1);
  });

  it('gives up after the configured attempts, and at once on an answer not worth retrying', async () => {
    const { key } = await gateway.createFundedKey();
    const endpoint = await endpointFor(key, ['api_key.disabled']);
    receiver.next = () => ({ status: 503 });
    await sendTest(key, endpoint.id);
    const delivery = await ended(key, endpoint.id);
    expect(delivery).toMatchObject({ state: 'failed', attempts: maxAttempts });
    expect(receiver.received).toHaveLength(maxAttempts);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.received).toHaveLength(maxAttempts);

    receiver.next = () => ({ status: 410 });
    await sendTest(key, endpoint.id);
    const gone = await ended(key, endpoint.id);
    expect(gone).toMatchObject({ state: 'failed', attempts: 1 });
  });

  it('gives up a delivery whose every attempt was cut short by a stopped process, without sending it again', async () => {
    const { key, accountId } = await gateway.createFundedKey();
    const endpoint = await endpointFor(key, ['balance.low']);
    // As a process that died while sending its last attempt leaves it: claimed, the claim run out.
    await uncheckedRows(
      gateway.gateway.core.storage.db,
      sql`INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_type, data, state, attempts, claimed_by, claim_expires_at)
          VALUES ('msg_cut_short', ${endpoint.id}, ${accountId}, 'balance.low', '{}'::jsonb, 'delivering', ${maxAttempts},
                  'inst_gone', now() - interval '1 second')`,
    );
    const delivery = await ended(key, endpoint.id);
    expect(delivery).toMatchObject({ id: 'msg_cut_short', state: 'failed', attempts: maxAttempts + 1 });
    expect(delivery.log).toEqual([
      expect.objectContaining({ error: `given up: ${maxAttempts} attempts were cut short by processes that stopped` }),
    ]);
    expect(receiver.received).toHaveLength(0);
  });

  it('deletes ended deliveries past their retention with their log, and nothing pending', async () => {
    const { key, accountId } = await gateway.createFundedKey();
    const endpoint = await endpointFor(key, ['balance.low']);
    const db = gateway.gateway.core.storage.db;
    await uncheckedRows(
      db,
      sql`INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_type, data, state, run_after, finished_at)
          VALUES ('msg_old_done', ${endpoint.id}, ${accountId}, 'balance.low', '{}'::jsonb, 'succeeded', now(), now() - interval '40 days'),
                 ('msg_new_done', ${endpoint.id}, ${accountId}, 'balance.low', '{}'::jsonb, 'failed', now(), now() - interval '1 day'),
                 ('msg_old_due', ${endpoint.id}, ${accountId}, 'balance.low', '{}'::jsonb, 'queued', now() + interval '1 day', NULL)`,
    );
    await uncheckedRows(
      db,
      sql`INSERT INTO webhook_attempts (id, delivery_id, attempt, status_code, latency_ms) VALUES ('att_old', 'msg_old_done', 1, 200, 5)`,
    );
    const repository = new WebhooksRepository(db);
    expect(await repository.pruneFinished(new Date(Date.now() - 30 * 86_400_000), 100)).toBe(1);
    const left = await uncheckedRows<{ id: string }>(
      db,
      sql`SELECT id FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id} ORDER BY id`,
    );
    expect(left.map((row) => row.id)).toEqual(['msg_new_done', 'msg_old_due']);
    expect(await uncheckedRows(db, sql`SELECT 1 FROM webhook_attempts WHERE id = 'att_old'`)).toHaveLength(0);
  });

  it("deletes the marks of cap alerts whose window has long ended, and keeps the current ones and a total cap's", async () => {
    const { keyId } = await gateway.createFundedKey();
    const db = gateway.gateway.core.storage.db;
    await uncheckedRows(
      db,
      sql`INSERT INTO api_key_cap_alerts (api_key_id, cap, level, window_start, created_at)
          VALUES (${keyId}, 'daily', 80, '2026-01-01', now() - interval '40 days'),
                 (${keyId}, 'monthly', 100, '2026-01-01', now() - interval '40 days'),
                 (${keyId}, 'total', 80, 'total', now() - interval '400 days'),
                 (${keyId}, 'daily', 80, 'today', now())`,
    );
    const repository = new WebhooksRepository(db);
    expect(await repository.pruneCapAlerts(new Date(Date.now() - 35 * 86_400_000), 1)).toBe(1);
    expect(await repository.pruneCapAlerts(new Date(Date.now() - 35 * 86_400_000), 100)).toBe(1);
    const left = await uncheckedRows<{ cap: string; window_start: string }>(
      db,
      sql`SELECT cap, window_start FROM api_key_cap_alerts WHERE api_key_id = ${keyId} ORDER BY cap`,
    );
    expect(left).toEqual([
      { cap: 'daily', window_start: 'today' },
      { cap: 'total', window_start: 'total' },
    ]);
  });

  it('holds an account to 20 endpoints, and lets none subscribe to the test event', async () => {
    const { key } = await gateway.createFundedKey();
    const create = (eventTypes: string[]) =>
      gateway.request({
        method: 'POST',
        url: '/api/v1/webhooks/endpoints',
        headers: keyHeaders(key),
        payload: { url: 'https://hooks.example.com/many', eventTypes },
      });
    const test = await create(['webhook.test']);
    expect(test.statusCode).toBe(400);
    expect(test.body).toContain('eventTypes');
    for (let n = 0; n < 15; n++) expect((await create(['balance.low'])).statusCode).toBe(201);
    // Sent side by side, no more pass the bound than it leaves room for.
    const together = await Promise.all(Array.from({ length: 10 }, () => create(['balance.low'])));
    expect(together.filter((response) => response.statusCode === 201)).toHaveLength(5);
    const refused = await create(['balance.low']);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('at most 20 webhook endpoints');
    const listed = await gateway.request({
      method: 'GET',
      url: '/api/v1/webhooks/endpoints',
      headers: keyHeaders(key),
    });
    expect(listed.json()).toHaveLength(20);
  });

  it('refuses endpoints that are not https (loopback http aside, when private addresses are allowed)', async () => {
    const { key } = await gateway.createFundedKey();
    for (const url of [
      'http://hooks.example.com/x',
      'ftp://127.0.0.1/x',
      'http://10.0.0.1/x',
      'https://user:pw@example.com/',
    ]) {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/webhooks/endpoints',
        headers: keyHeaders(key),
        payload: { url, eventTypes: ['balance.low'] },
      });
      expect(response.statusCode, url).toBe(400);
      expect(response.body, url).toContain('url');
    }
    const unknown = await gateway.request({
      method: 'POST',
      url: '/api/v1/webhooks/endpoints',
      headers: keyHeaders(key),
      payload: { url: 'https://hooks.example.com/x', eventTypes: ['balance.high'] },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('eventTypes');
  });

  it('needs the CSRF token of a cookie session to change anything', async () => {
    const session = await signup(gateway);
    const csrf = session.response.cookies.find((cookie) => cookie.name === 'gw_csrf')?.value;
    const create = (headers: Record<string, string>) =>
      gateway.request({
        method: 'POST',
        url: '/api/v1/webhooks/endpoints',
        cookies: { gw_session: session.token },
        headers,
        payload: { url: 'https://hooks.example.com/csrf', eventTypes: ['balance.low'] },
      });
    const refused = await create({});
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('GW_CSRF_REJECTED');
    const threshold = await gateway.request({
      method: 'PUT',
      url: '/api/v1/webhooks/balance-alert',
      cookies: { gw_session: session.token },
      payload: { threshold: 1 },
    });
    expect(threshold.statusCode).toBe(403);
    expect((await create({ 'x-csrf-token': csrf! })).statusCode).toBe(201);
  });

  it("keeps each account's endpoints to itself", async () => {
    const owner = await gateway.createFundedKey();
    const other = await gateway.createFundedKey();
    const endpoint = await endpointFor(owner.key, ['balance.low']);
    for (const [method, url] of [
      ['PATCH', `/api/v1/webhooks/endpoints/${endpoint.id}`],
      ['POST', `/api/v1/webhooks/endpoints/${endpoint.id}/test`],
      ['POST', `/api/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`],
      ['GET', `/api/v1/webhooks/endpoints/${endpoint.id}/deliveries`],
      ['DELETE', `/api/v1/webhooks/endpoints/${endpoint.id}`],
    ] as const) {
      const response = await gateway.request({
        method,
        url,
        headers: keyHeaders(other.key),
        ...(method === 'PATCH' ? { payload: { isActive: false } } : {}),
      });
      expect(response.statusCode, `${method} ${url}`).toBe(404);
    }
    expect(receiver.received).toHaveLength(0);
  });

  /** One sandbox image: exactly 0.001 USD, charged by the job's settlement. */
  async function image(key: string, text = 'a heron'): Promise<number> {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-image', content: [{ type: 'text', text }] },
    });
    return response.statusCode;
  }

  const credit = (accountId: string, amount: number) =>
    gateway.request({
      method: 'POST',
      url: `/api/admin/v1/accounts/${accountId}/credits`,
      headers: adminHeaders,
      payload: { amount },
    });

  /** Waits a little for deliveries that should not come, then answers the events of `type` received. */
  async function settledEvents(type: string): Promise<Array<{ data: Record<string, unknown> }>> {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return receiver.ofType(type).map((request) => JSON.parse(request.body) as { data: Record<string, unknown> });
  }

  it('sends balance.low once per crossing of the threshold by a settlement', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 0.0025 });
    await endpointFor(key, ['balance.low']);
    const set = await gateway.request({
      method: 'PUT',
      url: '/api/v1/webhooks/balance-alert',
      headers: keyHeaders(key),
      payload: { threshold: 0.002 },
    });
    expect(set.json()).toEqual({ threshold: 0.002 });
    expect(await image(key)).toBe(200); // 0.0025 -> 0.0015: crossed
    await receiver.waitFor(1);
    expect(await image(key)).toBe(200); // 0.0015 -> 0.0005: still below, nothing
    expect(await settledEvents('balance.low')).toHaveLength(1);
    await credit(accountId, 0.001); // 0.0015: risen, but not to the threshold
    expect(await image(key)).toBe(200); // -> 0.0005
    expect(await settledEvents('balance.low')).toHaveLength(1);
    await credit(accountId, 0.002); // 0.0025: at/above again
    expect(await image(key)).toBe(200); // -> 0.0015: crossed again
    await receiver.waitFor(2);
    const events = await settledEvents('balance.low');
    expect(events).toHaveLength(2);
    expect(events[0]!.data).toEqual({ accountId, balance: 0.0015, threshold: 0.002 });
  });

  it('sends api_key.cap_reached at 80% and 100% of a cap, once per window and level', async () => {
    const { key, keyId } = await gateway.createFundedKey({ credits: 1, limits: { daily: 0.005 } });
    await endpointFor(key, ['api_key.cap_reached']);
    for (let n = 0; n < 3; n++) expect(await image(key)).toBe(200); // 0.003: 60%
    expect(await settledEvents('api_key.cap_reached')).toHaveLength(0);
    expect(await image(key)).toBe(200); // 0.004: 80%
    await receiver.waitFor(1);
    expect(await image(key)).toBe(200); // 0.005: 100%
    await receiver.waitFor(2);
    expect(await image(key)).toBe(429); // past the cap: refused, nothing more
    const events = await settledEvents('api_key.cap_reached');
    expect(events.map((event) => event.data)).toEqual([
      expect.objectContaining({ apiKeyId: keyId, cap: 'daily', level: 80, limit: 0.005, spent: 0.004 }),
      expect.objectContaining({ apiKeyId: keyId, cap: 'daily', level: 100, limit: 0.005, spent: 0.005 }),
    ]);
  });

  /** A key's caps changed as its owner (a session, `token`) or the operator (`token` absent) changes them. */
  async function setCaps(keyId: string, caps: Record<string, number | null>, token?: string): Promise<void> {
    const response = await gateway.request({
      method: 'PATCH',
      url: token ? `/api/v1/api-keys/${keyId}/usage-limit` : `/api/admin/v1/api-keys/${keyId}/usage-limit`,
      headers: token ? bearer(token) : adminHeaders,
      payload: caps,
    });
    expect(response.statusCode, response.body).toBe(200);
  }

  async function windowStartsOf(keyId: string): Promise<{ day: string; week: string; month: string }> {
    const [row] = await uncheckedRows<{ day: string; week: string; month: string }>(
      gateway.gateway.core.storage.db,
      sql`SELECT day_start::text AS day, week_start::text AS week, month_start::text AS month
            FROM api_keys WHERE id = ${keyId}`,
    );
    return row!;
  }

  it('announces the levels a lowered cap reaches, once per window and level, whoever lowers it', async () => {
    const { token, account } = await signup(gateway);
    await credit(account.id, 1);
    const { id: keyId, key } = await createKeyOverHttp(gateway, bearer(token));
    await endpointFor(key, ['api_key.cap_reached']);
    for (let n = 0; n < 3; n++) expect(await image(key)).toBe(200); // 0.003 in every window
    const starts = await windowStartsOf(keyId);
    const windowOf: Record<string, string> = { daily: starts.day, monthly: starts.month, total: 'total' };
    const event = (cap: string, level: number, limit: number) => ({
      apiKeyId: keyId,
      name: 'http key',
      cap,
      level,
      limit,
      spent: 0.003,
      windowStart: windowOf[cap],
    });

    await setCaps(keyId, { daily: 0.0035 }); // the operator: 86%
    await receiver.waitFor(1);
    await setCaps(keyId, { daily: 0.003, monthly: 0 }, token); // the owner: daily at 100%, monthly past both
    await receiver.waitFor(4);
    await setCaps(keyId, { daily: 0.002, monthly: 0.001 }, token); // lower still: both levels already announced
    await setCaps(keyId, { weekly: 0.01 }); // 30%: nothing reached
    await setCaps(keyId, { total: 0.00375 }); // exactly 80%
    await receiver.waitFor(5);
    await setCaps(keyId, { daily: null, monthly: null, total: 0.004 }); // 75% again; then spending reaches 100%
    expect(await image(key)).toBe(200);
    await receiver.waitFor(6);
    const events = (await settledEvents('api_key.cap_reached')).map((received) => received.data);
    expect(events).toHaveLength(6);
    expect(events).toEqual(
      expect.arrayContaining([
        event('daily', 80, 0.0035),
        event('daily', 100, 0.003),
        event('monthly', 80, 0),
        event('monthly', 100, 0),
        event('total', 80, 0.00375),
        { ...event('total', 100, 0.004), spent: 0.004 },
      ]),
    );
  });

  it("reads a lowered cap against the spend of the window now running, not a counter's earlier window", async () => {
    const { key, keyId } = await gateway.createFundedKey({ credits: 1 });
    await endpointFor(key, ['api_key.cap_reached']);
    for (let n = 0; n < 2; n++) expect(await image(key)).toBe(200);
    // The key last spent yesterday (as a key does that spends nothing today): its day counter is yesterday's.
    await uncheckedRows(
      gateway.gateway.core.storage.db,
      sql`UPDATE api_keys SET day_start = day_start - 1 WHERE id = ${keyId}`,
    );
    await setCaps(keyId, { daily: 0.001 }); // today it has spent nothing
    expect(await settledEvents('api_key.cap_reached')).toHaveLength(0);
    const { week } = await windowStartsOf(keyId);
    await setCaps(keyId, { weekly: 0.002 }); // this week's 0.002 is in its window
    await receiver.waitFor(2);
    const events = (await settledEvents('api_key.cap_reached')).map((received) => received.data);
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ cap: 'weekly', level: 80, spent: 0.002, windowStart: week }),
        expect.objectContaining({ cap: 'weekly', level: 100, spent: 0.002, windowStart: week }),
      ]),
    );
    expect(events).toHaveLength(2);
  });

  it('checks caps only for keys of accounts whose active endpoints take api_key.cap_reached', async () => {
    const capAlerts = async (accountId: string) =>
      (
        await uncheckedRows<{ cap_alerts: boolean }>(
          gateway.gateway.core.storage.db,
          sql`SELECT cap_alerts FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, id`,
        )
      ).map((row) => row.cap_alerts);
    const marks = async (keyId: string) =>
      (
        await uncheckedRows(
          gateway.gateway.core.storage.db,
          sql`SELECT 1 FROM api_key_cap_alerts WHERE api_key_id = ${keyId}`,
        )
      ).length;
    // No endpoint: the key pays nothing at its settlements, and no mark is written when it passes a level.
    const plain = await gateway.createFundedKey({ credits: 1, limits: { total: 0.001 } });
    expect(await capAlerts(plain.accountId)).toEqual([false]);
    expect(await image(plain.key)).toBe(200);
    expect(await marks(plain.keyId)).toBe(0);

    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const endpoint = await endpointFor(key, ['api_key.cap_reached']);
    await gateway.gateway.core.services.apiKeys.create(accountId, { name: 'made after the endpoint' });
    expect(await capAlerts(accountId)).toEqual([true, true]);
    const patch = (body: Record<string, unknown>) =>
      gateway.request({
        method: 'PATCH',
        url: `/api/v1/webhooks/endpoints/${endpoint.id}`,
        headers: keyHeaders(key),
        payload: body,
      });
    await patch({ isActive: false });
    expect(await capAlerts(accountId)).toEqual([false, false]);
    await patch({ isActive: true });
    expect(await capAlerts(accountId)).toEqual([true, true]);
    await patch({ eventTypes: ['balance.low'] });
    expect(await capAlerts(accountId)).toEqual([false, false]);
    await patch({ eventTypes: ['api_key.cap_reached'] });
    await gateway.request({
      method: 'DELETE',
      url: `/api/v1/webhooks/endpoints/${endpoint.id}`,
      headers: keyHeaders(key),
    });
    expect(await capAlerts(accountId)).toEqual([false, false]);
  });

  it('sends api_key.disabled each time a key is disabled or revoked', async () => {
    const { key, accountId } = await gateway.createFundedKey();
    await endpointFor(key, ['api_key.disabled']);
    const other = await gateway.gateway.core.services.apiKeys.create(accountId, { name: 'second' });
    const patch = (isActive: boolean) =>
      gateway.request({
        method: 'PATCH',
        url: `/api/admin/v1/api-keys/${other.id}`,
        headers: adminHeaders,
        payload: { isActive },
      });
    await patch(false);
    await patch(false); // already disabled: no crossing
    await patch(true);
    await patch(false);
    await patch(true);
    await gateway.request({ method: 'DELETE', url: `/api/admin/v1/api-keys/${other.id}`, headers: adminHeaders });
    await receiver.waitFor(3);
    const events = await settledEvents('api_key.disabled');
    // Deliveries run side by side: they may arrive in any order.
    const byReason = (event: { data: Record<string, unknown> }) => String(event.data.reason);
    expect(events.sort((a, b) => byReason(a).localeCompare(byReason(b))).map((event) => event.data)).toEqual([
      { apiKeyId: other.id, name: 'second', reason: 'disabled' },
      { apiKeyId: other.id, name: 'second', reason: 'disabled' },
      { apiKeyId: other.id, name: 'second', reason: 'revoked' },
    ]);
  });

  it('sends media_job.completed and media_job.failed when a job ends', async () => {
    const { key } = await gateway.createFundedKey();
    await endpointFor(key, ['media_job.completed', 'media_job.failed']);
    expect(await image(key, 'a heron')).toBe(200);
    await image(key, 'a heron sandbox-fail');
    await receiver.waitFor(2);
    const completed = await settledEvents('media_job.completed');
    const failed = await settledEvents('media_job.failed');
    expect(completed.map((event) => event.data)).toEqual([
      expect.objectContaining({ kind: 'image', model: 'sandbox-image', state: 'succeeded' }),
    ]);
    expect(failed.map((event) => event.data)).toEqual([
      expect.objectContaining({ kind: 'image', state: 'failed', error: expect.stringContaining('sandbox-fail') }),
    ]);
  });
});
