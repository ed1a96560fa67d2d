import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import { balanceNanosOf, jobRowsOf, sandboxImageConfigYaml, waitForImageJob } from '../support/image-jobs.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

describe('concurrent image jobs never spend past a balance or a cap', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ configText: sandboxImageConfigYaml() });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  /** 24 submissions of 3 images (0.003 USD each) at once; answers the accepted job ids and the refusals' statuses. */
  async function storm(key: string): Promise<{ accepted: string[]; refused: number[] }> {
    const responses = await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        gateway.request({
          method: 'POST',
          url: '/api/v1/image/generations/async',
          headers: keyHeaders(key),
          payload: { model: 'sandbox-image', content: [{ type: 'text', text: `storm ${index}` }], numberOfImages: 3 },
        }),
      ),
    );
    return {
      accepted: responses
        .filter((response) => response.statusCode === 202)
        .map((response) => response.json<{ generationId: string }>().generationId),
      refused: responses.filter((response) => response.statusCode !== 202).map((response) => response.statusCode),
    };
  }

  it('admits exactly what the balance covers, refuses the rest with 403, and charges each admitted job once', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 0.02 });
    const { accepted, refused } = await storm(key);
    expect(accepted).toHaveLength(6);
    expect(new Set(refused)).toEqual(new Set([403]));
    for (const id of accepted)
      expect((await waitForImageJob(gateway, { key, generationId: id })).status).toBe('succeeded');
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(0.002));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(await jobRowsOf(gateway, accountId)).toHaveLength(6);
  });

  it('admits exactly what the daily cap leaves, refusing the rest with 429', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 10, limits: { daily: 0.01 } });
    const { accepted, refused } = await storm(key);
    expect(accepted).toHaveLength(3);
    expect(new Set(refused)).toEqual(new Set([429]));
    for (const id of accepted) await waitForImageJob(gateway, { key, generationId: id });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(10) - usdToNanos(0.009));
    const lookup = await gateway.request({ method: 'GET', url: '/api/compat/v1/api-key', headers: keyHeaders(key) });
    expect(lookup.json<{ daily: { spent: number; remaining: number } }>().daily).toMatchObject({
      spent: 0.009,
      remaining: 0.001,
    });
  });
});
