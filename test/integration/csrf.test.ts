/**
 * The double-submit CSRF rule of the account API: a state-changing request authenticated by the `gw_session`
 * cookie must echo the `gw_csrf` cookie in `x-csrf-token`; requests authenticated by a header are not
 * CSRF-prone and are unaffected.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  expectEnvelope,
  keyHeaders,
  signup,
  testPassword,
  uniqueEmail,
  type KeyBody,
} from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

interface BrowserSession {
  token: string;
  csrf: string;
  cookies: { gw_session: string };
}

function cookieOf(response: LightMyRequestResponse, name: string) {
  return response.cookies.find((cookie) => cookie.name === name);
}

describe('CSRF protection of cookie-authenticated account requests', () => {
  let gateway: TestGateway;

  /** A browser's view after sign-up: the two cookies it was given. */
  const browserSession = async (): Promise<BrowserSession> => {
    const created = await signup(gateway);
    const csrf = cookieOf(created.response, 'gw_csrf')?.value;
    expect(csrf).toBeTruthy();
    return { token: created.token, csrf: csrf!, cookies: { gw_session: created.token } };
  };
  const keyCount = async (token: string) =>
    (await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(token) })).json<KeyBody[]>()
      .length;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => gateway?.close());

  it('signup and login set gw_csrf beside gw_session: readable by script, SameSite=Strict, same path and expiry, bound to the session', async () => {
    const email = uniqueEmail('csrf');
    const created = await signup(gateway, email);
    const login = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email, password: testPassword },
    });
    for (const response of [created.response, login]) {
      const session = cookieOf(response, 'gw_session')!;
      const csrf = cookieOf(response, 'gw_csrf')!;
      expect(csrf.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(csrf.httpOnly).toBeFalsy();
      expect(String(csrf.sameSite).toLowerCase()).toBe('strict');
      expect(csrf.path).toBe('/');
      expect(csrf.expires).toEqual(session.expires);
    }
    expect(cookieOf(login, 'gw_csrf')!.value).not.toBe(cookieOf(created.response, 'gw_csrf')!.value);
  });

  it.each([
    ['POST', '/api/v1/api-keys', { name: 'forged' }],
    ['PATCH', '/api/v1/api-keys/:keyId', { name: 'forged' }],
    ['PATCH', '/api/v1/api-keys/:keyId/usage-limit', { daily: null }],
    ['DELETE', '/api/v1/api-keys/:keyId', undefined],
    ['POST', '/api/v1/auth/logout', undefined],
  ] as const)(
    '%s %s by cookie answers 403 without the header, with a wrong one, or with another session’s, and changes nothing',
    async (method, template, payload) => {
      const browser = await browserSession();
      const stranger = await browserSession();
      const key = await gateway.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: bearer(browser.token),
        payload: { name: 'kept', limits: { daily: 1 } },
      });
      const keyId = key.json<KeyBody>().id;
      const url = template.replace(':keyId', keyId);
      for (const headers of [
        {},
        { 'x-csrf-token': 'x'.repeat(43) },
        { 'x-csrf-token': '' },
        { 'x-csrf-token': stranger.csrf },
        { 'x-csrf-token': browser.token },
      ]) {
        const response = await gateway.request({
          method,
          url,
          cookies: browser.cookies,
          headers,
          ...(payload ? { payload } : {}),
        });
        const body = expectEnvelope(response, { status: 403, code: 'GW_CSRF_REJECTED', path: url });
        expect(body.errors[0]).toContain('x-csrf-token');
      }
      const keys = (
        await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(browser.token) })
      ).json<KeyBody[]>();
      expect(keys).toEqual([
        expect.objectContaining({ id: keyId, name: 'kept', isActive: true, limits: { daily: 1 } }),
      ]);
      // The session survived the forged logout.
      expect(
        (await gateway.request({ method: 'GET', url: '/api/v1/account', cookies: browser.cookies })).statusCode,
      ).toBe(200);
    },
  );

  it('the same requests by cookie succeed with the matching header', async () => {
    const browser = await browserSession();
    const headers = { 'x-csrf-token': browser.csrf };
    const created = await gateway.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      cookies: browser.cookies,
      headers,
      payload: { name: 'mine' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const keyId = created.json<KeyBody>().id;
    const renamed = await gateway.request({
      method: 'PATCH',
      url: `/api/v1/api-keys/${keyId}`,
      cookies: browser.cookies,
      headers,
      payload: { name: 'renamed', isActive: false },
    });
    expect(renamed.json<KeyBody>()).toMatchObject({ name: 'renamed', isActive: false });
    const capped = await gateway.request({
      method: 'PATCH',
      url: `/api/v1/api-keys/${keyId}/usage-limit`,
      cookies: browser.cookies,
      headers,
      payload: { weekly: 3 },
    });
    expect(capped.json<KeyBody>().limits).toEqual({ weekly: 3 });
    expect(
      (await gateway.request({ method: 'DELETE', url: `/api/v1/api-keys/${keyId}`, cookies: browser.cookies, headers }))
        .statusCode,
    ).toBe(204);
    expect(await keyCount(browser.token)).toBe(0);

    const logout = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/logout',
      cookies: browser.cookies,
      headers,
    });
    expect(logout.statusCode).toBe(204);
    expect(cookieOf(logout, 'gw_session')?.value).toBe('');
    expect(cookieOf(logout, 'gw_csrf')?.value).toBe('');
    expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/account', cookies: browser.cookies }), {
      status: 401,
      code: 'GW_INVALID_CREDENTIALS',
      path: '/api/v1/account',
    });
  });

  it('reads by cookie need no header', async () => {
    const browser = await browserSession();
    for (const url of [
      '/api/v1/account',
      '/api/v1/api-keys',
      '/api/v1/usage',
      '/api/v1/usage/daily',
      '/api/v1/media',
      '/api/v1/account/models',
    ]) {
      const response = await gateway.request({ method: 'GET', url, cookies: browser.cookies });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    }
  });

  it('requests authenticated by Authorization or x-api-key are unaffected, even with a session cookie beside them', async () => {
    const browser = await browserSession();
    const byBearer = await gateway.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(browser.token),
      payload: { name: 'scripted' },
    });
    expect(byBearer.statusCode, byBearer.body).toBe(201);
    const created = byBearer.json<KeyBody & { key: string }>();
    const withCookieToo = await gateway.request({
      method: 'PATCH',
      url: `/api/v1/api-keys/${created.id}`,
      headers: bearer(browser.token),
      cookies: browser.cookies,
      payload: { name: 'still scripted' },
    });
    expect(withCookieToo.statusCode, withCookieToo.body).toBe(200);
    // A key is refused these changes for its own reason (a session is needed), never for CSRF.
    const byKey = await gateway.request({
      method: 'PATCH',
      url: `/api/v1/api-keys/${created.id}`,
      headers: keyHeaders(created.key),
      cookies: browser.cookies,
      payload: { name: 'x' },
    });
    expectEnvelope(byKey, { status: 403, code: 'GW_SESSION_REQUIRED', path: `/api/v1/api-keys/${created.id}` });
    expect(
      (await gateway.request({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(browser.token) }))
        .statusCode,
    ).toBe(204);
  });

  it('a session whose browser lacks gw_csrf (it predates it) is given it back on its next request', async () => {
    const browser = await browserSession();
    const read = await gateway.request({ method: 'GET', url: '/api/v1/account', cookies: browser.cookies });
    expect(read.statusCode).toBe(200);
    const reissued = cookieOf(read, 'gw_csrf');
    expect(reissued?.value).toBe(browser.csrf);
    expect(reissued?.httpOnly).toBeFalsy();
    expect(String(reissued?.sameSite).toLowerCase()).toBe('strict');
    const withBoth = await gateway.request({
      method: 'GET',
      url: '/api/v1/account',
      cookies: { ...browser.cookies, gw_csrf: browser.csrf },
    });
    expect(cookieOf(withBoth, 'gw_csrf')).toBeUndefined();
  });

  it('an unknown session cookie answers 401 before any CSRF check', async () => {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      cookies: { gw_session: 'gws_unknownunknownunknownunknownunknownunknown' },
      payload: { name: 'x' },
    });
    expectEnvelope(response, { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/v1/api-keys' });
  });

  it('an API key in the session cookie is no credential, on reads and on paid routes alike', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/account', cookies: { gw_session: key } }), {
      status: 401,
      code: 'GW_INVALID_CREDENTIALS',
      path: '/api/v1/account',
    });
    expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/usage', cookies: { gw_session: key } }), {
      status: 401,
      code: 'GW_INVALID_CREDENTIALS',
      path: '/api/v1/usage',
    });
    const paid = await gateway.request({
      method: 'POST',
      url: '/api/v1/text/completions',
      cookies: { gw_session: key },
      payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(paid.statusCode).toBe(401);
    expect(
      (await gateway.request({ method: 'GET', url: '/api/v1/account', headers: keyHeaders(key) })).statusCode,
    ).toBe(200);
  });

  it('every documented state-changing route refuses a request the session cookie alone authenticates: 403, or 401 where the cookie is no credential', async () => {
    const browser = await browserSession();
    const document = (await gateway.request({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    }>();
    const checked: string[] = [];
    for (const [template, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
        // Routes that take no credential (signup, login) have no session to ride on; see the next test.
        if (Array.isArray(operation.security) && operation.security.length === 0) continue;
        const url = template.replace(/\{[^}]+\}/g, 'x1');
        const response = await gateway.request({
          method: method.toUpperCase() as 'POST',
          url,
          cookies: browser.cookies,
          payload: {},
        });
        const code = response.headers['x-gateway-error-code'];
        expect([403, 401], `${method} ${url}: ${response.statusCode} ${response.body}`).toContain(response.statusCode);
        if (response.statusCode === 403) expect(code, `${method} ${url}`).toBe('GW_CSRF_REJECTED');
        checked.push(`${method} ${template} ${response.statusCode}`);
      }
    }
    expect(checked).toEqual(
      expect.arrayContaining([
        'post /api/v1/api-keys 403',
        'delete /api/v1/api-keys/{keyId} 403',
        'post /api/v1/auth/logout 403',
      ]),
    );
    // The session still works: nothing above changed it.
    expect(
      (await gateway.request({ method: 'GET', url: '/api/v1/account', cookies: browser.cookies })).statusCode,
    ).toBe(200);
  });

  it('signup and login take JSON only, which a cross-site form cannot send (no login CSRF)', async () => {
    const email = uniqueEmail('formlogin');
    await signup(gateway, email);
    const form = `email=${encodeURIComponent(email)}&password=${encodeURIComponent(testPassword)}`;
    for (const url of ['/api/v1/auth/login', '/api/v1/auth/signup']) {
      for (const [contentType, payload] of [
        ['application/x-www-form-urlencoded', form],
        ['text/plain', JSON.stringify({ email, password: testPassword })],
        [
          'multipart/form-data; boundary=b',
          `--b\r\ncontent-disposition: form-data; name="email"\r\n\r\n${email}\r\n--b--\r\n`,
        ],
      ] as const) {
        const response = await gateway.request({
          method: 'POST',
          url,
          headers: { 'content-type': contentType },
          payload,
        });
        expect(response.statusCode, `${url} as ${contentType}: ${response.body}`).toBe(415);
        expect(cookieOf(response, 'gw_session')).toBeUndefined();
      }
    }
  });

  it('answers that carry a session token, a raw key or account data are never stored by a cache', async () => {
    const browser = await browserSession();
    const login = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: uniqueEmail('nostore'), password: testPassword },
    });
    const created = await gateway.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(browser.token),
      payload: { name: 'cached?' },
    });
    expect(created.statusCode).toBe(201);
    const { id } = created.json<{ id: string }>();
    const revealed = await gateway.request({
      method: 'GET',
      url: `/api/v1/api-keys/${id}/reveal`,
      headers: bearer(browser.token),
    });
    const account = await gateway.request({ method: 'GET', url: '/api/v1/account', cookies: browser.cookies });
    for (const response of [(await signup(gateway)).response, login, created, revealed, account]) {
      expect(response.headers['cache-control'], response.body).toBe('no-store');
    }
  });
});
