/**
 * A price changed through the admin API of one of two compiled gateway processes sharing one PostgreSQL
 * database: both charge the next request at it within a second (LISTEN/NOTIFY), and the usage records on
 * either side of the change name their own price version. Needs a build (npm run build).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayChild } from '../support/gateway-child.ts';
import { callChild, startGatewayPair, type GatewayPair } from '../support/gateway-pair.ts';
import { adminHeaders, uniqueEmail } from '../support/http-helpers.ts';
import { modelYaml } from '../support/test-gateway.ts';

describe('a price changed at runtime on two processes', () => {
  let pair: GatewayPair;

  beforeAll(async () => {
    pair = await startGatewayPair([
      'providers:',
      '  sandbox: { protocol: sandbox }',
      'models:',
      modelYaml('metered-echo', { provider: 'sandbox', upstream: 'echo', prices: { input: 1, output: 1 } }),
    ]);
  }, 120_000);

  afterAll(async () => pair?.close());

  /** An admin API call to the process, with the answer's status and parsed body. */
  const call = async (
    child: GatewayChild,
    request: { method: string; url: string; headers?: Record<string, string>; body?: unknown },
  ) => {
    const response = await callChild(child, { ...request, headers: { ...adminHeaders, ...request.headers } });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  /** One chat request on the process, and the price version and cost its usage record was written with. */
  const charged = async (child: GatewayChild, key: string) => {
    const requestId = `prices-${Math.random().toString(36).slice(2)}`;
    const answer = await call(child, {
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { authorization: `Bearer ${key}`, 'x-request-id': requestId },
      body: { model: 'metered-echo', messages: [{ role: 'user', content: 'the same words each time' }] },
    });
    expect(answer.status, child.output()).toBe(200);
    // The settlement is written just after the answer: the record is read once it is there.
    for (let tries = 0; ; tries++) {
      const { rows } = await pair.client.query<{ price_version: string | null; cost: string }>(
        "SELECT price_version, usd_cost_nanos::text AS cost FROM generations WHERE route->>'requestId' = $1",
        [requestId],
      );
      if (rows[0]) return { priceVersion: rows[0].price_version, costNanos: BigInt(rows[0].cost) };
      if (tries > 500) throw new Error(`no usage record for ${requestId}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('applies on both processes within a second, and each record names the version it was charged at', async () => {
    const [a, b] = pair.children;
    const created = await call(a, {
      method: 'POST',
      url: '/api/admin/v1/accounts',
      body: { email: uniqueEmail('prices'), credits: 100 },
    });
    expect(created.status, a.output()).toBe(201);
    const keyed = await call(a, {
      method: 'POST',
      url: `/api/admin/v1/accounts/${created.body.id}/api-keys`,
      body: { name: 'prices' },
    });
    expect(keyed.status).toBe(201);
    const key: string = keyed.body.key;

    const model = { method: 'GET', url: '/api/admin/v1/catalog/models/metered-echo' };
    const before = await call(b, model);
    const fileVersion: string = before.body.priceVersion;
    expect(fileVersion).toMatch(/^price_/);
    const earlier = [await charged(a, key), await charged(b, key)];
    for (const record of earlier) expect(record.priceVersion).toBe(fileVersion);

    const set = await call(a, {
      method: 'PUT',
      url: '/api/admin/v1/catalog/prices/metered-echo',
      body: { inputPerMTok: 1000, outputPerMTok: 1000 },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const runtimeVersion: string = set.body.priceVersion;
    expect(runtimeVersion).toMatch(/^price_/);
    expect(runtimeVersion).not.toBe(fileVersion);

    // The other process hears of it and serves the new prices within a second.
    await expect
      .poll(async () => (await call(b, model)).body.priceVersion, { timeout: 1_000, interval: 20 })
      .toBe(runtimeVersion);
    const later = [await charged(a, key), await charged(b, key)];
    for (const [index, record] of later.entries()) {
      expect(record.priceVersion).toBe(runtimeVersion);
      // The same request, a thousand times the price.
      expect(record.costNanos).toBe(earlier[index]!.costNanos * 1000n);
    }

    // The account's own usage and the operator's both name the versions.
    const usage = await call(b, { method: 'GET', url: `/api/admin/v1/accounts/${created.body.id}/generations` });
    expect(usage.body.results.map((record: { priceVersion: string }) => record.priceVersion)).toEqual([
      runtimeVersion,
      runtimeVersion,
      fileVersion,
      fileVersion,
    ]);
  });
});
