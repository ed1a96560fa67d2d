import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  adminHeaders,
  bearer,
  expectEnvelope,
  keyHeaders,
  shippedConfigWith,
  signup,
  testPassword,
  uniqueEmail,
  type AccountBody,
  type CreatedKeyBody,
  type SessionBody,
} from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

interface Entry {
  id: string;
  createdAt: string;
  action: string;
  actor: { kind: 'operator' } | { kind: 'account'; accountId: string; apiKeyId?: string };
  accountId?: string;
  subject: { type: string; id?: string };
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  request?: Record<string, unknown>;
  clientAddress?: string;
  requestId?: string;
}

interface Page {
  results: Entry[];
  total: number;
  offset: number;
  limit: number;
}

describe('audit log', () => {
  let gateway: TestGateway;
  let client: pg.Client;

  const operatorPage = async (query: Record<string, string | number> = {}): Promise<Page> => {
    const search = new URLSearchParams(
      Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]),
    );
    const response = await gateway.request({
      method: 'GET',
      url: `/api/admin/v1/audit-log?${search}`,
      headers: adminHeaders,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<Page>();
  };

  const createAccount = async (password?: string) => {
    const email = uniqueEmail('audit');
    const response = await gateway.request({
      method: 'POST',
      url: '/api/admin/v1/accounts',
      headers: adminHeaders,
      payload: { email, credits: 5, ...(password ? { password } : {}) },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<AccountBody>();
  };

  beforeAll(async () => {
    // No job worker: a video task stays queued, so it can be cancelled.
    gateway = await startTestGateway({ configText: shippedConfigWith({ jobs: 'jobs:\n  concurrency: 0' }) });
    client = new pg.Client({ connectionString: gateway.database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await gateway?.close();
  });

  it('records who made a change, its state before and after, when, from which address and in which request', async () => {
    const account = await createAccount();
    const started = Date.now();
    const grant = await gateway.request({
      method: 'POST',
      url: `/api/admin/v1/accounts/${account.id}/credits`,
      headers: { ...adminHeaders, 'x-request-id': 'grant-request-1' },
      payload: { amount: 2.5, note: 'support refund' },
      remoteAddress: '203.0.113.9',
    });
    expect(grant.statusCode, grant.body).toBe(200);
    const [entry] = (await operatorPage({ requestId: 'grant-request-1' })).results;
    expect(entry).toMatchObject({
      action: 'account.credits',
      actor: { kind: 'operator' },
      accountId: account.id,
      subject: { type: 'account', id: account.id },
      before: { email: account.email, creditBalance: 5, rateLimits: {} },
      after: { email: account.email, creditBalance: 7.5, rateLimits: {} },
      request: { amount: 2.5, note: 'support refund' },
      clientAddress: '203.0.113.9',
      requestId: 'grant-request-1',
    });
    const when = Date.parse(entry?.createdAt ?? '');
    expect(when).toBeGreaterThanOrEqual(started - 1000);
    expect(when).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it("names the account and the key that acted, and a key's state before and after", async () => {
    const session = await signup(gateway);
    const created = await gateway.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(session.token),
      payload: { name: 'ci', limits: { daily: 3 } },
    });
    const key = created.json<CreatedKeyBody>();
    const capped = await gateway.request({
      method: 'PATCH',
      url: `/api/v1/api-keys/${key.id}/usage-limit`,
      headers: { ...bearer(session.token), 'x-request-id': `caps-${key.id}` },
      payload: { daily: null, total: 40 },
    });
    expect(capped.statusCode, capped.body).toBe(200);
    const [entry] = (await operatorPage({ requestId: `caps-${key.id}` })).results;
    const keyState = { accountId: session.account.id, name: 'ci', prefix: key.prefix, isActive: true, revoked: false };
    expect(entry).toMatchObject({
      action: 'api-key.spend-caps',
      actor: { kind: 'account', accountId: session.account.id },
      accountId: session.account.id,
      subject: { type: 'api-key', id: key.id },
      before: { ...keyState, limits: { daily: 3 } },
      after: { ...keyState, limits: { total: 40 } },
      request: { daily: null, total: 40 },
    });
    expect(entry?.actor).not.toHaveProperty('apiKeyId');

    // A change made with one of the account's keys names the key: here, a video task it cancels.
    const { key: rawKey, keyId, accountId } = await gateway.createFundedKey();
    const submitted = await gateway.request({
      method: 'POST',
      url: '/api/v1/video/generations',
      headers: keyHeaders(rawKey),
      payload: { model: 'sandbox-video', content: [{ type: 'text', text: 'a heron' }] },
    });
    expect(submitted.statusCode, submitted.body).toBe(200);
    const { taskId } = submitted.json<{ taskId: string }>();
    const cancelled = await gateway.request({
      method: 'POST',
      url: `/api/v1/video/tasks/${taskId}/cancel`,
      headers: keyHeaders(rawKey),
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    const [cancel] = (await operatorPage({ actor: keyId })).results;
    expect(cancel).toMatchObject({
      action: 'media-job.cancel',
      actor: { kind: 'account', accountId, apiKeyId: keyId },
      accountId,
      subject: { type: 'media-job', id: taskId },
      before: { accountId, kind: 'video', model: 'sandbox-video', state: 'queued' },
      after: { accountId, kind: 'video', model: 'sandbox-video', state: 'cancelled' },
    });
  });

  it("records the operator's changes outside HTTP (the CLI's) as the operator's, without address or request id", async () => {
    const { audit, accounts } = gateway.gateway.core.services;
    const email = uniqueEmail('cli');
    const input = { email, password: 'a cli password 123', credits: 2 };
    const account = await audit.operatorChange(
      { action: 'account.create', subject: (created) => ({ type: 'account', id: created.id }), request: input },
      () => accounts.createAccount({ email, password: input.password, creditsUsd: input.credits }),
    );
    await expect(
      audit.operatorChange(
        { action: 'account.credits', subject: { type: 'account', id: account.id }, request: { amount: 'x' } },
        () => accounts.addCredits(account.id, Number.NaN, null),
      ),
    ).rejects.toThrow();
    const entries = (await operatorPage({ accountId: account.id })).results;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toEqual({
      id: expect.any(String),
      createdAt: expect.any(String),
      action: 'account.create',
      actor: { kind: 'operator' },
      accountId: account.id,
      subject: { type: 'account', id: account.id },
      after: { email, creditBalance: 2, rateLimits: {}, role: 'user', disabled: false },
      request: { email, credits: 2 },
    });
  });

  it('keeps no secret: no password, key, session token or their hashes', async () => {
    const password = 'a long secret passphrase 42';
    const account = await createAccount(password);
    const signedIn = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: account.email, password },
    });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const session = signedIn.json<SessionBody>();
    const fresh = await signup(gateway, uniqueEmail('secret'));
    const viaAdmin = (
      await gateway.request({
        method: 'POST',
        url: `/api/admin/v1/accounts/${account.id}/api-keys`,
        headers: adminHeaders,
        payload: { name: 'admin made' },
      })
    ).json<CreatedKeyBody>();
    const viaAccount = (
      await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: bearer(session.token),
        payload: { name: 'own' },
      })
    ).json<CreatedKeyBody>();
    const loggedOut = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: bearer(fresh.token),
    });
    expect(loggedOut.statusCode).toBe(204);

    const actions = (await operatorPage({ accountId: account.id, limit: 100 })).results.map((entry) => entry.action);
    expect(actions).toEqual(
      expect.arrayContaining(['account.create', 'session.sign-in', 'api-key.create', 'api-key.create']),
    );
    const signOut = (await operatorPage({ accountId: fresh.account.id, action: 'session.sign-out' })).results;
    expect(signOut).toHaveLength(1);
    expect(signOut[0]?.subject).toEqual({ type: 'session' });

    const secrets = [password, testPassword, session.token, fresh.token, viaAdmin.key, viaAccount.key];
    const stored = await client.query<{ id: string; sealed_key: string; lookup_hash: string }>(
      'SELECT id, sealed_key, lookup_hash FROM api_keys WHERE id = ANY($1)',
      [[viaAdmin.id, viaAccount.id]],
    );
    const hashes = await client.query<{ token_hash: string; password_hash: string | null }>(
      `SELECT s.token_hash, a.password_hash FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE a.id = $1`,
      [account.id],
    );
    expect(stored.rows).toHaveLength(2);
    expect(hashes.rows.length).toBeGreaterThan(0);
    secrets.push(
      ...stored.rows.flatMap((row) => [row.sealed_key, row.lookup_hash]),
      ...hashes.rows.flatMap((row) => [row.token_hash, row.password_hash ?? '']),
    );
    const log = (await client.query<{ row: string }>('SELECT row_to_json(audit_log)::text AS row FROM audit_log')).rows;
    expect(log.length).toBeGreaterThan(5);
    for (const { row } of log) for (const secret of secrets) expect(row).not.toContain(secret);
    // The sign-in kept the email it was asked for, without the password beside it.
    const [signIn] = (await operatorPage({ accountId: account.id, action: 'session.sign-in' })).results;
    expect(signIn?.request).toEqual({ email: account.email });
  });

  it('is append-only in the database: UPDATE, DELETE and TRUNCATE are refused by its triggers', async () => {
    await createAccount();
    const before = await client.query<{ count: string }>('SELECT count(*)::text AS count FROM audit_log');
    expect(Number(before.rows[0]?.count)).toBeGreaterThan(0);
    for (const statement of [
      "UPDATE audit_log SET action = 'account.create'",
      "UPDATE audit_log SET action = 'x' WHERE id = 'no such entry'",
      'DELETE FROM audit_log',
      "DELETE FROM audit_log WHERE id = 'no such entry'",
      'TRUNCATE audit_log',
    ])
      await expect(client.query(statement), statement).rejects.toThrow(/audit_log is append-only/);
    const after = await client.query<{ count: string }>('SELECT count(*)::text AS count FROM audit_log');
    expect(after.rows[0]?.count).toBe(before.rows[0]?.count);
    const triggers = await client.query<{ tgname: string }>(
      `SELECT tgname FROM pg_trigger WHERE tgrelid = 'audit_log'::regclass AND NOT tgisinternal AND tgenabled <> 'D' ORDER BY 1`,
    );
    expect(triggers.rows.map((row) => row.tgname)).toEqual(['audit_log_append_only', 'audit_log_no_truncate']);
  });

  it('leaves no entry for a change that was refused', async () => {
    const account = await createAccount();
    const refused = await gateway.request({
      method: 'POST',
      url: `/api/admin/v1/accounts/${account.id}/credits`,
      headers: { ...adminHeaders, 'x-request-id': `refused-${account.id}` },
      payload: { amount: 'lots' },
    });
    expect(refused.statusCode).toBe(400);
    const missing = await gateway.request({
      method: 'DELETE',
      url: '/api/admin/v1/api-keys/key_missing',
      headers: { ...adminHeaders, 'x-request-id': `missing-${account.id}` },
    });
    expect(missing.statusCode).toBe(404);
    expect((await operatorPage({ requestId: `refused-${account.id}` })).total).toBe(0);
    expect((await operatorPage({ requestId: `missing-${account.id}` })).total).toBe(0);
  });

  it('answers 500 when the entry cannot be written, so that no success goes without its entry', async () => {
    const account = await createAccount();
    const { audit } = gateway.gateway.core.services;
    const failing = vi.spyOn(audit, 'recordChange').mockRejectedValueOnce(new Error('the log is unwritable'));
    try {
      const answer = await gateway.request({
        method: 'POST',
        url: `/api/admin/v1/accounts/${account.id}/credits`,
        headers: adminHeaders,
        payload: { amount: 1 },
      });
      expect(answer.statusCode).toBe(500);
      expect(failing).toHaveBeenCalledOnce();
    } finally {
      failing.mockRestore();
    }
  });

  it('filters by who acted, the account, the action and the time range, and pages newest first', async () => {
    const session = await signup(gateway);
    const accountId = session.account.id;
    for (const name of ['one', 'two', 'three'])
      await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: bearer(session.token),
        payload: { name },
      });
    await gateway.request({
      method: 'POST',
      url: `/api/admin/v1/accounts/${accountId}/credits`,
      headers: adminHeaders,
      payload: { amount: 1 },
    });

    const all = await operatorPage({ accountId });
    expect(all.results.map((entry) => entry.action)).toEqual([
      'account.credits',
      'api-key.create',
      'api-key.create',
      'api-key.create',
      'account.signup',
    ]);
    expect((await operatorPage({ accountId, actor: 'operator' })).results.map((entry) => entry.action)).toEqual([
      'account.credits',
    ]);
    expect((await operatorPage({ actor: accountId })).total).toBe(4);
    const keys = await operatorPage({ accountId, action: 'api-key.create', limit: 2, offset: 1 });
    expect(keys).toMatchObject({ total: 3, offset: 1, limit: 2 });
    expect(keys.results.map((entry) => entry.after?.name)).toEqual(['two', 'one']);
    const signupAt = all.results[4]?.createdAt ?? '';
    expect((await operatorPage({ accountId, until: signupAt })).total).toBe(0);
    expect((await operatorPage({ accountId, since: signupAt })).total).toBe(5);
    expect((await operatorPage({ accountId, since: new Date(Date.now() + 60_000).toISOString() })).total).toBe(0);
    const wrong = await gateway.request({
      method: 'GET',
      url: '/api/admin/v1/audit-log?since=yesterday',
      headers: adminHeaders,
    });
    expectEnvelope(wrong, { status: 400, code: 'GW_VALIDATION', path: '/api/admin/v1/audit-log' });
  });

  it("lists an account its own entries, the operator's among them without the operator's address", async () => {
    const session = await signup(gateway);
    const stranger = await signup(gateway);
    await gateway.request({
      method: 'POST',
      url: `/api/admin/v1/accounts/${session.account.id}/credits`,
      headers: adminHeaders,
      payload: { amount: 3 },
    });
    await gateway.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(stranger.token),
      payload: { name: 'not yours' },
    });
    const own = await gateway.request({ method: 'GET', url: '/api/v1/audit-log', headers: bearer(session.token) });
    expect(own.statusCode, own.body).toBe(200);
    const entries = own.json<Page>().results;
    expect(entries.map((entry) => entry.action)).toEqual(['account.credits', 'account.signup']);
    expect(entries.every((entry) => entry.accountId === session.account.id)).toBe(true);
    expect(entries[0]).not.toHaveProperty('clientAddress');
    expect(entries[1]?.clientAddress).toEqual(expect.any(String));
    const filtered = await gateway.request({
      method: 'GET',
      url: '/api/v1/audit-log?action=account.signup',
      headers: bearer(session.token),
    });
    expect(filtered.json<Page>().results.map((entry) => entry.action)).toEqual(['account.signup']);
    // The account's listing has no account filter: another account's id is refused as the field it does not
    // have, and lists nothing of that account.
    const other = await gateway.request({
      method: 'GET',
      url: `/api/v1/audit-log?accountId=${stranger.account.id}`,
      headers: bearer(session.token),
    });
    expect(other.statusCode).toBe(400);
    expect(other.json<{ errors: string[] }>().errors).toEqual(['querystring.accountId is not a recognised field']);
    expect(other.body).not.toContain(stranger.account.id);
  });
});
