import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { expectEnvelope, shippedConfigWith, testPassword, uniqueEmail } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const accounts = `
accounts:
  signupCredits: 0
  loginFailuresPerEmail: 3
  loginFailuresPerAddress: 5
  signupsPerAddress: 3
  throttleWindowSeconds: 600
  throttleMaxEntries: 100
`;

describe('login and signup throttling', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ configText: shippedConfigWith({ accounts }) });
  });
  afterAll(async () => gateway?.close());

  const login = (email: string, password: string, remoteAddress: string) =>
    gateway.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, remoteAddress });
  const signup = (email: string, remoteAddress: string) =>
    gateway.request({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email, password: testPassword },
      remoteAddress,
    });

  function expectThrottled(response: LightMyRequestResponse, path: string): string {
    const body = expectEnvelope(response, { status: 429, code: 'GW_TOO_MANY_ATTEMPTS', path });
    const retryAfter = Number(response.headers['retry-after']);
    expect(
      Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 600,
      String(response.headers['retry-after']),
    ).toBe(true);
    return body.errors[0]!;
  }

  it('after too many wrong passwords for an email even the right one is refused 429, from any address', async () => {
    const email = uniqueEmail('guessed');
    expect((await signup(email, '192.0.2.1')).statusCode).toBe(201);
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await login(email, `wrong password ${attempt}`, `198.51.100.${attempt}`)).statusCode).toBe(401);
    }
    expect(expectThrottled(await login(email, testPassword, '198.51.100.50'), '/api/v1/auth/login')).toContain(
      'for this email',
    );
    expect(
      expectThrottled(await login(email.toUpperCase(), testPassword, '198.51.100.51'), '/api/v1/auth/login'),
    ).toContain('for this email');
  });

  it('an address failing across many emails is refused 429; a success on one email does not reset it', async () => {
    const address = '203.0.113.7';
    const mine = uniqueEmail('mine');
    expect((await signup(mine, '192.0.2.2')).statusCode).toBe(201);
    for (let index = 0; index < 4; index++)
      expect((await login(uniqueEmail('victim'), 'wrong password', address)).statusCode).toBe(401);
    expect((await login(mine, testPassword, address)).statusCode).toBe(200);
    expect((await login(uniqueEmail('victim'), 'wrong password', address)).statusCode).toBe(401);
    expect(
      expectThrottled(await login(uniqueEmail('victim'), 'wrong password', address), '/api/v1/auth/login'),
    ).toContain('from this address');
    expect(expectThrottled(await login(mine, testPassword, address), '/api/v1/auth/login')).toContain(
      'from this address',
    );
    // Another address is not affected.
    expect((await login(mine, testPassword, '203.0.113.8')).statusCode).toBe(200);
  });

  it('concurrent wrong passwords for one email count before any of them is checked: no more than the limit get through', async () => {
    const email = uniqueEmail('raced');
    expect((await signup(email, '192.0.2.3')).statusCode).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, attempt) =>
        login(email, `wrong password ${attempt}`, `198.51.100.${100 + attempt}`),
      ),
    );
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 401)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(9);
  });

  it('signups per address are limited', async () => {
    const address = '192.0.2.99';
    for (let index = 0; index < 3; index++) expect((await signup(uniqueEmail('bulk'), address)).statusCode).toBe(201);
    expect(expectThrottled(await signup(uniqueEmail('bulk'), address), '/api/v1/auth/signup')).toContain(
      'signups from this address',
    );
    expect((await signup(uniqueEmail('bulk'), '192.0.2.100')).statusCode).toBe(201);
  });

  it('logout clears the session and CSRF cookies with the flags they were set with', async () => {
    const created = await signup(uniqueEmail('cookie'), '192.0.2.3');
    const token = created.json<{ token: string }>().token;
    const logout = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(logout.statusCode).toBe(204);
    const named = (header: string | string[] | number | undefined, name: string) =>
      [header ?? []]
        .flat()
        .map(String)
        .find((cookie) => cookie.startsWith(`${name}=`)) ?? '';
    const flags = (cookie: string) =>
      cookie
        .split(';')
        .slice(1)
        .map((part) => part.trim())
        .filter((part) => !/^(Expires|Max-Age)=/i.test(part))
        .sort();
    for (const name of ['gw_session', 'gw_csrf']) {
      const cleared = named(logout.headers['set-cookie'], name);
      expect(cleared).toMatch(new RegExp(`^${name}=;`));
      expect(flags(cleared)).toEqual(flags(named(created.headers['set-cookie'], name)));
    }
    expect(flags(named(logout.headers['set-cookie'], 'gw_session'))).toEqual(
      expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/']),
    );
    expect(flags(named(logout.headers['set-cookie'], 'gw_csrf'))).toEqual(
      expect.arrayContaining(['SameSite=Strict', 'Path=/']),
    );
    expect(flags(named(logout.headers['set-cookie'], 'gw_csrf'))).not.toContain('HttpOnly');
  });
});

describe('self-signup switched off', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      configText: shippedConfigWith({ accounts: 'accounts:\n  selfSignup: false\n' }),
    });
  });
  afterAll(async () => gateway?.close());

  it('answers 403 in the envelope and creates nothing; the operator can still create accounts', async () => {
    const email = uniqueEmail('closed');
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email, password: testPassword },
    });
    const body = expectEnvelope(response, { status: 403, code: 'GW_FORBIDDEN', path: '/api/v1/auth/signup' });
    expect(body.errors[0]).toContain('self-signup is switched off');
    const login = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email, password: testPassword },
    });
    expect(login.statusCode).toBe(401);
    await gateway.gateway.core.services.accounts.createAccount({ email, password: testPassword });
    expect(
      (await gateway.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: testPassword } }))
        .statusCode,
    ).toBe(200);
  });
});

describe('the client address behind a load balancer (server.trustProxy)', () => {
  const signupFrom = (gateway: TestGateway, remoteAddress: string, forwardedFor: string) =>
    gateway.request({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email: uniqueEmail('proxied'), password: testPassword },
      remoteAddress,
      headers: { 'x-forwarded-for': forwardedFor },
    });

  it('without it, X-Forwarded-For is ignored: a client cannot dodge the per-address limit by inventing addresses', async () => {
    const gateway = await startTestGateway({ configText: shippedConfigWith({ accounts }) });
    try {
      for (let index = 0; index < 3; index++)
        expect((await signupFrom(gateway, '192.0.2.77', `198.51.100.${index}`)).statusCode).toBe(201);
      expectEnvelope(await signupFrom(gateway, '192.0.2.77', '198.51.100.99'), {
        status: 429,
        code: 'GW_TOO_MANY_ATTEMPTS',
        path: '/api/v1/auth/signup',
      });
    } finally {
      await gateway.close();
    }
  });

  it('with the proxy listed, each client behind it has a limit of its own; the proxy cannot be named by the client', async () => {
    const gateway = await startTestGateway({
      configText: shippedConfigWith({ accounts, server: 'server:\n  trustProxy: [10.0.0.0/8, loopback]\n' }),
    });
    try {
      // Four clients behind the proxy 10.1.2.3: none is refused, though four signups passed through one address.
      for (let index = 0; index < 4; index++)
        expect((await signupFrom(gateway, '10.1.2.3', `203.0.113.${index}`)).statusCode).toBe(201);
      // One client behind it, four times: its own limit.
      for (let index = 0; index < 3; index++)
        expect((await signupFrom(gateway, '10.1.2.3', '203.0.113.200')).statusCode).toBe(201);
      expectEnvelope(await signupFrom(gateway, '10.1.2.3', '203.0.113.200'), {
        status: 429,
        code: 'GW_TOO_MANY_ATTEMPTS',
        path: '/api/v1/auth/signup',
      });
      // A client outside the listed ranges that sends the header is still counted by its own address.
      for (let index = 0; index < 3; index++)
        expect((await signupFrom(gateway, '192.0.2.88', `203.0.113.${50 + index}`)).statusCode).toBe(201);
      expectEnvelope(await signupFrom(gateway, '192.0.2.88', '203.0.113.60'), {
        status: 429,
        code: 'GW_TOO_MANY_ATTEMPTS',
        path: '/api/v1/auth/signup',
      });
    } finally {
      await gateway.close();
    }
  });
});
