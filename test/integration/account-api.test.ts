import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  createKeyOverHttp,
  expectEnvelope,
  keyHeaders,
  pollUntil,
  shippedConfigWith,
  signup,
  testPassword,
  uniqueEmail,
  type AccountBody,
  type CreatedKeyBody,
  type KeyBody,
  type SessionBody,
} from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const maxApiKeys = 3;
const signupCredits = 1.5;

const configText = shippedConfigWith({
  accounts: `accounts:\n  maxApiKeys: ${maxApiKeys}\n  signupCredits: ${signupCredits}\n  sessionTtlHours: 24\n`,
});

describe('account API', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ configText });
  });
  afterAll(async () => gateway?.close());

  it('runs with the configured key limit', () => {
    expect(gateway.config.accounts.maxApiKeys).toBe(maxApiKeys);
  });

  describe('POST /api/v1/auth/signup', () => {
    it('answers 201 {token, account} with the signup credits and sets an HttpOnly session cookie', async () => {
      const email = uniqueEmail('signup');
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/signup',
        payload: { email, password: testPassword },
      });
      expect(response.statusCode).toBe(201);
      const body = response.json<SessionBody>();
      expect(Object.keys(body).sort()).toEqual(['account', 'token']);
      expect(body.account).toEqual({
        id: expect.stringMatching(/\S/) as unknown,
        email,
        creditBalance: signupCredits,
        role: 'user',
      });
      expect(typeof body.token).toBe('string');
      const cookie = response.cookies.find((item) => item.name === 'gw_session');
      expect(cookie).toMatchObject({ value: body.token, httpOnly: true, path: '/' });
      expect(String(cookie?.sameSite).toLowerCase()).toBe('strict');
      expect(cookie?.expires).toBeInstanceOf(Date);
      expect(response.body).not.toContain(testPassword);
    });

    it('stores the email lower-cased and refuses the same email in another case with 409', async () => {
      const email = uniqueEmail('MiXeD');
      const first = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/signup',
        payload: { email, password: testPassword },
      });
      expect(first.statusCode).toBe(201);
      expect(first.json<SessionBody>().account.email).toBe(email.toLowerCase());
      for (const variant of [email, email.toUpperCase(), email.toLowerCase()]) {
        const again = await gateway.request({
          method: 'POST',
          url: '/api/v1/auth/signup',
          payload: { email: variant, password: testPassword },
        });
        expectEnvelope(again, { status: 409, code: 'GW_CONFLICT', path: '/api/v1/auth/signup' });
      }
    });

    it.each([
      [{ email: 'not-an-email', password: testPassword }, 'email'],
      [{ email: uniqueEmail(), password: 'short' }, 'password'],
      [{ password: testPassword }, 'email'],
      [{ email: uniqueEmail() }, 'password'],
    ])('refuses an invalid body %j with 400', async (payload, field) => {
      const response = await gateway.request({ method: 'POST', url: '/api/v1/auth/signup', payload });
      const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/auth/signup' });
      expect(body.errors.join(' ')).toContain(field);
    });
  });

  describe('POST /api/v1/auth/login', () => {
    it('answers {token, account} for the right password, in any email case', async () => {
      const email = uniqueEmail('login');
      const created = await signup(gateway, email);
      const login = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: email.toUpperCase(), password: testPassword },
      });
      expect(login.statusCode).toBe(200);
      const body = login.json<SessionBody>();
      expect(Object.keys(body).sort()).toEqual(['account', 'token']);
      expect(body.account).toEqual(created.account);
      expect(body.token).not.toBe(created.token);
      const account = await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(body.token) });
      expect(account.json()).toEqual(created.account);
    });

    it('answers 401 for a wrong password and for an account created without one', async () => {
      const email = uniqueEmail('nopass');
      await signup(gateway, email);
      expectEnvelope(
        await gateway.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { email, password: `${testPassword}!` },
        }),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/v1/auth/login' },
      );
      const passwordless = await gateway.gateway.core.services.accounts.createAccount({ email: uniqueEmail('cli') });
      expectEnvelope(
        await gateway.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { email: passwordless.email, password: testPassword },
        }),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/v1/auth/login' },
      );
    });
  });

  describe('POST /api/v1/auth/logout', () => {
    it('answers 204 and ends the session', async () => {
      const session = await signup(gateway);
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/logout',
        headers: bearer(session.token),
      });
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expectEnvelope(
        await gateway.request({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(session.token) }),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/v1/auth/logout' },
      );
    });
  });

  describe('GET /api/v1/account', () => {
    it('answers {id, email, creditBalance} for a session and for a key of the account', async () => {
      const session = await signup(gateway);
      const bySession = await gateway.request({
        method: 'GET',
        url: '/api/v1/account',
        headers: bearer(session.token),
      });
      expect(bySession.statusCode).toBe(200);
      expect(bySession.json()).toEqual(session.account);

      const key = await createKeyOverHttp(gateway, bearer(session.token));
      const byKey = await gateway.request({ method: 'GET', url: '/api/v1/account', headers: keyHeaders(key.key) });
      expect(byKey.json()).toEqual(session.account);
    });

    it('reflects credit changes', async () => {
      const session = await signup(gateway);
      await gateway.gateway.core.services.accounts.addCredits(session.account.id, 0.25, null);
      const response = await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(session.token) });
      expect(response.json<AccountBody>().creditBalance).toBe(1.75);
    });

    it('needs a credential', async () => {
      expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/account' }), {
        status: 401,
        code: 'GW_UNAUTHENTICATED',
        path: '/api/v1/account',
      });
    });
  });

  describe('POST /api/v1/api-keys', () => {
    it('answers 201 {id, name, key, ...} with a key that works', async () => {
      const session = await signup(gateway);
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: bearer(session.token),
        payload: { name: 'laptop' },
      });
      expect(response.statusCode).toBe(201);
      const created = response.json<CreatedKeyBody>();
      expect(created).toMatchObject({ name: 'laptop', isActive: true, limits: {} });
      expect(typeof created.id).toBe('string');
      expect(created.key).toMatch(/^gwk_[A-Za-z0-9_-]{40,}$/);
      expect(created.key.startsWith(created.prefix.replace('…', ''))).toBe(true);
      expect(created.prefix.length).toBeLessThan(created.key.length / 2);
      const balance = await gateway.request({
        method: 'GET',
        url: '/api/compat/v1/balance',
        headers: keyHeaders(created.key),
      });
      expect(balance.json()).toEqual({ creditBalance: signupCredits });
    });

    it('stores limits given at creation, in exact decimals', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token), {
        name: 'capped',
        limits: { daily: 0.1, total: 12.34 },
      });
      expect(created.limits).toEqual({ daily: 0.1, total: 12.34 });
      const lookup = await gateway.request({
        method: 'GET',
        url: '/api/compat/v1/api-key',
        headers: keyHeaders(created.key),
      });
      expect(lookup.json()).toEqual({
        name: 'capped',
        isActive: true,
        daily: { limit: 0.1, spent: 0, remaining: 0.1 },
        total: { limit: 12.34, spent: 0, remaining: 12.34 },
      });
    });

    it('a key cannot create another key: that needs a session, so caps cannot be escaped', async () => {
      const session = await signup(gateway);
      const first = await createKeyOverHttp(gateway, bearer(session.token), { name: 'capped', limits: { total: 1 } });
      const url = '/api/v1/api-keys';
      expectEnvelope(
        await gateway.request({ method: 'POST', url, headers: keyHeaders(first.key), payload: { name: 'uncapped' } }),
        { status: 403, code: 'GW_SESSION_REQUIRED', path: url },
      );
      const list = await gateway.request({ method: 'GET', url, headers: keyHeaders(first.key) });
      expect(list.json<KeyBody[]>().map((key) => key.id)).toEqual([first.id]);
    });

    it.each([
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ name: 'ok', limits: { daily: -0.01 } }, 'daily'],
      [{ name: 'ok', limits: { weekly: 'ten' } }, 'weekly'],
      [{ name: 'ok', limits: { total: null } }, 'total'],
    ])('refuses %j with 400', async (payload, field) => {
      const session = await signup(gateway);
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: bearer(session.token),
        payload,
      });
      const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/api-keys' });
      expect(body.errors.join(' ')).toContain(field);
      const list = await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(session.token) });
      expect(list.json()).toEqual([]);
    });

    it(`refuses the key past the per-account limit of ${maxApiKeys} with 403, and allows one again after a revocation`, async () => {
      const session = await signup(gateway);
      const keys: CreatedKeyBody[] = [];
      for (let index = 0; index < maxApiKeys; index += 1)
        keys.push(await createKeyOverHttp(gateway, bearer(session.token), { name: `k${index}` }));
      const refused = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: bearer(session.token),
        payload: { name: 'one too many' },
      });
      expectEnvelope(refused, { status: 403, code: 'GW_KEY_LIMIT_REACHED', path: '/api/v1/api-keys' });
      const list = await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(session.token) });
      expect(list.json<KeyBody[]>()).toHaveLength(maxApiKeys);

      // A disabled key still counts; a revoked one does not.
      await gateway.request({
        method: 'PATCH',
        url: `/api/v1/api-keys/${keys[0]!.id}`,
        headers: bearer(session.token),
        payload: { isActive: false },
      });
      expect(
        (
          await gateway.request({
            method: 'POST',
            url: '/api/v1/api-keys',
            headers: bearer(session.token),
            payload: { name: 'still too many' },
          })
        ).statusCode,
      ).toBe(403);
      const revoked = await gateway.request({
        method: 'DELETE',
        url: `/api/v1/api-keys/${keys[1]!.id}`,
        headers: bearer(session.token),
      });
      expect(revoked.statusCode).toBe(204);
      await createKeyOverHttp(gateway, bearer(session.token), { name: 'replacement' });
    });

    it('the limit is per account: another account can still create keys', async () => {
      const full = await signup(gateway);
      for (let index = 0; index < maxApiKeys; index += 1) await createKeyOverHttp(gateway, bearer(full.token));
      const other = await signup(gateway);
      await createKeyOverHttp(gateway, bearer(other.token));
    });

    it('concurrent creations never exceed the limit', async () => {
      const session = await signup(gateway);
      const attempts = 10;
      const responses = await Promise.all(
        Array.from({ length: attempts }, (_unused, index) =>
          gateway.request({
            method: 'POST',
            url: '/api/v1/api-keys',
            headers: bearer(session.token),
            payload: { name: `race ${index}` },
          }),
        ),
      );
      const statuses = responses.map((response) => response.statusCode).sort();
      expect(statuses.filter((status) => status === 201)).toHaveLength(maxApiKeys);
      expect(statuses.filter((status) => status === 403)).toHaveLength(attempts - maxApiKeys);
      const list = await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(session.token) });
      expect(list.json<KeyBody[]>()).toHaveLength(maxApiKeys);
    });
  });

  describe('GET /api/v1/api-keys', () => {
    it("lists the account's own live keys, oldest first, never with the raw key", async () => {
      const session = await signup(gateway);
      const first = await createKeyOverHttp(gateway, bearer(session.token), { name: 'first', limits: { monthly: 7 } });
      const second = await createKeyOverHttp(gateway, bearer(session.token), { name: 'second' });
      const third = await createKeyOverHttp(gateway, bearer(session.token), { name: 'third' });
      await gateway.request({ method: 'DELETE', url: `/api/v1/api-keys/${third.id}`, headers: bearer(session.token) });
      const stranger = await signup(gateway);
      await createKeyOverHttp(gateway, bearer(stranger.token), { name: 'not yours' });

      const response = await gateway.request({
        method: 'GET',
        url: '/api/v1/api-keys',
        headers: bearer(session.token),
      });
      expect(response.statusCode).toBe(200);
      const list = response.json<KeyBody[]>();
      expect(list.map((key) => key.name)).toEqual(['first', 'second']);
      expect(list[0]).toEqual({
        id: first.id,
        name: 'first',
        prefix: first.prefix,
        isActive: true,
        limits: { monthly: 7 },
        rateLimits: {},
        createdAt: first.createdAt,
        // Nothing spent yet: every window says so, and the capped one says what is left.
        spend: {
          daily: { spent: 0 },
          weekly: { spent: 0 },
          monthly: { limit: 7, spent: 0, remaining: 7 },
          total: { spent: 0 },
        },
      });
      for (const key of list) expect(key).not.toHaveProperty('key');
      for (const raw of [first.key, second.key, third.key]) {
        expect(response.body).not.toContain(raw);
        expect(response.body).not.toContain(raw.slice(12));
      }
    });
  });

  describe('GET /api/v1/api-keys/:keyId/reveal', () => {
    it('returns the same raw key as creation, for a session (bearer or cookie)', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token));
      const viaBearer = await gateway.request({
        method: 'GET',
        url: `/api/v1/api-keys/${created.id}/reveal`,
        headers: bearer(session.token),
      });
      expect(viaBearer.statusCode).toBe(200);
      expect(viaBearer.json()).toEqual({ key: created.key });
      const viaCookie = await gateway.request({
        method: 'GET',
        url: `/api/v1/api-keys/${created.id}/reveal`,
        cookies: { gw_session: session.token },
      });
      expect(viaCookie.json()).toEqual({ key: created.key });
    });

    it('answers 403 to an API key, even the key itself', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token));
      for (const headers of [keyHeaders(created.key), bearer(created.key)]) {
        const response = await gateway.request({
          method: 'GET',
          url: `/api/v1/api-keys/${created.id}/reveal`,
          headers,
        });
        expectEnvelope(response, {
          status: 403,
          code: 'GW_SESSION_REQUIRED',
          path: `/api/v1/api-keys/${created.id}/reveal`,
        });
        expect(response.body).not.toContain(created.key);
      }
    });

    it('answers 404 for a revoked key and an unknown id', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token));
      await gateway.request({
        method: 'DELETE',
        url: `/api/v1/api-keys/${created.id}`,
        headers: bearer(session.token),
      });
      for (const id of [created.id, 'key_does_not_exist']) {
        const response = await gateway.request({
          method: 'GET',
          url: `/api/v1/api-keys/${id}/reveal`,
          headers: bearer(session.token),
        });
        expectEnvelope(response, { status: 404, code: 'GW_NOT_FOUND', path: `/api/v1/api-keys/${id}/reveal` });
      }
    });
  });

  describe('PATCH /api/v1/api-keys/:keyId/usage-limit', () => {
    it('a number sets a cap, null removes it, absent caps are left alone; lookups follow', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token), { name: 'limited' });
      const patch = (payload: Record<string, number | null>) =>
        gateway.request({
          method: 'PATCH',
          url: `/api/v1/api-keys/${created.id}/usage-limit`,
          headers: bearer(session.token),
          payload,
        });
      const lookup = async () =>
        (
          await gateway.request({ method: 'GET', url: '/api/compat/v1/api-key', headers: keyHeaders(created.key) })
        ).json();

      const first = await patch({ daily: 5, weekly: 0.3 });
      expect(first.statusCode).toBe(200);
      expect(first.json<KeyBody>()).toMatchObject({
        id: created.id,
        name: 'limited',
        limits: { daily: 5, weekly: 0.3 },
      });
      expect(first.json()).not.toHaveProperty('key');
      expect(await lookup()).toEqual({
        name: 'limited',
        isActive: true,
        daily: { limit: 5, spent: 0, remaining: 5 },
        weekly: { limit: 0.3, spent: 0, remaining: 0.3 },
      });

      const second = await patch({ total: 100, monthly: 0 });
      expect(second.json<KeyBody>().limits).toEqual({ daily: 5, weekly: 0.3, monthly: 0, total: 100 });

      const third = await patch({ daily: null, weekly: 0.7 });
      expect(third.json<KeyBody>().limits).toEqual({ weekly: 0.7, monthly: 0, total: 100 });
      expect(await lookup()).toEqual({
        name: 'limited',
        isActive: true,
        weekly: { limit: 0.7, spent: 0, remaining: 0.7 },
        monthly: { limit: 0, spent: 0, remaining: 0 },
        total: { limit: 100, spent: 0, remaining: 100 },
      });

      const cleared = await patch({ weekly: null, monthly: null, total: null });
      expect(cleared.json<KeyBody>().limits).toEqual({});
      expect(await lookup()).toEqual({ name: 'limited', isActive: true });

      const list = await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(session.token) });
      expect(list.json<KeyBody[]>()[0]?.limits).toEqual({});
    });

    it('refuses the owner a cap below what work under way holds, which it would leave unpaid, and takes it once that work has ended', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token), { name: 'busy' });
      const balance = async () =>
        (
          await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(session.token) })
        ).json<AccountBody>().creditBalance;
      const before = await balance();
      // Four images at 0.001 USD each, from a job the sandbox keeps running for four seconds.
      const submitted = await gateway.request({
        method: 'POST',
        url: '/api/v1/image/generations/async',
        headers: keyHeaders(created.key),
        payload: {
          model: 'sandbox-image',
          content: [{ type: 'text', text: 'a lighthouse sandbox-slow-4' }],
          numberOfImages: 4,
        },
      });
      expect(submitted.statusCode, submitted.body).toBe(202);
      const { generationId } = submitted.json<{ generationId: string }>();
      const url = `/api/v1/api-keys/${created.id}/usage-limit`;
      const cap = (total: number) =>
        gateway.request({ method: 'PATCH', url, headers: bearer(session.token), payload: { total } });
      const refused = expectEnvelope(await cap(0), { status: 409, code: 'GW_CONFLICT', path: url });
      expect(refused.errors).toEqual([
        'total: the key holds 0.004 USD for work under way, which a cap below 0.004 USD (with what it spent in all) would leave unpaid; set it once that work has ended',
      ]);
      // A cap that covers the work goes.
      expect((await cap(0.004)).statusCode).toBe(200);
      const done = await pollUntil<{ status: string }>(
        gateway,
        { url: `/api/v1/image/generations/async/${generationId}`, key: created.key },
        (body) => body.status === 'succeeded' || body.status === 'failed',
      );
      expect(done.status).toBe('succeeded');
      await gateway.settled();
      expect(before - (await balance())).toBeCloseTo(0.004, 9);
      // Nothing under way: any cap goes, one below what was spent stopping the key's spending.
      const stopped = await cap(0);
      expect(stopped.statusCode, stopped.body).toBe(200);
    });

    it('a key cannot change spend limits, not even its own', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token), { name: 'capped', limits: { total: 2 } });
      const url = `/api/v1/api-keys/${created.id}/usage-limit`;
      const response = await gateway.request({
        method: 'PATCH',
        url,
        headers: keyHeaders(created.key),
        payload: { total: null },
      });
      expectEnvelope(response, { status: 403, code: 'GW_SESSION_REQUIRED', path: url });
      const list = await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(session.token) });
      expect(list.json<KeyBody[]>()[0]?.limits).toEqual({ total: 2 });
    });

    it.each([
      [{}, 'body'],
      [{ daily: -1 }, 'daily'],
      [{ weekly: '3' }, 'weekly'],
      [{ total: 1e12 }, 'total'],
    ])('refuses %j with 400 and changes nothing', async (payload, field) => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token), { name: 'x', limits: { daily: 1 } });
      const response = await gateway.request({
        method: 'PATCH',
        url: `/api/v1/api-keys/${created.id}/usage-limit`,
        headers: bearer(session.token),
        payload,
      });
      const body = expectEnvelope(response, {
        status: 400,
        code: 'GW_VALIDATION',
        path: `/api/v1/api-keys/${created.id}/usage-limit`,
      });
      expect(body.errors.join(' ')).toContain(field);
      const list = await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(session.token) });
      expect(list.json<KeyBody[]>()[0]?.limits).toEqual({ daily: 1 });
    });
  });

  describe('PATCH /api/v1/api-keys/:keyId', () => {
    it('renames and disables; the answer is the key record without the raw key', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token), { name: 'before' });
      const renamed = await gateway.request({
        method: 'PATCH',
        url: `/api/v1/api-keys/${created.id}`,
        headers: bearer(session.token),
        payload: { name: 'after' },
      });
      expect(renamed.statusCode).toBe(200);
      expect(renamed.json()).toEqual({
        id: created.id,
        name: 'after',
        prefix: created.prefix,
        isActive: true,
        limits: {},
        rateLimits: {},
        createdAt: created.createdAt,
      });
      expect(renamed.body).not.toContain(created.key);
      const lookup = await gateway.request({
        method: 'GET',
        url: '/api/compat/v1/api-key',
        headers: keyHeaders(created.key),
      });
      expect(lookup.json()).toEqual({ name: 'after', isActive: true });

      const disabled = await gateway.request({
        method: 'PATCH',
        url: `/api/v1/api-keys/${created.id}`,
        headers: bearer(session.token),
        payload: { isActive: false },
      });
      expect(disabled.json<KeyBody>()).toMatchObject({ name: 'after', isActive: false });
      expectEnvelope(
        await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: keyHeaders(created.key) }),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/compat/v1/balance' },
      );
      const list = await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(session.token) });
      expect(list.json<KeyBody[]>()).toEqual([expect.objectContaining({ id: created.id, isActive: false }) as unknown]);
    });

    it.each([[{}], [{ isActive: 'no' }], [{ name: '' }]])('refuses %j with 400', async (payload) => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token));
      const response = await gateway.request({
        method: 'PATCH',
        url: `/api/v1/api-keys/${created.id}`,
        headers: bearer(session.token),
        payload,
      });
      expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: `/api/v1/api-keys/${created.id}` });
    });
  });

  describe('DELETE /api/v1/api-keys/:keyId', () => {
    it('answers 204, the key stops working, and a second revoke answers 404', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token));
      const response = await gateway.request({
        method: 'DELETE',
        url: `/api/v1/api-keys/${created.id}`,
        headers: bearer(session.token),
      });
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expectEnvelope(
        await gateway.request({ method: 'GET', url: '/api/compat/v1/api-key', headers: keyHeaders(created.key) }),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/compat/v1/api-key' },
      );
      expectEnvelope(
        await gateway.request({
          method: 'DELETE',
          url: `/api/v1/api-keys/${created.id}`,
          headers: bearer(session.token),
        }),
        { status: 404, code: 'GW_NOT_FOUND', path: `/api/v1/api-keys/${created.id}` },
      );
      expectEnvelope(
        await gateway.request({
          method: 'PATCH',
          url: `/api/v1/api-keys/${created.id}`,
          headers: bearer(session.token),
          payload: { isActive: true },
        }),
        { status: 404, code: 'GW_NOT_FOUND', path: `/api/v1/api-keys/${created.id}` },
      );
    });
  });

  describe("another account's key answers 404 and is left untouched", () => {
    let victim: SessionBody;
    let victimKey: CreatedKeyBody;
    let intruder: SessionBody;
    let intruderKey: CreatedKeyBody;

    beforeAll(async () => {
      victim = await signup(gateway);
      victimKey = await createKeyOverHttp(gateway, bearer(victim.token), { name: 'victim', limits: { daily: 4 } });
      intruder = await signup(gateway);
      intruderKey = await createKeyOverHttp(gateway, bearer(intruder.token), { name: 'intruder' });
    });

    const attempts = [
      { method: 'GET', suffix: '/reveal', payload: undefined },
      { method: 'PATCH', suffix: '/usage-limit', payload: { daily: null } },
      { method: 'PATCH', suffix: '', payload: { isActive: false } },
      { method: 'PATCH', suffix: '', payload: { name: 'hijacked' } },
      { method: 'DELETE', suffix: '', payload: undefined },
    ] as const;

    it.each(attempts)('$method …$suffix by session and by key', async ({ method, suffix, payload }) => {
      const url = `/api/v1/api-keys/${victimKey.id}${suffix}`;
      const credentials: { headers: Record<string, string>; isKey: boolean }[] = [
        { headers: bearer(intruder.token), isKey: false },
        { headers: keyHeaders(intruderKey.key), isKey: true },
      ];
      for (const { headers, isKey } of credentials) {
        const response = await gateway.request({ method, url, headers, ...(payload ? { payload } : {}) });
        if (isKey) {
          // Key management needs a session at all; a key of another account learns nothing either way.
          expectEnvelope(response, { status: 403, code: 'GW_SESSION_REQUIRED', path: url });
        } else {
          expectEnvelope(response, { status: 404, code: 'GW_NOT_FOUND', path: url });
        }
        expect(response.body).not.toContain(victimKey.key);
      }
      const lookup = await gateway.request({
        method: 'GET',
        url: '/api/compat/v1/api-key',
        headers: keyHeaders(victimKey.key),
      });
      expect(lookup.statusCode).toBe(200);
      expect(lookup.json()).toEqual({ name: 'victim', isActive: true, daily: { limit: 4, spent: 0, remaining: 4 } });
    });
  });

  it('every account route needs a credential', async () => {
    const routes = [
      ['GET', '/api/v1/account'],
      ['GET', '/api/v1/api-keys'],
      ['POST', '/api/v1/api-keys'],
      ['GET', '/api/v1/api-keys/key_x/reveal'],
      ['PATCH', '/api/v1/api-keys/key_x/usage-limit'],
      ['PATCH', '/api/v1/api-keys/key_x'],
      ['DELETE', '/api/v1/api-keys/key_x'],
      ['POST', '/api/v1/auth/logout'],
    ] as const;
    for (const [method, url] of routes) {
      const response = await gateway.request({
        method,
        url,
        ...(method === 'POST' || method === 'PATCH' ? { payload: { name: 'x' } } : {}),
      });
      expectEnvelope(response, { status: 401, code: 'GW_UNAUTHENTICATED', path: url });
    }
  });
});
