/**
 * A spend cap the operator lowers while requests run, on two compiled gateway processes sharing one PostgreSQL
 * database: the requests already admitted settle within the cap as it stands when they end, like the balance
 * floor. (The key's owner may not lower a cap below what work under way holds: account-api.test.ts.)
 * Needs a build (npm run build).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { callChild as call, fundedAccount, startGatewayPair, type GatewayPair } from '../support/gateway-pair.ts';
import { adminHeaders, bearer } from '../support/http-helpers.ts';
import { fakeProviderYaml } from '../support/test-gateway.ts';

describe('a cap lowered while streams run on two processes', () => {
  let openai: FakeServer;
  let pair: GatewayPair;

  beforeAll(async () => {
    openai = await startOpenAiFake();
    // 0.001 USD a token: each stream of 30 words costs about 0.035 USD.
    pair = await startGatewayPair([
      'providers:',
      fakeProviderYaml('openai', 'openai', openai),
      'models:',
      '  - id: slow-stream',
      '    pricing: { inputPerMTok: 1000, outputPerMTok: 1000 }',
      '    providers: [{ provider: openai, model: fake-drip-100-30 }]',
    ]);
  }, 120_000);

  afterAll(async () => {
    await pair?.close();
    await openai?.close();
  });

  it('never spends past the cap as it stands at settlement: the rest of each stream is recorded uncharged', async () => {
    const [a, b] = pair.children;
    const { token } = await fundedAccount(a, 5);
    const session = bearer(token);
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
      url: `/api/admin/v1/api-keys/${keyId}/usage-limit`,
      headers: adminHeaders,
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
        await pair.client.query<{ cost: string; usage: { unchargedUsdCost?: number } }>(
          'SELECT usd_cost_nanos::text AS cost, usage FROM generations WHERE api_key_id = $1',
          [keyId],
        )
      ).rows;
    }
    expect(records).toHaveLength(4);
    const {
      rows: [spent],
    } = await pair.client.query<{ total: string; balance: string }>(
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
