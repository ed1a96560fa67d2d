import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import { balanceNanosOf, startImageFamilyGateway, type ImageFamilyGateway } from '../support/image-jobs.ts';
import { usdToNanos } from '../../src/domain/money.ts';

interface AuditedRecord {
  status: string;
  modality: string;
  route?: {
    providerId: string;
    upstreamModel: string;
    requestId?: string;
    fallbacks: Array<{ providerId: string; outcome: string; reason: string }>;
  };
}

/** Alpha image streams translated from ModelArk walk the same road as every generation: breakers, fallback, route. */
describe('streamed image events: breakers, fallback and the route record', () => {
  let gateway: ImageFamilyGateway;

  beforeAll(async () => {
    const duo = (id: string, down: string) =>
      `  - { id: ${id}, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ${down}, model: seedream-4-0-250828, priority: 1 }, { provider: ark, model: seedream-4-0-250828, priority: 2 }] }`;
    gateway = await startImageFamilyGateway(
      [
        '  - { id: seedream, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-4-0-250828 }] }',
        duo('seedream-fallback', 'down'),
        duo('seedream-breaker', 'gone'),
        // Three failures in a row from three accounts open a row; nothing closes it during the tests.
        'upstream: { breakerFailures: 3, breakerMinAccounts: 3, breakerCooldownMs: 600000 }',
      ],
      [
        '  down: { protocol: ark, baseUrl: "http://127.0.0.1:9/api/v3", apiKey: fake-ark-key, timeoutMs: 2000 }',
        '  gone: { protocol: ark, baseUrl: "http://127.0.0.1:9/api/v3", apiKey: fake-ark-key, timeoutMs: 2000 }',
      ],
    );
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const stream = (key: string, model: string) =>
    gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/images/generations',
      headers: { ...keyHeaders(key), 'x-request-id': `stream-${model}-${key.slice(-6)}` },
      payload: { model, prompt: 'streamed lighthouse', n: 1, stream: true },
    });
  const audited = async (accountId: string) =>
    (
      await gateway.request({
        method: 'GET',
        url: `/api/admin/v1/accounts/${accountId}/generations?limit=100`,
        headers: adminHeaders,
      })
    ).json<{ results: AuditedRecord[] }>().results;

  it('records the route of a stream: the row that served it and the request id', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await stream(key, 'seedream');
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('image_generation.completed');
    await gateway.settled();
    const [record] = await audited(accountId);
    expect(record).toMatchObject({
      status: 'succeeded',
      modality: 'image',
      route: { providerId: 'ark', upstreamModel: 'seedream-4-0-250828', fallbacks: [] },
    });
    expect(record!.route!.requestId).toBe(`stream-seedream-${key.slice(-6)}`);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.03));
  });

  it('falls back to the next row when the first is unreachable, charging once', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await stream(key, 'seedream-fallback');
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('image_generation.completed');
    await gateway.settled();
    const records = await audited(accountId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      status: 'succeeded',
      route: {
        providerId: 'ark',
        fallbacks: [{ providerId: 'down', outcome: 'failed', reason: 'upstream unreachable' }],
      },
    });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.03));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it("opens the failing row's breaker after failures from several accounts, then skips it", async () => {
    for (let tenant = 0; tenant < 3; tenant += 1) {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      expect((await stream(key, 'seedream-breaker')).statusCode).toBe(200);
    }
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await stream(key, 'seedream-breaker');
    expect(response.statusCode).toBe(200);
    await gateway.settled();
    const [record] = await audited(accountId);
    expect(record).toMatchObject({
      status: 'succeeded',
      route: { providerId: 'ark', fallbacks: [{ providerId: 'gone', outcome: 'skipped', reason: 'breaker open' }] },
    });
    const scraped = (await gateway.request({ method: 'GET', url: '/metrics' })).body;
    expect(scraped).toMatch(/gateway_provider_breaker_state\{[^}]*provider="gone"[^}]*\} 1/);
  });
});
