import { describe, expect, it } from 'vitest';
import { effectiveRateLimits, hasRateLimits, KeyRateLimiter, noRateLimits, RateLimitedError, RateLimitStore, tokensUsed, type RateLimits } from '../../src/billing/rate-limits.ts';
import { Secret } from '../../src/domain/secret.ts';
import { openAiDuration } from '../../src/http/rate-limit-hook.ts';
import { freePort } from '../support/free-port.ts';

const limits = (changes: Partial<RateLimits>): RateLimits => ({ ...noRateLimits, ...changes });
const memoryLimiter = () => new KeyRateLimiter(new RateLimitStore({ redisFailure: 'open', keyPrefix: 'unit' }));

describe('rate limits', () => {
  it("a key's own limit wins over its account's; none at all is no limits", () => {
    expect(effectiveRateLimits(limits({ requestsPerMinute: 5 }), limits({ requestsPerMinute: 1, concurrentRequests: 2 }))).toEqual({ requestsPerMinute: 5, tokensPerMinute: null, concurrentRequests: 2 });
    expect(hasRateLimits(effectiveRateLimits(noRateLimits, noRateLimits))).toBe(false);
  });

  it('counts the tokens of a usage record in whichever names its modality gives them', () => {
    expect(tokensUsed({ promptTokens: 3, completionTokens: 4, totalTokens: 7 })).toBe(7);
    expect(tokensUsed({ inputTokens: 10, outputTokens: 2 })).toBe(12);
    expect(tokensUsed({ generatedImages: 2 })).toBe(0);
    expect(tokensUsed(null)).toBe(0);
    expect(tokensUsed({ totalTokens: -5, promptTokens: Number.NaN })).toBe(0);
  });

  it("writes a wait as OpenAI does", () => {
    expect(openAiDuration(20)).toBe('20ms');
    expect(openAiDuration(1000)).toBe('1s');
    expect(openAiDuration(59_001)).toBe('1m0s');
    expect(openAiDuration(125_000)).toBe('2m5s');
  });

  it('refuses past the requests per minute of one key, not of another, saying where the limit stands', async () => {
    const limiter = memoryLimiter();
    const twoPerMinute = limits({ requestsPerMinute: 2 });
    expect((await limiter.admit('key_a', twoPerMinute)).standing.requests).toMatchObject({ limit: 2, remaining: 1 });
    expect((await limiter.admit('key_a', twoPerMinute)).standing.requests).toMatchObject({ limit: 2, remaining: 0 });
    const refused = await limiter.admit('key_a', twoPerMinute).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as RateLimitedError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((refused as RateLimitedError).retryAfterSeconds).toBeLessThanOrEqual(60);
    await expect(limiter.admit('key_b', twoPerMinute)).resolves.toBeDefined();
  });

  it('gives a slot in flight back once, however often its release is called', async () => {
    const limiter = memoryLimiter();
    const one = limits({ concurrentRequests: 1 });
    const first = await limiter.admit('key_c', one);
    await expect(limiter.admit('key_c', one)).rejects.toBeInstanceOf(RateLimitedError);
    first.release();
    first.release();
    await new Promise((resolve) => setImmediate(resolve));
    const second = await limiter.admit('key_c', one);
    await expect(limiter.admit('key_c', one)).rejects.toBeInstanceOf(RateLimitedError);
    second.release();
  });

  it('counts settled tokens only for keys admitted with a tokens-per-minute limit', async () => {
    const limiter = memoryLimiter();
    const ten = limits({ tokensPerMinute: 10 });
    await limiter.admit('key_d', ten);
    limiter.chargeTokens('key_d', 10);
    limiter.chargeTokens('key_e', 1000);
    await new Promise((resolve) => setImmediate(resolve));
    await expect(limiter.admit('key_d', ten)).rejects.toThrow('limit of 10 tokens per minute is spent');
    await expect(limiter.admit('key_e', ten)).resolves.toMatchObject({ standing: { tokens: { limit: 10, remaining: 10 } } });
  });

  it('with Redis unreachable: open admits, closed refuses with 503; the outage is reported once', async () => {
    const redisUrl = new Secret(`redis://127.0.0.1:${await freePort()}`);
    const outages: unknown[] = [];
    for (const redisFailure of ['open', 'closed'] as const) {
      const store = new RateLimitStore({ redisUrl, redisFailure, keyPrefix: 'unit', onOutage: (error) => outages.push(error) });
      const limiter = new KeyRateLimiter(store);
      try {
        for (let attempt = 0; attempt < 3; attempt++) {
          const admission = limiter.admit('key_f', limits({ requestsPerMinute: 1, concurrentRequests: 1 }));
          if (redisFailure === 'open') await expect(admission).resolves.toMatchObject({ standing: {} });
          else await expect(admission).rejects.toMatchObject({ code: 'GW_RATE_LIMITS_UNAVAILABLE', status: 503, retryAfterSeconds: 1 });
        }
      } finally {
        await store.close();
      }
    }
    expect(outages).toHaveLength(2);
  });
});
