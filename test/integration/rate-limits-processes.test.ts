/**
 * Two compiled gateway processes sharing one PostgreSQL database and one Redis (127.0.0.1:6379): a key's
 * rate limits and the sign-in throttle hold across both. Needs a build (npm run build).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayChild, type GatewayChild } from '../support/gateway-child.ts';
import { adminHeaders, testPassword, uniqueEmail } from '../support/http-helpers.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { sandboxConfigYaml } from '../support/test-gateway.ts';

describe('two gateway processes sharing Redis', () => {
  let database: TestDatabase;
  let dataDir: string;
  const children: GatewayChild[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-rate-limits-'));
    const configPath = path.join(dataDir, 'gateway.yaml');
    // A prefix of its own, so that runs sharing the Redis never count each other's requests.
    const rateLimits = `rateLimits:\n  redisKeyPrefix: rl-processes-${randomUUID()}\n`;
    const accounts = 'accounts:\n  loginFailuresPerEmail: 2\n  throttleWindowSeconds: 600\n';
    writeFileSync(configPath, sandboxConfigYaml(`${rateLimits}${accounts}`));
    // One after the other: the first applies the migrations.
    for (const name of ['a', 'b']) {
      children.push(
        await startGatewayChild({
          configPath,
          dataDir: path.join(dataDir, name),
          databaseUrl: database.url,
          env: { REDIS_URL: 'redis://127.0.0.1:6379' },
        }),
      );
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map((child) => child.kill('SIGTERM')));
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const post = (
    child: GatewayChild,
    url: string,
    { body, headers = {} }: { body: unknown; headers?: Record<string, string> },
  ) =>
    fetch(`${child.url}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it("a key's requests per minute count across both processes", async () => {
    const [a, b] = children as [GatewayChild, GatewayChild];
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
    const [a, b] = children as [GatewayChild, GatewayChild];
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
