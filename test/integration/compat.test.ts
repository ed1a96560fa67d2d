import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, bearer, expectEnvelope, keyHeaders, signup } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

interface CapBody {
  limit: number;
  spent: number;
  remaining: number;
}

interface UsageRecordBody {
  id: string;
  userId: string;
  apiKeyId?: string;
  modality: string;
  model: string;
  status: string;
  usdCost: number;
  createdAt: string;
}

interface UsagePageBody {
  results: UsageRecordBody[];
  total: number;
  offset: number;
  limit: number;
}

const nanos = (usd: string) => {
  const [whole = '0', fraction = ''] = usd.split('.');
  return BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0'));
};

describe('account and usage surface (/api/compat/v1)', () => {
  let gateway: TestGateway;

  const get = (url: string, headers: Record<string, string>) => gateway.request({ method: 'GET', url, headers });

  /** Charges `usd` to the account through the real ledger (hold, then settle), as a generation would. */
  const spend = async (account: { accountId: string; keyId: string | null }, usd: string, model = 'sandbox-echo') => {
    const ledger = gateway.gateway.core.services.ledger;
    const hold = await ledger.reserve({
      accountId: account.accountId,
      apiKeyId: account.keyId,
      amountNanos: nanos(usd),
      modelId: model,
    });
    const settled = await hold.settle({ costNanos: nanos(usd), modality: 'text', status: 'succeeded' });
    return settled.generationId;
  };

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => gateway?.close());

  describe('GET /api/compat/v1/balance', () => {
    it('answers exactly {creditBalance} and follows credits and charges', async () => {
      const account = await gateway.createFundedKey({ credits: 5 });
      const first = await get('/api/compat/v1/balance', keyHeaders(account.key));
      expect(first.statusCode).toBe(200);
      expect(first.json()).toEqual({ creditBalance: 5 });

      await spend(account, '1.25');
      expect((await get('/api/compat/v1/balance', keyHeaders(account.key))).json()).toEqual({ creditBalance: 3.75 });

      const added = await gateway.request({
        method: 'POST',
        url: `/api/admin/v1/accounts/${account.accountId}/credits`,
        headers: adminHeaders,
        payload: { amount: 0.1 },
      });
      expect(added.statusCode).toBe(200);
      expect((await get('/api/compat/v1/balance', keyHeaders(account.key))).json()).toEqual({ creditBalance: 3.85 });
    });

    it("is the balance of the credential's own account, also for a session", async () => {
      const session = await signup(gateway);
      const other = await gateway.createFundedKey({ credits: 42 });
      const response = await get('/api/compat/v1/balance', bearer(session.token));
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ creditBalance: session.account.creditBalance });
      expect((await get('/api/compat/v1/balance', keyHeaders(other.key))).json()).toEqual({ creditBalance: 42 });
    });

    it('can go negative when an operator debits more than the balance, and says so', async () => {
      const account = await gateway.createFundedKey({ credits: 0.5 });
      const debited = await gateway.request({
        method: 'POST',
        url: `/api/admin/v1/accounts/${account.accountId}/credits`,
        headers: adminHeaders,
        payload: { amount: -0.75 },
      });
      expect(debited.statusCode).toBe(200);
      expect((await get('/api/compat/v1/balance', keyHeaders(account.key))).json()).toEqual({ creditBalance: -0.25 });
    });
  });

  describe('GET /api/compat/v1/api-key', () => {
    it('a key without caps answers exactly {name, isActive: true}: no cap fields, no balance', async () => {
      const account = await gateway.createFundedKey({ credits: 9 });
      const response = await get('/api/compat/v1/api-key', keyHeaders(account.key));
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ name: 'test key', isActive: true });
    });

    it('shows only the configured caps with limit, spent and remaining', async () => {
      const account = await gateway.createFundedKey({ credits: 20, limits: { daily: 5, total: 10 } });
      const before = (await get('/api/compat/v1/api-key', keyHeaders(account.key))).json<Record<string, unknown>>();
      expect(before).toEqual({
        name: 'test key',
        isActive: true,
        daily: { limit: 5, spent: 0, remaining: 5 },
        total: { limit: 10, spent: 0, remaining: 10 },
      });

      await spend(account, '1.2');
      await spend(account, '0.1');
      const after = (await get('/api/compat/v1/api-key', keyHeaders(account.key))).json<Record<string, CapBody>>();
      expect(after).toEqual({
        name: 'test key',
        isActive: true,
        daily: { limit: 5, spent: 1.3, remaining: 3.7 },
        total: { limit: 10, spent: 1.3, remaining: 8.7 },
      });
      expect(after).not.toHaveProperty('creditBalance');
      expect(after).not.toHaveProperty('weekly');
      expect(after).not.toHaveProperty('monthly');
    });

    it('all four caps when all four are configured', async () => {
      const account = await gateway.createFundedKey({
        credits: 20,
        limits: { daily: 1, weekly: 2, monthly: 3, total: 4 },
      });
      await spend(account, '0.5');
      expect((await get('/api/compat/v1/api-key', keyHeaders(account.key))).json()).toEqual({
        name: 'test key',
        isActive: true,
        daily: { limit: 1, spent: 0.5, remaining: 0.5 },
        weekly: { limit: 2, spent: 0.5, remaining: 1.5 },
        monthly: { limit: 3, spent: 0.5, remaining: 2.5 },
        total: { limit: 4, spent: 0.5, remaining: 3.5 },
      });
    });

    it('clamps remaining at 0 when spent exceeds a lowered cap', async () => {
      const session = await signup(gateway);
      const created = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: bearer(session.token),
        payload: { name: 'capped', limits: { daily: 3, monthly: 10 } },
      });
      expect(created.statusCode).toBe(201);
      const key = created.json<{ id: string; key: string }>();
      await spend({ accountId: session.account.id, keyId: key.id }, '0.8');

      const lowered = await gateway.request({
        method: 'PATCH',
        url: `/api/v1/api-keys/${key.id}/usage-limit`,
        headers: bearer(session.token),
        payload: { daily: 0.5, total: 0.8 },
      });
      expect(lowered.statusCode).toBe(200);
      expect((await get('/api/compat/v1/api-key', keyHeaders(key.key))).json()).toEqual({
        name: 'capped',
        isActive: true,
        daily: { limit: 0.5, spent: 0.8, remaining: 0 },
        monthly: { limit: 10, spent: 0.8, remaining: 9.2 },
        total: { limit: 0.8, spent: 0.8, remaining: 0 },
      });
    });

    it('spend of another key of the same account does not count against this key', async () => {
      const account = await gateway.createFundedKey({ credits: 10, limits: { total: 2 } });
      const sibling = await gateway.gateway.core.services.apiKeys.create(account.accountId, {
        name: 'sibling',
        limits: { total: 2 },
      });
      await spend({ accountId: account.accountId, keyId: sibling.id }, '1.5');
      await spend({ accountId: account.accountId, keyId: null }, '1');
      expect((await get('/api/compat/v1/api-key', keyHeaders(account.key))).json()).toEqual({
        name: 'test key',
        isActive: true,
        total: { limit: 2, spent: 0, remaining: 2 },
      });
      expect((await get('/api/compat/v1/api-key', keyHeaders(sibling.key))).json()).toEqual({
        name: 'sibling',
        isActive: true,
        total: { limit: 2, spent: 1.5, remaining: 0.5 },
      });
    });
  });

  describe('GET /api/compat/v1/usage', () => {
    const recordCount = 25;
    let owner: { accountId: string; keyId: string; key: string };
    let stranger: { accountId: string; keyId: string; key: string };
    /** Generation ids of the owner, oldest first. */
    const ownerIds: string[] = [];
    const strangerIds: string[] = [];

    const page = async (query: string, headers: Record<string, string> = keyHeaders(owner.key)) => {
      const response = await get(`/api/compat/v1/usage${query}`, headers);
      expect(response.statusCode, response.body).toBe(200);
      return response.json<UsagePageBody>();
    };

    const nextMillisecond = async () => {
      const start = Date.now();
      while (Date.now() === start) await new Promise((resolve) => setTimeout(resolve, 1));
    };

    beforeAll(async () => {
      owner = await gateway.createFundedKey({ credits: 100 });
      stranger = await gateway.createFundedKey({ credits: 100 });
      for (let index = 0; index < recordCount; index += 1) {
        await nextMillisecond();
        ownerIds.push(await spend(owner, `0.00${String(index + 1).padStart(2, '0')}`));
        if (index % 5 === 0) strangerIds.push(await spend(stranger, '0.5'));
      }
    });

    it('defaults to offset 0 and limit 20, newest first, with the total', async () => {
      const body = await page('');
      expect(Object.keys(body).sort()).toEqual(['limit', 'offset', 'results', 'total']);
      expect(body.offset).toBe(0);
      expect(body.limit).toBe(20);
      expect(body.total).toBe(recordCount);
      expect(body.results.map((record) => record.id)).toEqual([...ownerIds].reverse().slice(0, 20));
    });

    it('records are spec generation records of the owner', async () => {
      const [newest] = (await page('?limit=1')).results;
      expect(newest).toMatchObject({
        id: ownerIds.at(-1),
        userId: owner.accountId,
        apiKeyId: owner.keyId,
        modality: 'text',
        model: 'sandbox-echo',
        status: 'succeeded',
        usdCost: 0.0025,
      });
      expect(Number.isNaN(Date.parse(newest!.createdAt))).toBe(false);
    });

    it('createdAt never increases down the page', async () => {
      const { results } = await page('?limit=100');
      const times = results.map((record) => Date.parse(record.createdAt));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(results.map((record) => record.usdCost)).toEqual(
        ownerIds.map((_id, index) => (index + 1) / 10_000).reverse(),
      );
    });

    it('respects offset and limit', async () => {
      const newestFirst = [...ownerIds].reverse();
      const second = await page('?offset=5&limit=7');
      expect(second).toMatchObject({ offset: 5, limit: 7, total: recordCount });
      expect(second.results.map((record) => record.id)).toEqual(newestFirst.slice(5, 12));

      const tail = await page('?offset=20&limit=10');
      expect(tail.results.map((record) => record.id)).toEqual(newestFirst.slice(20));
      expect(tail.total).toBe(recordCount);

      const beyond = await page('?offset=500');
      expect(beyond).toEqual({ results: [], total: recordCount, offset: 500, limit: 20 });
    });

    it('accepts the maximum limit of 100', async () => {
      const body = await page('?limit=100');
      expect(body.limit).toBe(100);
      expect(body.results).toHaveLength(recordCount);
    });

    it.each([
      ['limit=101', 'limit'],
      ['limit=1000', 'limit'],
      ['limit=0', 'limit'],
      ['limit=-3', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=2.5', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=abc', 'offset'],
      ['offset=', 'offset'],
    ])('%s answers 400', async (query, field) => {
      const response = await get(`/api/compat/v1/usage?${query}`, keyHeaders(owner.key));
      const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/compat/v1/usage' });
      expect(body.errors.join(' ')).toContain(field);
    });

    it("never shows another account's records", async () => {
      const mine = await page('?limit=100');
      expect(mine.results.every((record) => record.userId === owner.accountId)).toBe(true);
      expect(mine.results.some((record) => strangerIds.includes(record.id))).toBe(false);

      const theirs = await page('?limit=100', keyHeaders(stranger.key));
      expect(theirs.total).toBe(strangerIds.length);
      expect(theirs.results.map((record) => record.id)).toEqual([...strangerIds].reverse());
      expect(theirs.results.every((record) => record.userId === stranger.accountId)).toBe(true);
    });

    it('a fresh account sees an empty page', async () => {
      const session = await signup(gateway);
      expect(await page('', bearer(session.token))).toEqual({ results: [], total: 0, offset: 0, limit: 20 });
    });

    it('shows every key of the account, and usage without a key, to a session of that account', async () => {
      const session = await signup(gateway);
      const key = await gateway.gateway.core.services.apiKeys.create(session.account.id, { name: 'k' });
      const viaKey = await spend({ accountId: session.account.id, keyId: key.id }, '0.01');
      await nextMillisecond();
      const viaSession = await spend({ accountId: session.account.id, keyId: null }, '0.02');
      const body = await page('', bearer(session.token));
      expect(body.total).toBe(2);
      expect(body.results.map((record) => record.id)).toEqual([viaSession, viaKey]);
      expect(body.results[0]).not.toHaveProperty('apiKeyId');
      expect(body.results[1]?.apiKeyId).toBe(key.id);
    });
  });
});
