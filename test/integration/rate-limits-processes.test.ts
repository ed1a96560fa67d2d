/**
 * Two compiled gateway processes sharing one PostgreSQL database and one Redis (127.0.0.1:6379): a key's
 * rate limits and the sign-in throttle hold across both. Needs a build (npm run build).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayChild } from '../support/gateway-child.ts';
import { callChild, startGatewayPair, type GatewayPair } from '../support/gateway-pair.ts';
import { adminHeaders, testPassword, uniqueEmail } from '../support/http-helpers.ts';
import { sandboxConfigYaml } from '../support/test-gateway.ts';

describe('two gateway processes sharing Redis', () => {
  let pair: GatewayPair;

  beforeAll(async () => {
    // A prefix of its own, so that runs sharing the Redis never count each other's requests.
    const rateLimits = `rateLimits:\n  redisKeyPrefix: rl-processes-${randomUUID()}\n`;
    const accounts = 'accounts:\n  loginFailuresPerEmail: 2\n  throttleWindowSeconds: 600\n';
    pair = await startGatewayPair([sandboxConfigYaml(`${rateLimits}${accounts}`)], {
      env: { REDIS_URL: 'redis://127.0.0.1:6379' },
    });
  }, 120_000);

  afterAll(async () => pair?.close());

  const post = (
    child: GatewayChild,
    url: string,
    { body, headers = {} }: { body: unknown; headers?: Record<string, string> },
  ) => callChild(child, { method: 'POST', url, headers, body });

  it("a key's requests per minute count across both processes", async () => {
    const [a, b] = pair.children;
    const account = (await (
      await post(a, '/api/admin/v1/accounts', {
        body: { email: uniqueEmail('shared'), credits: 5 },
        headers: adminHeaders,
      })
    ).json()) as { id: string };
    const created = await post(b, `/api/admin/v1/accounts/${account.id}/api-keys`, {
      body: { name: 'shared', rateLimits: { requestsPerMinute: 3 } },
      headers: adminHeaders,
    });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };
    const chat = (child: GatewayChild) =>
      post(child, '/api/alpha/v1/chat/completions', {
        body: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] },
        headers: { authorization: `Bearer ${key}` },
      });
    const remaining: string[] = [];
    for (const child of [a, b, a]) {
      const answer = await chat(child);
      expect(answer.status, child.output()).toBe(200);
      remaining.push(answer.headers.get('x-ratelimit-remaining-requests') ?? '');
    }
    expect(remaining).toEqual(['2', '1', '0']);
    for (const child of [b, a]) {
      const refused = await chat(child);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('GW_RATE_LIMITED');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('3');
    }
  });

  it('failed logins for one email count across both processes', async () => {
    const [a, b] = pair.children;
    const email = uniqueEmail('guessed');
    expect(
      (await post(a, '/api/admin/v1/accounts', { body: { email, password: testPassword }, headers: adminHeaders }))
        .status,
    ).toBe(201);
    const login = (child: GatewayChild, password: string) =>
      post(child, '/api/v1/auth/login', { body: { email, password } });
    expect((await login(a, 'wrong password 1')).status).toBe(401);
    expect((await login(b, 'wrong password 2')).status).toBe(401);
    const refused = await login(a, testPassword);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('GW_TOO_MANY_ATTEMPTS');
  });
});
