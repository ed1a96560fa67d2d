/**
 * Per-key rate limits (requests and tokens per minute, requests in flight), set through the account and admin
 * APIs, answered 429 with the surface's own headers; in memory on one process, in Redis with REDIS_URL, and
 * the configured behaviour while Redis is down.
 */
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { freePort } from '../support/free-port.ts';
import {
  adminHeaders,
  bearer,
  createKeyOverHttp,
  expectEnvelope,
  keyHeaders,
  shippedConfigWith,
  signup,
  testPassword,
  uniqueEmail,
  type KeyBody,
} from '../support/http-helpers.ts';
import { fakeProviderYaml, modelYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const redisUrl = 'redis://127.0.0.1:6379';
const chat = { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hello there' }] };
const message = { model: 'sandbox-echo', max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] };

type RateLimitsBody = Partial<Record<'requestsPerMinute' | 'tokensPerMinute' | 'concurrentRequests', number>>;

function rateLimitsConfig(extra: Record<string, string> = {}, fake?: FakeServer): string {
  const prefix = `rl-test-${randomUUID()}`;
  const sections: Record<string, string> = {
    rateLimits: `rateLimits:\n  redisKeyPrefix: ${prefix}\n${extra.rateLimits ?? ''}`,
  };
  if (fake) {
    const shipped = shippedConfigWith(sections);
    // The shipped catalog and a model that drips its answer slowly from the OpenAI fake.
    return shipped
      .replace(/^providers:\n/m, `providers:\n${fakeProviderYaml('oai', 'openai', fake)}\n`)
      .replace(/^models:\n/m, `models:\n${modelYaml('drip', { provider: 'oai', upstream: 'fake-drip-50-40' })}`);
  }
  return shippedConfigWith(sections);
}

function expectRateLimited(response: LightMyRequestResponse, path: string, text: string): void {
  const body = expectEnvelope(response, { status: 429, code: 'GW_RATE_LIMITED', path });
  expect(body.errors[0]).toContain(text);
  const retryAfter = Number(response.headers['retry-after']);
  expect(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
    String(response.headers['retry-after']),
  ).toBe(true);
  expect(response.headers['x-should-retry']).toBe('true');
}

/** Every case, on one process with counters in memory and on one process with counters in Redis. */
describe.each<{ store: string; env: Record<string, string> }>([
  { store: 'memory', env: {} },
  { store: 'Redis', env: { REDIS_URL: redisUrl } },
])('per-key rate limits, counters in $store', ({ env }) => {
  let gateway: TestGateway;
  let fake: FakeServer;
  let address: string;

  beforeAll(async () => {
    fake = await startOpenAiFake();
    gateway = await startTestGateway({ upstreams: [fake], env, configText: rateLimitsConfig({}, fake) });
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => gateway?.close());

  const alpha = (key: string) =>
    gateway.request({ method: 'POST', url: '/api/alpha/v1/chat/completions', headers: keyHeaders(key), payload: chat });
  const beta = (key: string) =>
    gateway.request({ method: 'POST', url: '/api/beta/v1/messages', headers: keyHeaders(key), payload: message });

  /** Sets the key's own rate limits as the operator. */
  async function limitKey(keyId: string, limits: RateLimitsBody): Promise<void> {
    const set = await gateway.request({
      method: 'PATCH',
      url: `/api/admin/v1/api-keys/${keyId}/rate-limits`,
      headers: adminHeaders,
      payload: limits,
    });
    expect(set.statusCode, set.body).toBe(200);
  }

  /** A signed-up account with credits and a key made over HTTP. */
  async function sessionAndKey(): Promise<{ token: string; accountId: string; key: CreatedKey }> {
    const session = await signup(gateway);
    await gateway.gateway.core.services.accounts.addCredits(session.account.id, 10, null);
    const key = await createKeyOverHttp(gateway, bearer(session.token));
    return { token: session.token, accountId: session.account.id, key };
  }

  it('requests per minute, set through the account API: alpha answers with OpenAI headers, then 429; another key is untouched', async () => {
    const { token, key } = await sessionAndKey();
    const other = await createKeyOverHttp(gateway, bearer(token), { name: 'other' });
    const patched = await gateway.request({
      method: 'PATCH',
      url: `/api/v1/api-keys/${key.id}/rate-limits`,
      headers: bearer(token),
      payload: { requestsPerMinute: 2 },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json<KeyBody & { rateLimits: RateLimitsBody }>().rateLimits).toEqual({ requestsPerMinute: 2 });
    const first = await alpha(key.key);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['x-ratelimit-limit-requests']).toBe('2');
    expect(first.headers['x-ratelimit-remaining-requests']).toBe('1');
    expect(String(first.headers['x-ratelimit-reset-requests'])).toMatch(/^(\d+ms|\d+s|\d+m\d+s)$/);
    expect(first.headers['x-ratelimit-limit-tokens']).toBeUndefined();
    expect((await alpha(key.key)).headers['x-ratelimit-remaining-requests']).toBe('0');
    const refused = await alpha(key.key);
    expectRateLimited(refused, '/api/alpha/v1/chat/completions', 'limit of 2 requests per minute');
    expect(refused.headers['x-ratelimit-limit-requests']).toBe('2');
    expect(refused.headers['x-ratelimit-remaining-requests']).toBe('0');
    // Refused before any work: no generation was recorded for the third request (the session is not rate-limited).
    const history = await gateway.request({ method: 'GET', url: '/api/v1/usage', headers: bearer(token) });
    expect(history.json<{ results: unknown[] }>().results).toHaveLength(2);
    expect((await alpha(other.key)).statusCode).toBe(200);
    // The key's list shows its limits.
    const listed = await gateway.request({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(token) });
    expect(
      listed.json<Array<{ id: string; rateLimits: RateLimitsBody }>>().find((item) => item.id === key.id)?.rateLimits,
    ).toEqual({ requestsPerMinute: 2 });
  });

  it('beta answers with Anthropic headers, and 429 past the limit', async () => {
    const { key } = await sessionAndKey();
    await limitKey(key.id, { requestsPerMinute: 1 });
    const first = await beta(key.key);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['anthropic-ratelimit-requests-limit']).toBe('1');
    expect(first.headers['anthropic-ratelimit-requests-remaining']).toBe('0');
    const reset = Date.parse(String(first.headers['anthropic-ratelimit-requests-reset']));
    expect(reset).toBeGreaterThan(Date.now() - 1000);
    expect(reset).toBeLessThanOrEqual(Date.now() + 61_000);
    expect(first.headers['x-ratelimit-limit-requests']).toBeUndefined();
    const refused = await beta(key.key);
    expectRateLimited(refused, '/api/beta/v1/messages', 'requests per minute');
    expect(refused.headers['anthropic-ratelimit-requests-remaining']).toBe('0');
  });

  it('tokens per minute: charged with what a request used when it settles, refused while the budget is spent', async () => {
    const { key } = await sessionAndKey();
    await limitKey(key.id, { tokensPerMinute: 3 });
    const first = await alpha(key.key);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['x-ratelimit-limit-tokens']).toBe('3');
    expect(first.headers['x-ratelimit-remaining-tokens']).toBe('3');
    const used = first.json<{ usage: { total_tokens: number } }>().usage.total_tokens;
    expect(used).toBeGreaterThan(3);
    await gateway.settled();
    const refused = await alpha(key.key);
    expectRateLimited(refused, '/api/alpha/v1/chat/completions', 'limit of 3 tokens per minute');
    expect(refused.headers['x-ratelimit-remaining-tokens']).toBe('0');
    expectRateLimited(await beta(key.key), '/api/beta/v1/messages', 'tokens per minute');
  });

  it('concurrent requests: a second request is refused while a stream is in flight, and the slot comes back when the client leaves', async () => {
    const { key } = await sessionAndKey();
    await limitKey(key.id, { concurrentRequests: 1 });
    // Requests that fail (a 400 here) give their slot back too.
    for (let attempt = 0; attempt < 3; attempt++) {
      const bad = await gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: keyHeaders(key.key),
        payload: { model: 'sandbox-echo' },
      });
      expect(bad.statusCode, bad.body).toBe(400);
    }
    const leaving = new AbortController();
    const stream = await fetch(`${address}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      body: JSON.stringify({ model: 'drip', stream: true, messages: [{ role: 'user', content: 'go' }] }),
      signal: leaving.signal,
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    await reader.read();
    expectRateLimited(await alpha(key.key), '/api/alpha/v1/chat/completions', 'limit of 1 concurrent requests');
    leaving.abort();
    await reader.cancel().catch(() => undefined);
    // The slot is given back once the connection has closed and the generation (read on to bill it) has ended.
    let answer = await alpha(key.key);
    for (let attempt = 0; answer.statusCode === 429 && attempt < 50; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await alpha(key.key);
    }
    expect(answer.statusCode, answer.body).toBe(200);
    // Sequential requests each end before the next: none is refused.
    for (let attempt = 0; attempt < 3; attempt++) expect((await alpha(key.key)).statusCode).toBe(200);
  });

  it("the account's limits are the operator's: each key's default and ceiling, which the tenant can read but neither change nor lift", async () => {
    const { token, accountId, key } = await sessionAndKey();
    const own = await createKeyOverHttp(gateway, bearer(token), { name: 'own' });
    const operator = await gateway.request({
      method: 'PATCH',
      url: `/api/admin/v1/accounts/${accountId}/rate-limits`,
      headers: adminHeaders,
      payload: { requestsPerMinute: 1 },
    });
    expect(operator.statusCode, operator.body).toBe(200);
    expect(
      (await gateway.request({ method: 'GET', url: '/api/v1/account/rate-limits', headers: bearer(token) })).json(),
    ).toEqual({ requestsPerMinute: 1 });
    // The account API no longer changes them, whatever the session sends.
    const lift = await gateway.request({
      method: 'PATCH',
      url: '/api/v1/account/rate-limits',
      headers: bearer(token),
      payload: { requestsPerMinute: 1_000_000_000 },
    });
    expect(lift.statusCode, lift.body).toBe(404);
    expect(
      (
        await gateway.request({
          method: 'GET',
          url: `/api/admin/v1/accounts/${accountId}/rate-limits`,
          headers: adminHeaders,
        })
      ).json(),
    ).toEqual({ requestsPerMinute: 1 });
    // A key's own limit above the account's does not lift it.
    const keyLift = await gateway.request({
      method: 'PATCH',
      url: `/api/v1/api-keys/${own.id}/rate-limits`,
      headers: bearer(token),
      payload: { requestsPerMinute: 1_000_000_000 },
    });
    expect(keyLift.statusCode, keyLift.body).toBe(200);
    for (const limited of [key.key, own.key]) {
      const first = await alpha(limited);
      expect(first.statusCode, first.body).toBe(200);
      expect(first.headers['x-ratelimit-limit-requests']).toBe('1');
      expectRateLimited(await alpha(limited), '/api/alpha/v1/chat/completions', 'limit of 1 requests per minute');
    }
    // Under a higher account limit a key's own lower one applies; removing the account's leaves the key's.
    expect(
      (
        await gateway.request({
          method: 'PATCH',
          url: `/api/admin/v1/accounts/${accountId}/rate-limits`,
          headers: adminHeaders,
          payload: { requestsPerMinute: 100, concurrentRequests: 5 },
        })
      ).statusCode,
    ).toBe(200);
    const lower = await createKeyOverHttp(gateway, bearer(token), { name: 'lower' });
    expect(
      (
        await gateway.request({
          method: 'PATCH',
          url: `/api/v1/api-keys/${lower.id}/rate-limits`,
          headers: bearer(token),
          payload: { requestsPerMinute: 2 },
        })
      ).statusCode,
    ).toBe(200);
    expect((await alpha(lower.key)).headers['x-ratelimit-limit-requests']).toBe('2');
    const removed = await gateway.request({
      method: 'PATCH',
      url: `/api/admin/v1/accounts/${accountId}/rate-limits`,
      headers: adminHeaders,
      payload: { requestsPerMinute: null, concurrentRequests: null },
    });
    expect(removed.json()).toEqual({});
    const fresh = await createKeyOverHttp(gateway, bearer(token), { name: 'fresh' });
    for (let attempt = 0; attempt < 3; attempt++) expect((await alpha(fresh.key)).statusCode).toBe(200);
  });

  it("an account's sessions are limited together under its limits on the model surfaces; its account API is not", async () => {
    const { token, accountId } = await sessionAndKey();
    const { email } = (await gateway.request({ method: 'GET', url: '/api/v1/account', headers: bearer(token) })).json<{
      email: string;
    }>();
    const second = (
      await gateway.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: testPassword } })
    ).json<{ token: string }>().token;
    const set = await gateway.request({
      method: 'PATCH',
      url: `/api/admin/v1/accounts/${accountId}/rate-limits`,
      headers: adminHeaders,
      payload: { requestsPerMinute: 2 },
    });
    expect(set.statusCode, set.body).toBe(200);
    const withSession = (sessionToken: string) =>
      gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: bearer(sessionToken),
        payload: chat,
      });
    const first = await withSession(token);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['x-ratelimit-limit-requests']).toBe('2');
    expect((await withSession(second)).statusCode).toBe(200);
    expectRateLimited(await withSession(token), '/api/alpha/v1/chat/completions', 'limit of 2 requests per minute');
    expectRateLimited(await withSession(second), '/api/alpha/v1/chat/completions', 'limit of 2 requests per minute');
    for (let read = 0; read < 3; read++)
      expect((await gateway.request({ method: 'GET', url: '/api/v1/usage', headers: bearer(token) })).statusCode).toBe(
        200,
      );
  });

  it("a session's tokens count against its account's tokens per minute when its request settles", async () => {
    const { token, accountId } = await sessionAndKey();
    const set = await gateway.request({
      method: 'PATCH',
      url: `/api/admin/v1/accounts/${accountId}/rate-limits`,
      headers: adminHeaders,
      payload: { tokensPerMinute: 3 },
    });
    expect(set.statusCode, set.body).toBe(200);
    const first = await gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: bearer(token),
      payload: message,
    });
    expect(first.statusCode, first.body).toBe(200);
    await gateway.settled();
    expectRateLimited(
      await gateway.request({ method: 'POST', url: '/api/beta/v1/messages', headers: bearer(token), payload: message }),
      '/api/beta/v1/messages',
      'limit of 3 tokens per minute',
    );
  });

  it('a client that leaves a stream keeps the slot taken until its generation, read on upstream to bill it, has ended', async () => {
    const { key } = await sessionAndKey();
    await limitKey(key.id, { concurrentRequests: 1 });
    const { port } = new URL(address);
    let serverSocketClosed: Promise<void> = Promise.resolve();
    const onConnection = (socket: Socket) => {
      serverSocketClosed = new Promise((resolve) => socket.once('close', () => resolve()));
    };
    gateway.app.server.on('connection', onConnection);
    try {
      // A stream of 40 words, 50 ms apart, whose client hangs up after its first bytes.
      const body = JSON.stringify({ model: 'drip', stream: true, messages: [{ role: 'user', content: 'go' }] });
      const client = connect(Number(port), '127.0.0.1');
      client.on('error', () => undefined);
      const firstBytes = new Promise((resolve) => client.once('data', resolve));
      client.write(
        `POST /api/alpha/v1/chat/completions HTTP/1.1\r\nhost: localhost\r\nx-api-key: ${key.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await firstBytes;
      client.destroy();
      await serverSocketClosed;
      // The connection is gone, the generation is not: the upstream would take a second stream of the key's beside it.
      expectRateLimited(await alpha(key.key), '/api/alpha/v1/chat/completions', 'limit of 1 concurrent requests');
      let answer = await alpha(key.key);
      for (let attempt = 0; answer.statusCode === 429 && attempt < 60; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = await alpha(key.key);
      }
      expect(answer.statusCode, answer.body).toBe(200);
    } finally {
      gateway.app.server.off('connection', onConnection);
    }
  });

  it('a slot in flight comes back when the client leaves while admission is still under way', async () => {
    const { key } = await sessionAndKey();
    await limitKey(key.id, { concurrentRequests: 1 });
    const limiter = gateway.gateway.core.services.rateLimits;
    const { port } = new URL(address);
    // Admission is held until the server has seen the client's connection close.
    let serverSocketClosed: Promise<void> = Promise.resolve();
    const onConnection = (socket: Socket) => {
      serverSocketClosed = new Promise((resolve) => socket.once('close', () => resolve()));
    };
    gateway.app.server.on('connection', onConnection);
    let admissionStarted!: () => void;
    const started = new Promise<void>((resolve) => (admissionStarted = resolve));
    const admit = limiter.admit.bind(limiter);
    const delayed = vi.spyOn(limiter, 'admit').mockImplementationOnce(async (keyId, limits) => {
      admissionStarted();
      await serverSocketClosed;
      return admit(keyId, limits);
    });
    try {
      const body = JSON.stringify(chat);
      const client = connect(Number(port), '127.0.0.1');
      client.on('error', () => undefined);
      client.write(
        `POST /api/alpha/v1/chat/completions HTTP/1.1\r\nhost: localhost\r\nx-api-key: ${key.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await started;
      client.destroy();
      await serverSocketClosed;
      // The slot taken after the client left is given back at once: the next request is admitted.
      let answer = await alpha(key.key);
      for (let attempt = 0; answer.statusCode === 429 && attempt < 20; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        answer = await alpha(key.key);
      }
      expect(answer.statusCode, answer.body).toBe(200);
      expect(delayed).toHaveBeenCalled();
    } finally {
      delayed.mockRestore();
      gateway.app.server.off('connection', onConnection);
    }
  });

  it('tokens of a request this process did not admit are counted: the key is looked up, and read again once it changed', async () => {
    const { key } = await sessionAndKey();
    const rateLimits = gateway.gateway.core.services.rateLimits;
    // Known here as a key without limits: its settlements cost nothing.
    expect((await alpha(key.key)).statusCode).toBe(200);
    await gateway.settled();
    await limitKey(key.id, { tokensPerMinute: 50 });
    // A settlement as a media job settled here after another process admitted it (or this one before a restart).
    await rateLimits.chargeTokens(key.id, 80);
    expectRateLimited(await alpha(key.key), '/api/alpha/v1/chat/completions', 'limit of 50 tokens per minute');
  });

  it('the admin API sets an account default and a key at creation; bad limits are 400 naming the field; a key cannot lift its own', async () => {
    const { token, accountId, key } = await sessionAndKey();
    const created = await gateway.request({
      method: 'POST',
      url: `/api/admin/v1/accounts/${accountId}/api-keys`,
      headers: adminHeaders,
      payload: { name: 'made by the operator', rateLimits: { requestsPerMinute: 7, concurrentRequests: 2 } },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json<{ rateLimits: RateLimitsBody }>().rateLimits).toEqual({
      requestsPerMinute: 7,
      concurrentRequests: 2,
    });
    const account = await gateway.request({
      method: 'PATCH',
      url: `/api/admin/v1/accounts/${accountId}/rate-limits`,
      headers: adminHeaders,
      payload: { tokensPerMinute: 1000 },
    });
    expect(account.json()).toEqual({ tokensPerMinute: 1000 });
    expect(
      (
        await gateway.request({
          method: 'GET',
          url: `/api/admin/v1/accounts/${accountId}/rate-limits`,
          headers: adminHeaders,
        })
      ).json(),
    ).toEqual({ tokensPerMinute: 1000 });
    expect((await alpha(key.key)).headers['x-ratelimit-limit-tokens']).toBe('1000');
    for (const payload of [
      { requestsPerMinute: 0 },
      { tokensPerMinute: 1.5 },
      { concurrentRequests: '2' },
      { requestsPerMinute: 2_000_000_000 },
      {},
    ]) {
      const refused = await gateway.request({
        method: 'PATCH',
        url: `/api/v1/api-keys/${key.id}/rate-limits`,
        headers: bearer(token),
        payload,
      });
      expectEnvelope(refused, { status: 400, code: 'GW_VALIDATION', path: `/api/v1/api-keys/${key.id}/rate-limits` });
    }
    const byKey = await gateway.request({
      method: 'PATCH',
      url: `/api/v1/api-keys/${key.id}/rate-limits`,
      headers: keyHeaders(key.key),
      payload: { requestsPerMinute: 1000 },
    });
    expectEnvelope(byKey, { status: 403, code: 'GW_SESSION_REQUIRED', path: `/api/v1/api-keys/${key.id}/rate-limits` });
    const unknown = await gateway.request({
      method: 'PATCH',
      url: '/api/admin/v1/api-keys/key_unknown/rate-limits',
      headers: adminHeaders,
      payload: { requestsPerMinute: 1 },
    });
    expectEnvelope(unknown, {
      status: 404,
      code: 'GW_NOT_FOUND',
      path: '/api/admin/v1/api-keys/key_unknown/rate-limits',
    });
  });
});

type CreatedKey = KeyBody & { key: string };

describe('Redis unreachable', () => {
  let downUrl: string;

  beforeAll(async () => {
    downUrl = `redis://127.0.0.1:${await freePort()}`;
  });

  it('fails open by default: requests are admitted, and the outage is logged at warn once', async () => {
    const logLines: Array<Record<string, unknown>> = [];
    const gateway = await startTestGateway({ env: { REDIS_URL: downUrl }, configText: rateLimitsConfig(), logLines });
    try {
      const { key, keyId } = await gateway.createFundedKey();
      await gateway.gateway.core.services.apiKeys.setRateLimits(null, keyId, {
        requestsPerMinute: 1,
        concurrentRequests: 1,
      });
      for (let attempt = 0; attempt < 3; attempt++) {
        const answer = await gateway.request({
          method: 'POST',
          url: '/api/alpha/v1/chat/completions',
          headers: keyHeaders(key),
          payload: chat,
        });
        expect(answer.statusCode, answer.body).toBe(200);
      }
      const outages = logLines.filter((line) => String(line.msg).startsWith('Redis for rate limits unreachable'));
      expect(outages).toHaveLength(1);
      expect(outages[0]!.level).toBe(40);
      expect(JSON.stringify(outages)).not.toContain(downUrl);
    } finally {
      await gateway.close();
    }
  });

  it('fails closed when configured: 503 in the envelope with retry-after, for keys with limits only; sign-in stays open', async () => {
    const gateway = await startTestGateway({
      env: { REDIS_URL: downUrl },
      configText: rateLimitsConfig({ rateLimits: '  redisFailure: closed\n' }),
    });
    try {
      const limited = await gateway.createFundedKey();
      const unlimited = await gateway.createFundedKey();
      await gateway.gateway.core.services.apiKeys.setRateLimits(null, limited.keyId, { requestsPerMinute: 100 });
      const refused = await gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: keyHeaders(limited.key),
        payload: chat,
      });
      expectEnvelope(refused, {
        status: 503,
        code: 'GW_RATE_LIMITS_UNAVAILABLE',
        path: '/api/alpha/v1/chat/completions',
      });
      expect(refused.headers['retry-after']).toBe('1');
      const free = await gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: keyHeaders(unlimited.key),
        payload: chat,
      });
      expect(free.statusCode, free.body).toBe(200);
      const login = await gateway.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email: 'nobody@example.com', password: 'whatever password' },
      });
      expectEnvelope(login, { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/v1/auth/login' });
    } finally {
      await gateway.close();
    }
  });

  it.each(['open', 'closed'])(
    'password guessing stays throttled in each process while Redis is down (redisFailure: %s)',
    async (redisFailure) => {
      const configText = shippedConfigWith({
        rateLimits: `rateLimits:\n  redisKeyPrefix: rl-test-${randomUUID()}\n  redisFailure: ${redisFailure}\n`,
        accounts: 'accounts:\n  loginFailuresPerEmail: 2\n  signupsPerAddress: 1\n  throttleWindowSeconds: 600\n',
      });
      const gateway = await startTestGateway({ env: { REDIS_URL: downUrl }, configText });
      try {
        const email = uniqueEmail('guessed');
        const signupFrom = (address: string) =>
          gateway.request({
            method: 'POST',
            url: '/api/v1/auth/signup',
            remoteAddress: address,
            payload: { email: uniqueEmail('from'), password: testPassword },
          });
        expect((await signupFrom('192.0.2.7')).statusCode).toBe(201);
        expectEnvelope(await signupFrom('192.0.2.7'), {
          status: 429,
          code: 'GW_TOO_MANY_ATTEMPTS',
          path: '/api/v1/auth/signup',
        });
        await signup(gateway, email);
        const login = (password: string) =>
          gateway.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
        expectEnvelope(await login('wrong password 1'), {
          status: 401,
          code: 'GW_INVALID_CREDENTIALS',
          path: '/api/v1/auth/login',
        });
        expectEnvelope(await login('wrong password 2'), {
          status: 401,
          code: 'GW_INVALID_CREDENTIALS',
          path: '/api/v1/auth/login',
        });
        const refused = await login(testPassword);
        expectEnvelope(refused, { status: 429, code: 'GW_TOO_MANY_ATTEMPTS', path: '/api/v1/auth/login' });
        expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      } finally {
        await gateway.close();
      }
    },
  );
});
