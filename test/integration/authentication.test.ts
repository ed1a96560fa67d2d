import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { lookupHashOf } from '../../src/identity/credential-codec.ts';
import { deriveSecretKeys } from '../../src/identity/secret-keys.ts';
import { sessions } from '../../src/storage/schema.ts';
import {
  adminHeaders,
  bearer,
  createKeyOverHttp,
  expectEnvelope,
  keyHeaders,
  signup,
  testPassword,
  uniqueEmail,
  type AccountBody,
  type SessionBody,
} from '../support/http-helpers.ts';
import { startTestGateway, testSecret, type TestGateway } from '../support/test-gateway.ts';

const balancePath = '/api/compat/v1/balance';
const keyLookupPath = '/api/compat/v1/api-key';

/** A well-formed credential that was never issued. */
const unknownKey = () => `gwk_${randomBytes(32).toString('base64url')}`;
const unknownSession = () => `gws_${randomBytes(32).toString('base64url')}`;

describe('authentication', () => {
  let gateway: TestGateway;
  /** Every error response a test saw together with the raw keys that were in play, checked at the end. */
  const errorBodies: { body: string; secrets: string[] }[] = [];

  const remember = (response: LightMyRequestResponse, ...secrets: string[]) => {
    errorBodies.push({ body: response.body + JSON.stringify(response.headers), secrets });
    return response;
  };

  const balance = async (headers: Record<string, string>, ...secrets: string[]) =>
    remember(await gateway.request({ method: 'GET', url: balancePath, headers }), ...secrets);

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => gateway?.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  describe('probes', () => {
    it.each(['/api/alpha', '/api/beta', '/api/gamma'])('HEAD %s needs no credential', async (url) => {
      const response = await gateway.request({ method: 'HEAD', url });
      expect(response.statusCode).toBe(200);
    });

    it('a GET on a protected route without a credential is refused even though the probes are open', async () => {
      expectEnvelope(await balance({}), { status: 401, code: 'GW_UNAUTHENTICATED', path: balancePath });
    });
  });

  describe('accepted credentials', () => {
    it('accepts a key in x-api-key and in Authorization: Bearer', async () => {
      const { key } = await gateway.createFundedKey({ credits: 3.25 });
      const viaHeader = await balance(keyHeaders(key), key);
      expect(viaHeader.statusCode).toBe(200);
      expect(viaHeader.json()).toEqual({ creditBalance: 3.25 });
      const viaBearer = await balance(bearer(key), key);
      expect(viaBearer.statusCode).toBe(200);
      expect(viaBearer.json()).toEqual({ creditBalance: 3.25 });
    });

    it('accepts the bearer scheme name in any letter case', async () => {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      expect((await balance({ authorization: `bearer ${key}` }, key)).statusCode).toBe(200);
      expect((await balance({ authorization: `BEARER ${key}` }, key)).statusCode).toBe(200);
    });

    it('accepts a session token as a bearer credential', async () => {
      const session = await signup(gateway);
      const response = await balance(bearer(session.token), session.token);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ creditBalance: session.account.creditBalance });
    });

    it('does not accept a session token in x-api-key (that header carries API keys only)', async () => {
      const session = await signup(gateway);
      expectEnvelope(await balance(keyHeaders(session.token), session.token), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
    });
  });

  describe('x-api-key wins over Authorization', () => {
    it('valid x-api-key with a garbage bearer answers 200', async () => {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      const response = await balance({ 'x-api-key': key, authorization: 'Bearer garbage-garbage' }, key);
      expect(response.statusCode).toBe(200);
    });

    it('valid x-api-key with a malformed Authorization header answers 200', async () => {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      const response = await balance({ 'x-api-key': key, authorization: 'Basic dXNlcjpwYXNz' }, key);
      expect(response.statusCode).toBe(200);
    });

    it('garbage x-api-key with a valid bearer key answers 401', async () => {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      expectEnvelope(await balance({ 'x-api-key': 'garbage', authorization: `Bearer ${key}` }, key), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
    });

    it('garbage x-api-key with a valid bearer session answers 401', async () => {
      const session = await signup(gateway);
      expectEnvelope(
        await balance({ 'x-api-key': unknownKey(), authorization: `Bearer ${session.token}` }, session.token),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: balancePath },
      );
    });

    it('with two valid keys of different accounts, the x-api-key account is the one served', async () => {
      const first = await gateway.createFundedKey({ credits: 1.5 });
      const second = await gateway.createFundedKey({ credits: 7 });
      const response = await balance(
        { 'x-api-key': first.key, authorization: `Bearer ${second.key}` },
        first.key,
        second.key,
      );
      expect(response.json()).toEqual({ creditBalance: 1.5 });
    });
  });

  describe('401 for missing or bad credentials', () => {
    const protectedRoutes = [
      { method: 'GET', url: balancePath },
      { method: 'GET', url: '/api/compat/v1/usage' },
      { method: 'GET', url: keyLookupPath },
      { method: 'GET', url: '/api/v1/ai/models' },
      { method: 'GET', url: '/api/v1/ai/models/sandbox-echo' },
      { method: 'GET', url: '/api/v1/account' },
      { method: 'GET', url: '/api/v1/api-keys' },
      { method: 'POST', url: '/api/v1/auth/logout' },
    ] as const;

    it.each(protectedRoutes)('$method $url without a credential answers 401', async ({ method, url }) => {
      expectEnvelope(await gateway.request({ method, url }), { status: 401, code: 'GW_UNAUTHENTICATED', path: url });
    });

    it.each(protectedRoutes)('$method $url with an unknown key answers 401', async ({ method, url }) => {
      const key = unknownKey();
      const response = remember(await gateway.request({ method, url, headers: keyHeaders(key) }), key);
      expectEnvelope(response, { status: 401, code: 'GW_INVALID_CREDENTIALS', path: url });
    });

    it('blank credential headers count as missing', async () => {
      expectEnvelope(await balance({ 'x-api-key': '   ', authorization: '' }), {
        status: 401,
        code: 'GW_UNAUTHENTICATED',
        path: balancePath,
      });
    });

    it('an unknown key sent as bearer answers 401', async () => {
      const key = unknownKey();
      expectEnvelope(await balance(bearer(key), key), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
    });

    it('a credential that is not shaped like a key answers 401', async () => {
      expectEnvelope(await balance(keyHeaders('not-a-key')), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
      expectEnvelope(await balance(bearer('not-a-key')), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
      expectEnvelope(await balance(keyHeaders(`gwk_${'a'.repeat(300)}`)), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
    });

    it.each([
      ['Basic', (key: string) => `Basic ${Buffer.from(`user:${key}`).toString('base64')}`],
      ['Token', (key: string) => `Token ${key}`],
      ['bare key', (key: string) => key],
      ['Bearer without a token', () => 'Bearer'],
      ['Bearer with two tokens', (key: string) => `Bearer ${key} ${key}`],
    ])('a malformed Authorization scheme (%s) answers 401, even around a valid key', async (_label, header) => {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      expectEnvelope(await balance({ authorization: header(key) }, key), {
        status: 401,
        code: 'GW_UNAUTHENTICATED',
        path: balancePath,
      });
    });
  });

  describe('revocation and disabling', () => {
    it('a key revoked by its owner answers 401 at once, right after a successful (cached) request', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token));
      expect((await balance(keyHeaders(created.key), created.key)).statusCode).toBe(200);
      expect((await balance(keyHeaders(created.key), created.key)).statusCode).toBe(200);
      const revoked = await gateway.request({
        method: 'DELETE',
        url: `/api/v1/api-keys/${created.id}`,
        headers: bearer(session.token),
      });
      expect(revoked.statusCode).toBe(204);
      expectEnvelope(await balance(keyHeaders(created.key), created.key), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
      expectEnvelope(await balance(bearer(created.key), created.key), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
    });

    it('a key revoked through the admin API answers 401 at once', async () => {
      const { key, keyId } = await gateway.createFundedKey({ credits: 1 });
      expect((await balance(keyHeaders(key), key)).statusCode).toBe(200);
      const revoked = await gateway.request({
        method: 'DELETE',
        url: `/api/admin/v1/api-keys/${keyId}`,
        headers: adminHeaders,
      });
      expect(revoked.statusCode).toBe(204);
      expectEnvelope(await balance(keyHeaders(key), key), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
    });

    it('a key revoked by its owner answers 401 on the very next request, even right after a cached success', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token));
      expect((await balance(keyHeaders(created.key), created.key)).statusCode).toBe(200);
      const revoked = await gateway.request({
        method: 'DELETE',
        url: `/api/v1/api-keys/${created.id}`,
        headers: bearer(session.token),
      });
      expect(revoked.statusCode).toBe(204);
      expectEnvelope(await balance(keyHeaders(created.key), created.key), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
    });

    it('a disabled key answers 401 at once, and works again once re-enabled', async () => {
      const session = await signup(gateway);
      const created = await createKeyOverHttp(gateway, bearer(session.token));
      expect((await balance(keyHeaders(created.key), created.key)).statusCode).toBe(200);

      const disabled = await gateway.request({
        method: 'PATCH',
        url: `/api/v1/api-keys/${created.id}`,
        headers: bearer(session.token),
        payload: { isActive: false },
      });
      expect(disabled.statusCode).toBe(200);
      expect(disabled.json()).toMatchObject({ id: created.id, isActive: false });
      expectEnvelope(await balance(keyHeaders(created.key), created.key), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
      expectEnvelope(
        remember(
          await gateway.request({ method: 'GET', url: keyLookupPath, headers: keyHeaders(created.key) }),
          created.key,
        ),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: keyLookupPath },
      );

      const enabled = await gateway.request({
        method: 'PATCH',
        url: `/api/v1/api-keys/${created.id}`,
        headers: bearer(session.token),
        payload: { isActive: true },
      });
      expect(enabled.statusCode).toBe(200);
      expect(enabled.json()).toMatchObject({ id: created.id, isActive: true });
      expect((await balance(keyHeaders(created.key), created.key)).statusCode).toBe(200);
    });

    it('a key disabled through the admin API answers 401 at once, and works again once re-enabled', async () => {
      const { key, keyId } = await gateway.createFundedKey({ credits: 1 });
      expect((await balance(keyHeaders(key), key)).statusCode).toBe(200);
      const disable = await gateway.request({
        method: 'PATCH',
        url: `/api/admin/v1/api-keys/${keyId}`,
        headers: adminHeaders,
        payload: { isActive: false },
      });
      expect(disable.statusCode).toBe(200);
      expectEnvelope(await balance(keyHeaders(key), key), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
      const enable = await gateway.request({
        method: 'PATCH',
        url: `/api/admin/v1/api-keys/${keyId}`,
        headers: adminHeaders,
        payload: { isActive: true },
      });
      expect(enable.statusCode).toBe(200);
      expect((await balance(keyHeaders(key), key)).statusCode).toBe(200);
    });

    it('an unknown key that is rejected once stays rejected, and a revoked key cannot be re-enabled', async () => {
      const { key, keyId } = await gateway.createFundedKey({ credits: 1 });
      await gateway.request({ method: 'DELETE', url: `/api/admin/v1/api-keys/${keyId}`, headers: adminHeaders });
      const enable = await gateway.request({
        method: 'PATCH',
        url: `/api/admin/v1/api-keys/${keyId}`,
        headers: adminHeaders,
        payload: { isActive: true },
      });
      expectEnvelope(enable, { status: 404, code: 'GW_NOT_FOUND', path: `/api/admin/v1/api-keys/${keyId}` });
      expectEnvelope(await balance(keyHeaders(key), key), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
    });
  });

  describe('key lookup accepts x-api-key only', () => {
    it('answers 200 with x-api-key', async () => {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      const response = await gateway.request({ method: 'GET', url: keyLookupPath, headers: keyHeaders(key) });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ name: 'test key', isActive: true });
    });

    it('answers 403 with the key as Authorization: Bearer', async () => {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      const response = remember(
        await gateway.request({ method: 'GET', url: keyLookupPath, headers: bearer(key) }),
        key,
      );
      expectEnvelope(response, { status: 403, code: 'GW_KEY_REQUIRED', path: keyLookupPath });
    });

    it('answers 403 with a session token', async () => {
      const session = await signup(gateway);
      const response = remember(
        await gateway.request({ method: 'GET', url: keyLookupPath, headers: bearer(session.token) }),
        session.token,
      );
      expectEnvelope(response, { status: 403, code: 'GW_KEY_REQUIRED', path: keyLookupPath });
    });
  });

  describe('sessions', () => {
    it('signup issues a token that works as bearer and as the gw_session cookie on account routes', async () => {
      const email = uniqueEmail();
      const session = await signup(gateway, email);
      expect(session.token).toMatch(/^gws_/);
      const cookie = session.response.cookies.find((item) => item.name === 'gw_session');
      expect(cookie?.value).toBe(session.token);
      expect(cookie?.httpOnly).toBe(true);

      const viaBearer = await gateway.request({
        method: 'GET',
        url: '/api/v1/account',
        headers: bearer(session.token),
      });
      expect(viaBearer.statusCode).toBe(200);
      expect(viaBearer.json()).toEqual(session.account);

      const viaCookie = await gateway.request({
        method: 'GET',
        url: '/api/v1/account',
        cookies: { gw_session: session.token },
      });
      expect(viaCookie.statusCode).toBe(200);
      expect(viaCookie.json<AccountBody>()).toEqual(session.account);

      const keysViaCookie = await gateway.request({
        method: 'GET',
        url: '/api/v1/api-keys',
        cookies: { gw_session: session.token },
      });
      expect(keysViaCookie.statusCode).toBe(200);
      expect(keysViaCookie.json()).toEqual([]);
    });

    it('login issues a fresh token that works as bearer and as cookie', async () => {
      const email = uniqueEmail();
      const first = await signup(gateway, email);
      const login = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email, password: testPassword },
      });
      expect(login.statusCode).toBe(200);
      const session = login.json<SessionBody>();
      expect(session.token).not.toBe(first.token);
      expect(session.account).toEqual(first.account);
      expect(login.cookies.find((item) => item.name === 'gw_session')?.value).toBe(session.token);

      for (const request of [{ headers: bearer(session.token) }, { cookies: { gw_session: session.token } }]) {
        const response = await gateway.request({ method: 'GET', url: '/api/v1/account', ...request });
        expect(response.statusCode).toBe(200);
        expect(response.json<AccountBody>().id).toBe(first.account.id);
      }
    });

    it('an unknown cookie answers 401, and a cookie does not override a bearer credential', async () => {
      const token = unknownSession();
      expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/account', cookies: { gw_session: token } }), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: '/api/v1/account',
      });
      const session = await signup(gateway);
      const response = await gateway.request({
        method: 'GET',
        url: '/api/v1/account',
        headers: bearer(session.token),
        cookies: { gw_session: token },
      });
      expect(response.statusCode).toBe(200);
    });

    it('logout ends the session: later use as bearer or cookie answers 401, other sessions stay valid', async () => {
      const email = uniqueEmail();
      const session = await signup(gateway, email);
      const other = (
        await gateway.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: testPassword } })
      ).json<SessionBody>();
      expect(
        (await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(session.token) })).statusCode,
      ).toBe(200);

      const logout = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/logout',
        headers: bearer(session.token),
      });
      expect(logout.statusCode).toBe(204);
      const cleared = logout.cookies.find((item) => item.name === 'gw_session');
      expect(cleared?.value ?? '').toBe('');

      expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(session.token) }), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: '/api/v1/account',
      });
      expectEnvelope(
        await gateway.request({ method: 'GET', url: '/api/v1/account', cookies: { gw_session: session.token } }),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/v1/account' },
      );
      expectEnvelope(await balance(bearer(session.token)), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
      expect(
        (await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(other.token) })).statusCode,
      ).toBe(200);
    });

    it('logout by cookie ends that session', async () => {
      const session = await signup(gateway);
      const csrf = session.response.cookies.find((item) => item.name === 'gw_csrf')?.value ?? '';
      const logout = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/logout',
        cookies: { gw_session: session.token },
        headers: { 'x-csrf-token': csrf },
      });
      expect(logout.statusCode).toBe(204);
      expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(session.token) }), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: '/api/v1/account',
      });
    });

    it('logout with an API key is refused (403) and does not end anything', async () => {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      const response = remember(
        await gateway.request({ method: 'POST', url: '/api/v1/auth/logout', headers: keyHeaders(key) }),
        key,
      );
      expectEnvelope(response, { status: 403, code: 'GW_SESSION_REQUIRED', path: '/api/v1/auth/logout' });
      expect((await balance(keyHeaders(key), key)).statusCode).toBe(200);
    });

    it('an unknown session token answers 401', async () => {
      expectEnvelope(await balance(bearer(unknownSession())), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: balancePath,
      });
      expectEnvelope(
        await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(unknownSession()) }),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/v1/account' },
      );
    });

    it('a session whose expiry has passed in storage answers 401', async () => {
      const session = await signup(gateway);
      const token = unknownSession();
      await gateway.gateway.core.storage.db.insert(sessions).values({
        id: `sess_expired_${randomBytes(6).toString('hex')}`,
        accountId: session.account.id,
        tokenHash: lookupHashOf(deriveSecretKeys(testSecret), token),
        expiresAt: new Date(Date.now() - 1000),
      });
      expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(token) }), {
        status: 401,
        code: 'GW_INVALID_CREDENTIALS',
        path: '/api/v1/account',
      });
    });

    it('a stored session that has not expired works (the same path the expiry test exercises)', async () => {
      const session = await signup(gateway);
      const token = unknownSession();
      await gateway.gateway.core.storage.db.insert(sessions).values({
        id: `sess_live_${randomBytes(6).toString('hex')}`,
        accountId: session.account.id,
        tokenHash: lookupHashOf(deriveSecretKeys(testSecret), token),
        expiresAt: new Date(Date.now() + 60_000),
      });
      const response = await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(token) });
      expect(response.statusCode).toBe(200);
      expect(response.json<AccountBody>().id).toBe(session.account.id);
    });

    it('a session used successfully (and cached) answers 401 once its lifetime is over', async () => {
      const session = await signup(gateway);
      expect(
        (await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(session.token) })).statusCode,
      ).toBe(200);
      const ttlMs = gateway.config.accounts.sessionTtlSeconds * 1000;
      const later = Date.now() + ttlMs + 60_000;
      vi.spyOn(Date, 'now').mockReturnValue(later);
      const response = await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(session.token) });
      vi.restoreAllMocks();
      expect(response.statusCode).toBe(401);
      expect(response.headers['x-gateway-error-code']).toBe('GW_INVALID_CREDENTIALS');
    });

    it('wrong password and unknown email both answer 401 on login', async () => {
      const email = uniqueEmail();
      await signup(gateway, email);
      expectEnvelope(
        await gateway.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { email, password: 'not the password' },
        }),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/v1/auth/login' },
      );
      expectEnvelope(
        await gateway.request({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { email: uniqueEmail('nobody'), password: testPassword },
        }),
        { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/v1/auth/login' },
      );
    });
  });

  it('a valid key with a depleted credit balance gets 403, not 401, on generation routes', async () => {
    const { key } = await gateway.createFundedKey({ credits: 0 });
    const generate = { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] };
    for (const [url, payload] of [
      ['/api/v1/text/completions', generate],
      ['/api/alpha/v1/chat/completions', generate],
    ] as const) {
      const response = await gateway.request({ method: 'POST', url, headers: { 'x-api-key': key }, payload });
      expectEnvelope(response, { status: 403, code: 'GW_INSUFFICIENT_BALANCE', path: url });
    }
    // The same key still authenticates: reading the balance works.
    expect(
      (await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: { 'x-api-key': key } })).json(),
    ).toEqual({ creditBalance: 0 });
  });

  it('never puts a raw key or session token into an error body or header', () => {
    // Runs after the tests above (vitest runs a file's tests in order) and checks every error they collected.
    const errors = errorBodies.filter((entry) => !entry.body.startsWith('{"creditBalance"'));
    expect(errors.length).toBeGreaterThan(20);
    for (const { body, secrets } of errors) {
      for (const secret of secrets) {
        expect(body).not.toContain(secret);
        expect(body).not.toContain(secret.slice(4, 24));
      }
    }
  });
});
