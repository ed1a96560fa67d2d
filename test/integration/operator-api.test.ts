/**
 * The operator API (`/api/operator/v1`): who may use it, the accounts (credit with a required reason, never
 * below zero; disable), keys of any account, usage across accounts with its streamed CSV, provider rows and
 * their test, and the audit log of it all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.ts';
import { generations } from '../../src/storage/schema.ts';
import {
  adminHeaders,
  bearer,
  expectEnvelope,
  keyHeaders,
  signup,
  testPassword,
  uniqueEmail,
} from '../support/http-helpers.ts';
import { operatorGet, operatorSession } from '../support/operator-session.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

interface AccountDetail {
  id: string;
  email: string;
  creditBalance: number;
  role: string;
  disabled: boolean;
  keyCount: number;
  spent: number;
}

interface AuditEntry {
  action: string;
  actor: { kind: string; accountId?: string };
  accountId?: string;
  subject: { type: string; id?: string };
  request?: Record<string, unknown>;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
}

describe('operator API', () => {
  let gateway: TestGateway;
  let operator: { token: string; accountId: string };

  beforeAll(async () => {
    gateway = await startTestGateway();
    operator = await operatorSession(gateway);
  });
  afterAll(async () => gateway?.close());

  const callAs = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string) =>
    gateway.request({ method, url: `/api/operator/v1${url}`, headers: bearer(token) });
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    gateway.request({
      method,
      url: `/api/operator/v1${url}`,
      headers: bearer(operator.token),
      ...(payload === undefined ? {} : { payload }),
    });
  const complete = (key: string, model = 'sandbox-echo') =>
    gateway.request({
      method: 'POST',
      url: '/api/v1/text/completions',
      headers: keyHeaders(key),
      payload: { model, messages: [{ role: 'user', content: 'hello operator' }] },
    });
  const auditOf = async (filter: string) =>
    (await operatorGet<{ results: AuditEntry[] }>(gateway, operator.token, `/audit-log?${filter}`)).results;

  it('answers 401 without a credential, 403 to a user session and to any API key, 200 to an operator session', async () => {
    const url = '/api/operator/v1/accounts';
    expectEnvelope(await gateway.request({ method: 'GET', url }), {
      status: 401,
      code: 'GW_UNAUTHENTICATED',
      path: url,
    });
    const user = await signup(gateway);
    expectEnvelope(await gateway.request({ method: 'GET', url, headers: bearer(user.token) }), {
      status: 403,
      code: 'GW_FORBIDDEN',
      path: url,
    });
    // A key of the operator's own account is refused too, in either header.
    const key = await gateway.gateway.core.services.apiKeys.create(operator.accountId, { name: 'script' });
    for (const headers of [keyHeaders(key.key), bearer(key.key)])
      expectEnvelope(await gateway.request({ method: 'GET', url, headers }), {
        status: 403,
        code: 'GW_SESSION_REQUIRED',
        path: url,
      });
    // And a key beside the operator's session wins over it: still refused.
    expect(
      (await gateway.request({ method: 'GET', url, headers: { ...keyHeaders(key.key), ...bearer(operator.token) } }))
        .statusCode,
    ).toBe(403);
    expect((await call('GET', '/accounts')).statusCode).toBe(200);
    // The account answer names the role, for the dashboard.
    const account = await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(operator.token) });
    expect(account.json()).toMatchObject({ id: operator.accountId, role: 'operator' });
  });

  it('follows a role removed through the admin API from the next request of an open session, and audits both changes', async () => {
    const second = await operatorSession(gateway);
    expect((await callAs(second.token, 'GET', '/accounts')).statusCode).toBe(200);
    const removed = await gateway.request({
      method: 'PATCH',
      url: `/api/admin/v1/accounts/${second.accountId}`,
      headers: adminHeaders,
      payload: { role: 'user' },
    });
    expect(removed.json()).toMatchObject({ role: 'user' });
    expect((await callAs(second.token, 'GET', '/accounts')).statusCode).toBe(403);
    const entries = await auditOf(`accountId=${second.accountId}&action=account.role`);
    expect(entries.map((entry) => [entry.request?.role, entry.before?.role, entry.after?.role])).toEqual([
      ['user', 'operator', 'user'],
      ['operator', 'user', 'operator'],
    ]);
    expect(entries[0]?.actor).toEqual({ kind: 'operator' });
    const invalid = await gateway.request({
      method: 'PATCH',
      url: `/api/admin/v1/accounts/${second.accountId}`,
      headers: adminHeaders,
      payload: { role: 'root' },
    });
    expect(invalid.statusCode).toBe(400);
  });

  it('searches accounts by a piece of their email, paged, taking % and _ as text', async () => {
    const tag = `srch${Date.now()}`;
    for (const n of [1, 2, 3]) await signup(gateway, `${tag}-${n}@example.com`);
    const page = await operatorGet<{ results: AccountDetail[]; total: number }>(
      gateway,
      operator.token,
      `/accounts?email=${tag.toUpperCase()}&limit=2`,
    );
    expect(page.total).toBe(3);
    expect(page.results.map((account) => account.email)).toEqual([`${tag}-1@example.com`, `${tag}-2@example.com`]);
    expect(page.results[0]).toMatchObject({ role: 'user', disabled: false, keyCount: 0 });
    const wildcard = await operatorGet<{ total: number }>(gateway, operator.token, `/accounts?email=${tag}%25_`);
    expect(wildcard.total).toBe(0);
  });

  it('grants and removes credit only with a reason, never below zero, and audits each change as the operator account', async () => {
    const { accountId } = await gateway.createFundedKey({ credits: 5 });
    for (const payload of [{ amount: 3 }, { amount: 3, reason: '   ' }, { amount: 3, reason: '' }]) {
      const refused = await call('POST', `/accounts/${accountId}/credits`, payload);
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.body).toContain('reason');
    }
    const granted = await call('POST', `/accounts/${accountId}/credits`, { amount: 2.5, reason: 'goodwill' });
    expect(granted.json()).toMatchObject({ id: accountId, creditBalance: 7.5 });
    const tooMuch = await call('POST', `/accounts/${accountId}/credits`, { amount: -7.6, reason: 'clawback' });
    const body = expectEnvelope(tooMuch, {
      status: 400,
      code: 'GW_VALIDATION',
      path: `/api/operator/v1/accounts/${accountId}/credits`,
    });
    expect(body.errors[0]).toMatch(/^amount: .*below zero/);
    expect((await operatorGet<AccountDetail>(gateway, operator.token, `/accounts/${accountId}`)).creditBalance).toBe(
      7.5,
    );
    const removed = await call('POST', `/accounts/${accountId}/credits`, { amount: -7.5, reason: 'clawback' });
    expect(removed.json()).toMatchObject({ creditBalance: 0 });
    const entries = await auditOf(`accountId=${accountId}&action=account.credits`);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({
      actor: { kind: 'operator', accountId: operator.accountId },
      request: { amount: -7.5, reason: 'clawback' },
      before: { creditBalance: 7.5 },
      after: { creditBalance: 0 },
    });
  });

  it('disables an account: its keys and sessions are refused on every surface and it cannot sign in; enabling gives them back', async () => {
    const email = uniqueEmail('disabled');
    const user = await signup(gateway, email);
    const key = await gateway.gateway.core.services.apiKeys.create(user.account.id, { name: 'k' });
    await gateway.gateway.core.services.accounts.addCredits(user.account.id, 5, 'test');
    expect((await complete(key.key)).statusCode).toBe(200);
    const disabled = await call('POST', `/accounts/${user.account.id}/disable`);
    expect(disabled.json()).toMatchObject({ disabled: true });
    expect((await complete(key.key)).statusCode).toBe(401);
    const alpha = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: bearer(key.key),
      payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(alpha.statusCode).toBe(401);
    const beta = await gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: keyHeaders(key.key),
      payload: { model: 'sandbox-echo', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(beta.statusCode).toBe(401);
    expect(
      (await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(user.token) })).statusCode,
    ).toBe(401);
    const login = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email, password: testPassword },
    });
    expect(login.statusCode).toBe(403);
    // A wrong password is told nothing more than before.
    const wrong = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email, password: 'not the password' },
    });
    expect(wrong.statusCode).toBe(401);

    expect((await call('POST', `/accounts/${user.account.id}/enable`)).json()).toMatchObject({ disabled: false });
    expect((await complete(key.key)).statusCode).toBe(200);
    expect(
      (await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(user.token) })).statusCode,
    ).toBe(200);
    const entries = await auditOf(`accountId=${user.account.id}`);
    expect(entries.map((entry) => entry.action)).toEqual(expect.arrayContaining(['account.disable', 'account.enable']));
    expect(entries.find((entry) => entry.action === 'account.disable')).toMatchObject({
      before: { disabled: false },
      after: { disabled: true },
    });
  });

  it('refuses to let an operator disable their own account', async () => {
    const refused = await call('POST', `/accounts/${operator.accountId}/disable`);
    expect(refused.statusCode).toBe(400);
    expect((await call('GET', '/accounts')).statusCode).toBe(200);
  });

  it("lists any account's keys with caps and spend, and disables and revokes them", async () => {
    const { accountId, keyId, key } = await gateway.createFundedKey({ credits: 5, limits: { daily: 2 } });
    expect((await complete(key)).statusCode).toBe(200);
    expect(await operatorGet<{ keyCount: number }>(gateway, operator.token, `/accounts/${accountId}`)).toMatchObject({
      keyCount: 1,
    });
    const keys = await operatorGet<
      Array<{ id: string; limits: { daily?: number }; spend: { daily: { spent: number; limit?: number } } }>
    >(gateway, operator.token, `/accounts/${accountId}/api-keys`);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ id: keyId, limits: { daily: 2 }, spend: { daily: { limit: 2 } } });
    expect(keys[0]!.spend.daily.spent).toBeGreaterThan(0);
    expect((await call('PATCH', `/api-keys/${keyId}`, { isActive: false })).json()).toMatchObject({ isActive: false });
    expect((await complete(key)).statusCode).toBe(401);
    expect((await call('PATCH', `/api-keys/${keyId}`, { isActive: true })).statusCode).toBe(200);
    expect((await complete(key)).statusCode).toBe(200);
    expect((await call('DELETE', `/api-keys/${keyId}`)).statusCode).toBe(204);
    expect((await complete(key)).statusCode).toBe(401);
    expect((await call('DELETE', `/api-keys/${keyId}`)).statusCode).toBe(404);
    const entries = await auditOf(`accountId=${accountId}&actor=${operator.accountId}`);
    expect(entries.map((entry) => entry.action)).toEqual(['api-key.revoke', 'api-key.update', 'api-key.update']);
  });

  it('filters usage across accounts by account, key, model, provider row, status and time, with totals', async () => {
    const first = await gateway.createFundedKey({ credits: 5 });
    const second = await gateway.createFundedKey({ credits: 5 });
    for (const key of [first.key, first.key, second.key]) expect((await complete(key)).statusCode).toBe(200);
    type Page = {
      results: Array<{ userId: string; route?: { providerId: string } }>;
      total: number;
      totals: { generations: number; usdCost: number };
    };
    const mine = await operatorGet<Page>(gateway, operator.token, `/usage?accountId=${first.accountId}`);
    expect(mine.total).toBe(2);
    expect(mine.totals.generations).toBe(2);
    expect(mine.totals.usdCost).toBeGreaterThan(0);
    expect(mine.results.every((record) => record.userId === first.accountId)).toBe(true);
    expect(mine.results[0]?.route?.providerId).toBe('sandbox');
    const byKey = await operatorGet<Page>(
      gateway,
      operator.token,
      `/usage?apiKeyId=${second.keyId}&model=sandbox-echo`,
    );
    expect(byKey.total).toBe(1);
    const byRow = await operatorGet<Page>(
      gateway,
      operator.token,
      `/usage?accountId=${first.accountId}&providerId=sandbox&upstreamModel=echo&status=succeeded`,
    );
    expect(byRow.total).toBe(2);
    const otherRow = await operatorGet<Page>(
      gateway,
      operator.token,
      `/usage?accountId=${first.accountId}&providerId=openai`,
    );
    expect(otherRow.total).toBe(0);
    const future = await operatorGet<Page>(
      gateway,
      operator.token,
      `/usage?accountId=${first.accountId}&since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    );
    expect(future.total).toBe(0);
  });

  it('streams the CSV export of many records page by page, with a header line, every record once, and formula cells defused', async () => {
    const { accountId } = await gateway.createFundedKey({ credits: 1 });
    const count = 1_234;
    const base = Date.now() - 3_600_000;
    const rows = Array.from({ length: count }, (_, index) => ({
      id: newId('gen'),
      accountId,
      modality: 'text',
      model: index === 0 ? '=HYPERLINK("http://evil.example","x")' : index === 1 ? '@SUM(A1)' : 'sandbox-echo',
      status: index === 2 ? '+cmd' : 'succeeded',
      usdCostNanos: 1_000n,
      // Several records share each millisecond: the walk's keyset must neither skip nor repeat them.
      createdAt: new Date(base + Math.floor(index / 3)),
    }));
    const db = gateway.gateway.core.storage.db;
    for (let start = 0; start < rows.length; start += 500)
      await db.insert(generations).values(rows.slice(start, start + 500));
    const response = await gateway.request({
      method: 'GET',
      url: `/api/operator/v1/usage.csv?accountId=${accountId}`,
      headers: bearer(operator.token),
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/csv/);
    expect(response.headers['content-disposition']).toContain('attachment');
    // Streamed: the length is not known up front.
    expect(response.headers['content-length']).toBeUndefined();
    expect(response.headers['transfer-encoding']).toBe('chunked');
    const lines = response.body.split('\r\n').filter((line) => line !== '');
    expect(lines[0]).toBe(
      'createdAt,id,accountId,apiKeyId,model,modality,status,usdCost,durationMs,providerId,upstreamModel,usage',
    );
    expect(lines).toHaveLength(count + 1);
    const ids = lines.slice(1).map((line) => line.split(',')[1]);
    expect(new Set(ids).size).toBe(count);
    expect(new Set(ids)).toEqual(new Set(rows.map((row) => row.id)));
    expect(response.body).toContain(`,"'=HYPERLINK(""http://evil.example"",""x"")",`);
    expect(response.body).toContain(",'@SUM(A1),");
    expect(response.body).toContain(",'+cmd,");
    expect(response.body).not.toMatch(/,[=+@]/);
    const totals = await operatorGet<{ totals: { generations: number; usdCost: number } }>(
      gateway,
      operator.token,
      `/usage?accountId=${accountId}&limit=1`,
    );
    expect(totals.totals).toEqual({ generations: count, usdCost: 0.001234 });
  });

  it("lists provider rows with breaker and health from this process's attempts, and tests a row without billing anyone", async () => {
    const { key } = await gateway.createFundedKey({ credits: 5 });
    expect((await complete(key)).statusCode).toBe(200);
    type Row = {
      providerId: string;
      upstreamModel: string;
      models: string[];
      breaker: string;
      testable: string | null;
      health: { attempts: number; errorRate: number; p50Ms?: number; p95Ms?: number };
    };
    const rows = await operatorGet<Row[]>(gateway, operator.token, '/providers');
    const echo = rows.find((row) => row.providerId === 'sandbox' && row.upstreamModel === 'echo');
    expect(echo).toMatchObject({
      models: expect.arrayContaining(['sandbox-echo']),
      breaker: 'closed',
      testable: 'text',
    });
    expect(echo!.health.attempts).toBeGreaterThan(0);
    expect(echo!.health.errorRate).toBe(0);
    expect(echo!.health.p95Ms).toBeGreaterThanOrEqual(echo!.health.p50Ms!);
    expect(rows.find((row) => row.upstreamModel === 'video')?.testable).toBeNull();

    const before = await operatorGet<{ total: number }>(gateway, operator.token, '/usage?limit=1');
    const tested = await call('POST', '/providers/test', { providerId: 'sandbox', upstreamModel: 'echo' });
    expect(tested.statusCode, tested.body).toBe(200);
    expect(tested.json()).toMatchObject({ id: 'sandbox/echo', kind: 'text', ok: true, latencyMs: expect.any(Number) });
    const embedding = await call('POST', '/providers/test', { providerId: 'sandbox', upstreamModel: 'embedding' });
    expect(embedding.json()).toMatchObject({ kind: 'embedding', ok: true });
    // Nothing billed, nothing recorded.
    expect((await operatorGet<{ total: number }>(gateway, operator.token, '/usage?limit=1')).total).toBe(before.total);
    expect((await call('POST', '/providers/test', { providerId: 'sandbox', upstreamModel: 'video' })).statusCode).toBe(
      400,
    );
    expect((await call('POST', '/providers/test', { providerId: 'nope', upstreamModel: 'echo' })).statusCode).toBe(404);
    const entries = await auditOf('action=provider-row.test');
    expect(entries[0]).toMatchObject({
      actor: { kind: 'operator', accountId: operator.accountId },
      subject: { type: 'provider-row', id: 'sandbox/embedding' },
    });
    expect(entries[0]?.accountId).toBeUndefined();
  });

  it("keeps the operator's address and account out of the audited account's own log", async () => {
    const user = await signup(gateway);
    await call('POST', `/accounts/${user.account.id}/credits`, { amount: 1, reason: 'welcome' });
    const own = await gateway.request({ method: 'GET', url: '/api/v1/audit-log', headers: bearer(user.token) });
    const entry = own.json<{ results: Array<AuditEntry & { clientAddress?: string }> }>().results[0];
    expect(entry).toMatchObject({ action: 'account.credits' });
    expect(entry?.actor).toEqual({ kind: 'operator' });
    expect(entry?.clientAddress).toBeUndefined();
  });
});
