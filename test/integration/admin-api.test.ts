import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminHeaders,
  bearer,
  expectEnvelope,
  keyHeaders,
  signup,
  testPassword,
  uniqueEmail,
  type AccountBody,
  type CreatedKeyBody,
  type KeyBody,
} from '../support/http-helpers.ts';
import { startTestGateway, testAdminToken, type TestGateway } from '../support/test-gateway.ts';

type Method = NonNullable<InjectOptions['method']>;

/** One request per admin route, with a body that would be valid. */
const everyRoute: { method: Method; url: string; payload?: Record<string, unknown> }[] = [
  { method: 'POST', url: '/api/admin/v1/accounts', payload: { email: 'someone@example.com' } },
  { method: 'GET', url: '/api/admin/v1/accounts/acct_x' },
  { method: 'POST', url: '/api/admin/v1/accounts/acct_x/credits', payload: { amount: 1 } },
  { method: 'POST', url: '/api/admin/v1/accounts/acct_x/api-keys', payload: { name: 'k' } },
  { method: 'PATCH', url: '/api/admin/v1/api-keys/key_x', payload: { isActive: false } },
  { method: 'DELETE', url: '/api/admin/v1/api-keys/key_x' },
];

describe('admin API', () => {
  let gateway: TestGateway;

  const admin = (method: Method, url: string, payload?: Record<string, unknown>) =>
    gateway.request({ method, url, headers: adminHeaders, ...(payload ? { payload } : {}) });

  const createAccount = async (payload: Record<string, unknown> = {}) => {
    const response = await admin('POST', '/api/admin/v1/accounts', { email: uniqueEmail('admin'), ...payload });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<AccountBody>();
  };

  const balanceOf = async (accountId: string) =>
    (await admin('GET', `/api/admin/v1/accounts/${accountId}`)).json<AccountBody>().creditBalance;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => gateway?.close());

  describe('admin authentication', () => {
    it.each(everyRoute)(
      '$method $url answers 401 without, or with a wrong, admin token',
      async ({ method, url, payload }) => {
        const attempts: Record<string, string>[] = [
          {},
          bearer('wrong-token'),
          bearer(`${testAdminToken}x`),
          bearer(testAdminToken.slice(0, -1)),
          { authorization: `Basic ${testAdminToken}` },
          { 'x-api-key': testAdminToken },
        ];
        for (const headers of attempts) {
          const response = await gateway.request({ method, url, headers, ...(payload ? { payload } : {}) });
          expectEnvelope(response, { status: 401, code: 'GW_UNAUTHENTICATED', path: url });
          expect(response.body).not.toContain(testAdminToken);
        }
      },
    );

    it("refuses an account's usage filter it cannot run (U+0000, a page past the largest, an unknown modality) with a 400", async () => {
      const account = await createAccount();
      const url = `/api/admin/v1/accounts/${account.id}/generations`;
      for (const query of [
        'model=%00',
        'model=a%00b',
        'limit=101',
        'limit=0',
        'offset=-1',
        'modality=smell',
        'limit=NaN',
        'limit=1e309',
      ]) {
        const response = await admin('GET', `${url}?${query}`);
        expect(response.statusCode, `${query}: ${response.body}`).toBe(400);
        expect(response.json<{ error: { code: string } }>().error.code, query).toBe('GW_VALIDATION');
      }
      expect(
        (await admin('GET', `${url}?model=gpt&limit=100&modality=image`)).json<{ results: unknown[] }>().results,
      ).toEqual([]);
    });

    it('an API key or a session token is not an admin credential', async () => {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      const session = await signup(gateway);
      for (const headers of [bearer(key), keyHeaders(key), bearer(session.token)]) {
        expectEnvelope(
          await gateway.request({
            method: 'POST',
            url: '/api/admin/v1/accounts',
            headers,
            payload: { email: uniqueEmail() },
          }),
          { status: 401, code: 'GW_UNAUTHENTICATED', path: '/api/admin/v1/accounts' },
        );
      }
    });
  });

  describe('POST /accounts', () => {
    it('answers 201 {id, email, creditBalance}; credits default to 0', async () => {
      const email = uniqueEmail('new');
      const response = await admin('POST', '/api/admin/v1/accounts', { email });
      expect(response.statusCode).toBe(201);
      const account = response.json<AccountBody>();
      expect(account).toEqual({ id: expect.any(String) as unknown, email, creditBalance: 0, role: 'user' });
      expect(await admin('GET', `/api/admin/v1/accounts/${account.id}`).then((r) => r.json())).toEqual(account);
    });

    it('opening credits are kept exactly', async () => {
      const account = await createAccount({ credits: 12.34 });
      expect(account.creditBalance).toBe(12.34);
      expect(await balanceOf(account.id)).toBe(12.34);
    });

    it('lower-cases the email, and refuses it again in any case with 409', async () => {
      const email = uniqueEmail('Case.Mixed');
      const account = await createAccount({ email });
      expect(account.email).toBe(email.toLowerCase());
      for (const variant of [email, email.toUpperCase()]) {
        expectEnvelope(await admin('POST', '/api/admin/v1/accounts', { email: variant }), {
          status: 409,
          code: 'GW_CONFLICT',
          path: '/api/admin/v1/accounts',
        });
      }
      const signupAgain = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/signup',
        payload: { email: email.toUpperCase(), password: testPassword },
      });
      expectEnvelope(signupAgain, { status: 409, code: 'GW_CONFLICT', path: '/api/v1/auth/signup' });
    });

    it('an email taken by a self-signup is a conflict too', async () => {
      const email = uniqueEmail('self');
      await signup(gateway, email);
      expectEnvelope(await admin('POST', '/api/admin/v1/accounts', { email: email.toUpperCase() }), {
        status: 409,
        code: 'GW_CONFLICT',
        path: '/api/admin/v1/accounts',
      });
    });

    it('with a password the account can log in; without one it cannot', async () => {
      const withPassword = await createAccount({ password: testPassword, credits: 2 });
      const login = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: withPassword.email, password: testPassword },
      });
      expect(login.statusCode).toBe(200);
      expect(login.json<{ account: AccountBody }>().account).toEqual(withPassword);

      const withoutPassword = await createAccount();
      const refused = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: withoutPassword.email, password: testPassword },
      });
      expectEnvelope(refused, { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/v1/auth/login' });
    });

    it.each([
      [{ email: 'nope' }, 'email'],
      [{}, 'email'],
      [{ email: uniqueEmail(), credits: -1 }, 'credits'],
      [{ email: uniqueEmail(), credits: '5' }, 'credits'],
      [{ email: uniqueEmail(), password: 'short' }, 'password'],
    ])('refuses %j with 400', async (payload, field) => {
      const body = expectEnvelope(await admin('POST', '/api/admin/v1/accounts', payload), {
        status: 400,
        code: 'GW_VALIDATION',
        path: '/api/admin/v1/accounts',
      });
      expect(body.errors.join(' ')).toContain(field);
    });
  });

  describe('GET /accounts/:accountId', () => {
    it('answers 404 for an unknown account', async () => {
      expectEnvelope(await admin('GET', '/api/admin/v1/accounts/acct_missing'), {
        status: 404,
        code: 'GW_NOT_FOUND',
        path: '/api/admin/v1/accounts/acct_missing',
      });
    });
  });

  describe('POST /accounts/:accountId/credits', () => {
    it('adds exactly in decimal: 0.1 + 0.2 = 0.3', async () => {
      const account = await createAccount();
      const first = await admin('POST', `/api/admin/v1/accounts/${account.id}/credits`, { amount: 0.1 });
      expect(first.statusCode).toBe(200);
      expect(first.json()).toEqual({ creditBalance: 0.1 });
      const second = await admin('POST', `/api/admin/v1/accounts/${account.id}/credits`, {
        amount: 0.2,
        note: 'top-up',
      });
      expect(second.json()).toEqual({ creditBalance: 0.3 });
      expect(await balanceOf(account.id)).toBe(0.3);
    });

    it('many small additions stay exact', async () => {
      const account = await createAccount();
      let last = 0;
      for (let index = 0; index < 10; index += 1) {
        last = (await admin('POST', `/api/admin/v1/accounts/${account.id}/credits`, { amount: 0.07 })).json<{
          creditBalance: number;
        }>().creditBalance;
      }
      expect(last).toBe(0.7);
    });

    it('accepts negative amounts, also below zero, exactly', async () => {
      const account = await createAccount({ credits: 1 });
      expect((await admin('POST', `/api/admin/v1/accounts/${account.id}/credits`, { amount: -0.3 })).json()).toEqual({
        creditBalance: 0.7,
      });
      expect((await admin('POST', `/api/admin/v1/accounts/${account.id}/credits`, { amount: -0.9 })).json()).toEqual({
        creditBalance: -0.2,
      });
      expect((await admin('POST', `/api/admin/v1/accounts/${account.id}/credits`, { amount: 0.2 })).json()).toEqual({
        creditBalance: 0,
      });
    });

    it('the new balance is what the account sees', async () => {
      const account = await createAccount();
      const created = await admin('POST', `/api/admin/v1/accounts/${account.id}/api-keys`, { name: 'k' });
      const key = created.json<CreatedKeyBody>().key;
      await admin('POST', `/api/admin/v1/accounts/${account.id}/credits`, { amount: 3.33 });
      const balance = await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: keyHeaders(key) });
      expect(balance.json()).toEqual({ creditBalance: 3.33 });
    });

    it('answers 404 for an unknown account', async () => {
      expectEnvelope(await admin('POST', '/api/admin/v1/accounts/acct_missing/credits', { amount: 1 }), {
        status: 404,
        code: 'GW_NOT_FOUND',
        path: '/api/admin/v1/accounts/acct_missing/credits',
      });
    });

    it.each([[{}], [{ amount: '1' }], [{ amount: 2e9 }], [{ amount: 1, note: 'x'.repeat(501) }]])(
      'refuses %j with 400 and changes nothing',
      async (payload) => {
        const account = await createAccount({ credits: 1 });
        expectEnvelope(await admin('POST', `/api/admin/v1/accounts/${account.id}/credits`, payload), {
          status: 400,
          code: 'GW_VALIDATION',
          path: `/api/admin/v1/accounts/${account.id}/credits`,
        });
        expect(await balanceOf(account.id)).toBe(1);
      },
    );
  });

  describe('POST /accounts/:accountId/api-keys', () => {
    it('answers 201 {id, name, key, limits} with a working key', async () => {
      const account = await createAccount({ credits: 4 });
      const response = await admin('POST', `/api/admin/v1/accounts/${account.id}/api-keys`, {
        name: 'ops',
        limits: { daily: 1.5, total: 0.1 },
      });
      expect(response.statusCode).toBe(201);
      const created = response.json<CreatedKeyBody>();
      expect(created).toMatchObject({ name: 'ops', limits: { daily: 1.5, total: 0.1 }, isActive: true });
      expect(created.key).toMatch(/^gwk_/);
      expect(typeof created.id).toBe('string');
      const lookup = await gateway.request({
        method: 'GET',
        url: '/api/compat/v1/api-key',
        headers: keyHeaders(created.key),
      });
      expect(lookup.json()).toEqual({
        name: 'ops',
        isActive: true,
        daily: { limit: 1.5, spent: 0, remaining: 1.5 },
        total: { limit: 0.1, spent: 0, remaining: 0.1 },
      });
      const balance = await gateway.request({
        method: 'GET',
        url: '/api/compat/v1/balance',
        headers: keyHeaders(created.key),
      });
      expect(balance.json()).toEqual({ creditBalance: 4 });
    });

    it('answers 404 for an unknown account and 400 for a bad body', async () => {
      expectEnvelope(await admin('POST', '/api/admin/v1/accounts/acct_missing/api-keys', { name: 'k' }), {
        status: 404,
        code: 'GW_NOT_FOUND',
        path: '/api/admin/v1/accounts/acct_missing/api-keys',
      });
      const account = await createAccount();
      expectEnvelope(
        await admin('POST', `/api/admin/v1/accounts/${account.id}/api-keys`, { name: 'k', limits: { daily: -5 } }),
        { status: 400, code: 'GW_VALIDATION', path: `/api/admin/v1/accounts/${account.id}/api-keys` },
      );
    });
  });

  describe('PATCH /api-keys/:keyId', () => {
    it('renames, disables and re-enables any key; answers the key record without the raw key', async () => {
      const session = await signup(gateway);
      const ownCreate = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: bearer(session.token),
        payload: { name: 'user key' },
      });
      const created = ownCreate.json<CreatedKeyBody>();

      const renamed = await admin('PATCH', `/api/admin/v1/api-keys/${created.id}`, { name: 'renamed by operator' });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.json()).toEqual({
        id: created.id,
        name: 'renamed by operator',
        prefix: created.prefix,
        isActive: true,
        limits: {},
        rateLimits: {},
        createdAt: created.createdAt,
      });
      expect(renamed.body).not.toContain(created.key);

      const disabled = await admin('PATCH', `/api/admin/v1/api-keys/${created.id}`, { isActive: false });
      expect(disabled.json<KeyBody>().isActive).toBe(false);
      expectEnvelope(
        await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: keyHeaders(created.key) }),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/compat/v1/balance' },
      );
      const list = await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(session.token) });
      expect(list.json<KeyBody[]>()[0]).toMatchObject({ id: created.id, name: 'renamed by operator', isActive: false });

      const enabled = await admin('PATCH', `/api/admin/v1/api-keys/${created.id}`, { isActive: true });
      expect(enabled.json<KeyBody>().isActive).toBe(true);
      expect(
        (await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: keyHeaders(created.key) }))
          .statusCode,
      ).toBe(200);
    });

    it('answers 404 for an unknown key and 400 for an empty body', async () => {
      expectEnvelope(await admin('PATCH', '/api/admin/v1/api-keys/key_missing', { isActive: false }), {
        status: 404,
        code: 'GW_NOT_FOUND',
        path: '/api/admin/v1/api-keys/key_missing',
      });
      const { keyId } = await gateway.createFundedKey();
      expectEnvelope(await admin('PATCH', `/api/admin/v1/api-keys/${keyId}`, {}), {
        status: 400,
        code: 'GW_VALIDATION',
        path: `/api/admin/v1/api-keys/${keyId}`,
      });
    });
  });

  describe('PATCH /api-keys/:keyId/usage-limit', () => {
    it("sets and removes any key's spend caps; the key is refused past a lowered cap at once", async () => {
      const { key, keyId } = await gateway.createFundedKey({ credits: 5 });
      const chat = () =>
        gateway.request({
          method: 'POST',
          url: '/api/alpha/v1/chat/completions',
          headers: keyHeaders(key),
          payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hello' }] },
        });
      expect((await chat()).statusCode).toBe(200);
      const capped = await admin('PATCH', `/api/admin/v1/api-keys/${keyId}/usage-limit`, { daily: 0, total: 3 });
      expect(capped.statusCode, capped.body).toBe(200);
      expect(capped.json<KeyBody>().limits).toEqual({ daily: 0, total: 3 });
      expectEnvelope(await chat(), {
        status: 429,
        code: 'GW_SPEND_CAP_REACHED',
        path: '/api/alpha/v1/chat/completions',
      });
      const lifted = await admin('PATCH', `/api/admin/v1/api-keys/${keyId}/usage-limit`, { daily: null });
      expect(lifted.json<KeyBody>().limits).toEqual({ total: 3 });
      expect((await chat()).statusCode).toBe(200);
      expectEnvelope(await admin('PATCH', '/api/admin/v1/api-keys/key_missing/usage-limit', { daily: 1 }), {
        status: 404,
        code: 'GW_NOT_FOUND',
        path: '/api/admin/v1/api-keys/key_missing/usage-limit',
      });
      expectEnvelope(await admin('PATCH', `/api/admin/v1/api-keys/${keyId}/usage-limit`, { daily: -1 }), {
        status: 400,
        code: 'GW_VALIDATION',
        path: `/api/admin/v1/api-keys/${keyId}/usage-limit`,
      });
    });
  });

  describe('DELETE /api-keys/:keyId', () => {
    it('answers 204; later use answers 401; the key leaves the owner list; a second revoke answers 404', async () => {
      const session = await signup(gateway);
      const created = (
        await gateway.request({
          method: 'POST',
          url: '/api/v1/api-keys',
          headers: bearer(session.token),
          payload: { name: 'doomed' },
        })
      ).json<CreatedKeyBody>();
      expect(
        (await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: keyHeaders(created.key) }))
          .statusCode,
      ).toBe(200);

      const response = await admin('DELETE', `/api/admin/v1/api-keys/${created.id}`);
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expectEnvelope(
        await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: keyHeaders(created.key) }),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/compat/v1/balance' },
      );
      const list = await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(session.token) });
      expect(list.json()).toEqual([]);
      expectEnvelope(await admin('DELETE', `/api/admin/v1/api-keys/${created.id}`), {
        status: 404,
        code: 'GW_NOT_FOUND',
        path: `/api/admin/v1/api-keys/${created.id}`,
      });
      const reveal = await gateway.request({
        method: 'GET',
        url: `/api/v1/api-keys/${created.id}/reveal`,
        headers: bearer(session.token),
      });
      expectEnvelope(reveal, { status: 404, code: 'GW_NOT_FOUND', path: `/api/v1/api-keys/${created.id}/reveal` });
    });
  });

  describe('without GATEWAY_ADMIN_TOKEN', () => {
    let closed: TestGateway;

    beforeAll(async () => {
      closed = await startTestGateway({ adminToken: null });
    });
    afterAll(async () => closed?.close());

    it.each(everyRoute)('$method $url answers 404 with or without a token', async ({ method, url, payload }) => {
      for (const headers of [{}, adminHeaders, bearer('anything')]) {
        const response = await closed.request({ method, url, headers, ...(payload ? { payload } : {}) });
        expectEnvelope(response, { status: 404, code: 'GW_ROUTE_NOT_FOUND', path: url });
      }
    });

    it('the rest of that gateway works', async () => {
      const { key } = await closed.createFundedKey({ credits: 2 });
      const balance = await closed.request({ method: 'GET', url: '/api/compat/v1/balance', headers: keyHeaders(key) });
      expect(balance.json()).toEqual({ creditBalance: 2 });
    });
  });
});
