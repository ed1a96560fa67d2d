/**
 * A spend cap lowered while requests run, on two compiled gateway processes sharing one PostgreSQL database:
 * the requests already admitted settle within the cap as it stands when they end, like the balance floor.
 * Needs a build (npm run build).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { startGatewayChildren, type GatewayChild } from '../support/gateway-child.ts';
import { adminHeaders, bearer, testPassword, uniqueEmail } from '../support/http-helpers.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { fakeProviderYaml } from '../support/test-gateway.ts';

describe('a cap lowered while streams run on two processes', () => {
  let database: TestDatabase;
  let dataDir: string;
  let openai: FakeServer;
  let client: pg.Client;
  const children: GatewayChild[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    openai = await startOpenAiFake();
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-lowered-cap-'));
    const configPath = path.join(dataDir, 'gateway.yaml');
    // 0.001 USD a token: each stream of 30 words costs about 0.035 USD.
    writeFileSync(
      configPath,
      [
        'providers:',
        fakeProviderYaml('openai', 'openai', openai),
        'models:',
        '  - id: slow-stream',
        '    pricing: { inputPerMTok: 1000, outputPerMTok: 1000 }',
        '    providers: [{ provider: openai, model: fake-drip-100-30 }]',
      ].join('\n'),
    );
    children.push(...(await startGatewayChildren(2, { configPath, dataDir, databaseUrl: database.url })));
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  }, 120_000);

  afterAll(async () => {
    await client?.end();
    await Promise.all(children.map((child) => child.kill('SIGTERM')));
    await openai?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = (
    child: GatewayChild,
    { method, url, headers, body }: { method: string; url: string; headers: Record<string, string>; body?: unknown },
  ) =>
    fetch(`${child.url}${url}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('never spends past the cap as it stands at settlement: the rest of each stream is recorded uncharged', async () => {
    const [a, b] = children as [GatewayChild, GatewayChild];
    const signedUp = await call(a, {
      method: 'POST',
      url: '/api/v1/auth/signup',
      headers: {},
      body: { email: uniqueEmail('cap'), password: testPassword },
    });
    expect(signedUp.status, a.output()).toBe(201);
    const { token, account } = (await signedUp.json()) as { token: string; account: { id: string } };
    const session = bearer(token);
    const granted = await call(a, {
      method: 'POST',
      url: `/api/admin/v1/accounts/${account.id}/credits`,
      headers: adminHeaders,
      body: { amount: 5 },
    });
    expect(granted.status).toBe(200);
    const created = await call(a, {
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: session,
      body: { name: 'streams', limits: { total: 0.5 } },
    });
    expect(created.status).toBe(201);
    const { id: keyId, key } = (await created.json()) as { id: string; key: string };

    // Four streams, two on each process, each read until its first words have arrived.
    const streams = await Promise.all(
      [a, a, b, b].map(async (child, index) => {
        const response = await call(child, {
          method: 'POST',
          url: '/api/alpha/v1/chat/completions',
          headers: bearer(key),
          body: {
            model: 'slow-stream',
            stream: true,
            max_tokens: 40,
            messages: [{ role: 'user', content: `stream ${index}` }],
          },
        });
        expect(response.status, child.output()).toBe(200);
        const reader = response.body!.getReader();
        await reader.read();
        return reader;
      }),
    );
    const lowered = await call(b, {
      method: 'PATCH',
      url: `/api/v1/api-keys/${keyId}/usage-limit`,
      headers: session,
      body: { total: 0.001 },
    });
    expect(lowered.status).toBe(200);
    await Promise.all(
      streams.map(async (reader) => {
        while (!(await reader.read()).done);
      }),
    );

    const cap = usdToNanos(0.001);
    let records: Array<{ cost: string; usage: { unchargedUsdCost?: number } }> = [];
    for (let tries = 0; tries < 200 && records.length < 4; tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      records = (
        await client.query<{ cost: string; usage: { unchargedUsdCost?: number } }>(
          'SELECT usd_cost_nanos::text AS cost, usage FROM generations WHERE api_key_id = $1',
          [keyId],
        )
      ).rows;
    }
    expect(records).toHaveLength(4);
    const {
      rows: [spent],
    } = await client.query<{ total: string; balance: string }>(
      'SELECT k.spent_total_nanos::text AS total, a.balance_nanos::text AS balance FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = $1',
      [keyId],
    );
    const charged = records.reduce((sum, record) => sum + BigInt(record.cost), 0n);
    expect(BigInt(spent!.total)).toBe(charged);
    expect(BigInt(spent!.total) <= cap).toBe(true);
    expect(BigInt(spent!.balance)).toBe(usdToNanos(5) - charged);
    // The streams cost far more than the cap: every record past it says what it was not charged.
    const uncharged = records.filter((record) => (record.usage.unchargedUsdCost ?? 0) > 0);
    expect(uncharged.length).toBeGreaterThanOrEqual(3);
  });
});
