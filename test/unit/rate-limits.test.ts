import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { describe, expect, it } from 'vitest';
import {
  effectiveRateLimits,
  hasRateLimits,
  KeyRateLimiter,
  noRateLimits,
  RateLimitedError,
  RateLimitStore,
  tokensUsed,
  type Admission,
  type RateLimits,
} from '../../src/billing/rate-limits.ts';
import {
  RedisKeyCounters,
  requestsBlockOf,
  spareSlotsOf,
  tokensReadingMaxAgeMs,
} from '../../src/billing/redis-key-counters.ts';
import { MemoryRequestsInFlight, RedisRequestsInFlight } from '../../src/billing/requests-in-flight.ts';
import { Secret } from '../../src/domain/secret.ts';
import { openAiDuration } from '../../src/http/rate-limit-hook.ts';
import { freePort } from '../support/free-port.ts';

const limits = (changes: Partial<RateLimits>): RateLimits => ({ ...noRateLimits, ...changes });
const memoryLimiter = () => new KeyRateLimiter(new RateLimitStore({ redisFailure: 'open', keyPrefix: 'unit' }));

describe('rate limits', () => {
  it("the account's limit is each key's default and ceiling: a key's own applies only when lower; none at all is no limits", () => {
    expect(
      effectiveRateLimits(
        limits({ requestsPerMinute: 1_000_000_000 }),
        limits({ requestsPerMinute: 1, concurrentRequests: 2 }),
      ),
    ).toEqual({ requestsPerMinute: 1, tokensPerMinute: null, concurrentRequests: 2 });
    expect(
      effectiveRateLimits(limits({ requestsPerMinute: 1, tokensPerMinute: 50 }), limits({ requestsPerMinute: 5 })),
    ).toEqual({ requestsPerMinute: 1, tokensPerMinute: 50, concurrentRequests: null });
    expect(hasRateLimits(effectiveRateLimits(noRateLimits, noRateLimits))).toBe(false);
  });

  it('counts the tokens of a usage record in whichever names its modality gives them', () => {
    expect(tokensUsed({ promptTokens: 3, completionTokens: 4, totalTokens: 7 })).toBe(7);
    expect(tokensUsed({ inputTokens: 10, outputTokens: 2 })).toBe(12);
    expect(tokensUsed({ generatedImages: 2 })).toBe(0);
    expect(tokensUsed(null)).toBe(0);
    expect(tokensUsed({ totalTokens: -5, promptTokens: Number.NaN })).toBe(0);
  });

  it('writes a wait as OpenAI does', () => {
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

  it('counts settled tokens only for keys with a tokens-per-minute limit', async () => {
    const limiter = memoryLimiter();
    const ten = limits({ tokensPerMinute: 10 });
    await limiter.admit('key_d', ten);
    await limiter.admit('key_e', limits({ requestsPerMinute: 100 }));
    limiter.chargeTokens('key_d', 10);
    limiter.chargeTokens('key_e', 1000);
    await new Promise((resolve) => setImmediate(resolve));
    await expect(limiter.admit('key_d', ten)).rejects.toThrow('limit of 10 tokens per minute is spent');
    await expect(limiter.admit('key_e', ten)).resolves.toMatchObject({
      standing: { tokens: { limit: 10, remaining: 10 } },
    });
  });

  it("charges a settlement's usage by its tokens, reading the usage only for a key that may have a tokens limit", async () => {
    const limiter = memoryLimiter();
    const ten = limits({ tokensPerMinute: 10 });
    await limiter.admit('key_usage', ten);
    limiter.admittedUnlimited('key_unlimited');
    const read: string[] = [];
    const usage = (fields: Record<string, number>) =>
      new Proxy(fields, {
        getOwnPropertyDescriptor: (target, name) => {
          read.push(String(name));
          return Reflect.getOwnPropertyDescriptor(target, name);
        },
      });
    await limiter.chargeUsage('key_unlimited', usage({ totalTokens: 1000 }));
    expect(read).toEqual([]);
    await limiter.chargeUsage('key_usage', usage({ promptTokens: 4, completionTokens: 6 }));
    expect(read.length).toBeGreaterThan(0);
    await expect(limiter.admit('key_usage', ten)).rejects.toThrow('limit of 10 tokens per minute is spent');
    await expect(limiter.chargeUsage(null, { totalTokens: 5 })).resolves.toBeUndefined();
  });

  it('counts the tokens of a request admitted by another process: its key is looked up once, then known', async () => {
    const lookups: string[] = [];
    const lookup = (keyId: string) => {
      lookups.push(keyId);
      return Promise.resolve(
        keyId === 'key_elsewhere' ? limits({ tokensPerMinute: 10 }) : keyId === 'key_free' ? noRateLimits : null,
      );
    };
    const limiter = new KeyRateLimiter(
      new RateLimitStore({ redisFailure: 'open', keyPrefix: `unit-${randomUUID()}` }),
      lookup,
    );
    limiter.chargeTokens('key_elsewhere', 6);
    limiter.chargeTokens('key_elsewhere', 6);
    limiter.chargeTokens('key_free', 6);
    await new Promise((resolve) => setTimeout(resolve, 10));
    limiter.chargeTokens('key_free', 6);
    limiter.admittedUnlimited('key_here');
    limiter.chargeTokens('key_here', 6);
    await new Promise((resolve) => setTimeout(resolve, 10));
    // One lookup per key, the two first charges of a key sharing it; a key admitted here is never looked up.
    expect(lookups).toEqual(['key_elsewhere', 'key_free']);
    await expect(limiter.admit('key_elsewhere', limits({ tokensPerMinute: 10 }))).rejects.toThrow(
      'limit of 10 tokens per minute is spent',
    );
    await expect(limiter.admit('key_free', limits({ tokensPerMinute: 10 }))).resolves.toMatchObject({
      standing: { tokens: { remaining: 10 } },
    });
    // A change of the key forgets what was known: the next settlement reads its limits again.
    limiter.forgetKey('key_free');
    limiter.chargeTokens('key_free', 6);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lookups).toEqual(['key_elsewhere', 'key_free', 'key_free']);
  });

  it('requests in flight in memory: a count per key, given back to zero and never below', async () => {
    const inFlight = new MemoryRequestsInFlight();
    const first = await inFlight.take('key_m', 2);
    const second = await inFlight.take('key_m', 2);
    expect(await inFlight.take('key_m', 2)).toBeUndefined();
    first!();
    second!();
    const third = await inFlight.take('key_m', 1);
    expect(third).toBeDefined();
    expect(await inFlight.take('key_m', 1)).toBeUndefined();
  });

  it('with Redis unreachable: open admits, closed refuses with 503; the outage is reported once', async () => {
    const redisUrl = new Secret(`redis://127.0.0.1:${await freePort()}`);
    const outages: unknown[] = [];
    for (const redisFailure of ['open', 'closed'] as const) {
      const store = new RateLimitStore({
        redisUrl,
        redisFailure,
        keyPrefix: 'unit',
        onOutage: (error) => outages.push(error),
      });
      const limiter = new KeyRateLimiter(store);
      try {
        for (let attempt = 0; attempt < 3; attempt++) {
          const admission = limiter.admit('key_f', limits({ requestsPerMinute: 1, concurrentRequests: 1 }));
          if (redisFailure === 'open') await expect(admission).resolves.toMatchObject({ standing: {} });
          else
            await expect(admission).rejects.toMatchObject({
              code: 'GW_RATE_LIMITS_UNAVAILABLE',
              status: 503,
              retryAfterSeconds: 1,
            });
        }
      } finally {
        await store.close();
      }
    }
    expect(outages).toHaveLength(2);
  });
});

/** Redis at 127.0.0.1:6379, each test under a prefix of its own. */
describe('requests in flight in Redis', () => {
  const outcomes = { failed: () => undefined, answered: () => undefined };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** A process's counters on `redis`, its slots renewed as `timing` says. */
  const processOn = (redis: Redis, prefix: string, timing?: { lifetimeMs: number; renewEveryMs: number }) => {
    const inFlight = new RedisRequestsInFlight({ redis, keyPrefix: `${prefix}:inflight`, outcomes, timing });
    return { inFlight, counters: new RedisKeyCounters({ redis, keyPrefix: prefix, inFlight, outcomes }) };
  };
  const take = async (counters: RedisKeyCounters, keyId: string, limit: number) =>
    (await counters.admit(keyId, limits({ concurrentRequests: limit }))).release;

  it("one entry per request: a killed process's slots come back after their lifetime, live ones are renewed and kept", async () => {
    const redis = new Redis('redis://127.0.0.1:6379');
    const prefix = `unit-inflight-${randomUUID()}`;
    const timing = { lifetimeMs: 300, renewEveryMs: 50 };
    const live = processOn(redis, prefix, timing);
    const killed = processOn(redis, prefix, timing);
    try {
      const held = await take(live.counters, 'key_r', 2);
      expect(held).toBeDefined();
      // The other process takes the second slot and dies without giving it back (it stops renewing).
      expect(await take(killed.counters, 'key_r', 2)).toBeDefined();
      killed.inFlight.close();
      expect(await take(live.counters, 'key_r', 2)).toBeUndefined();
      // Past several lifetimes: the dead slot is gone, the live one still counts (a fixed window would forget both).
      await sleep(1_000);
      const again = await take(live.counters, 'key_r', 2);
      expect(again).toBeDefined();
      expect(await take(live.counters, 'key_r', 2)).toBeUndefined();
      // A release removes its own entry only (once, as the limiter calls it).
      again!();
      await sleep(50);
      expect(await take(live.counters, 'key_r', 2)).toBeDefined();
      expect(await take(live.counters, 'key_r', 2)).toBeUndefined();
      held!();
    } finally {
      live.inFlight.close();
      await live.counters.close();
      await redis.quit();
    }
  });

  it('admissions racing each other never take more slots than the limit', async () => {
    const redis = new Redis('redis://127.0.0.1:6379');
    const { inFlight, counters } = processOn(redis, `unit-inflight-${randomUUID()}`);
    try {
      const taken = await Promise.all(Array.from({ length: 20 }, () => take(counters, 'key_race', 3)));
      expect(taken.filter((release) => release !== undefined)).toHaveLength(3);
    } finally {
      inFlight.close();
      await counters.close();
      await redis.quit();
    }
  });
});

/** Redis at 127.0.0.1:6379: a process admits a busy key from blocks of its limits it holds, asking Redis per block. */
describe('blocks of limits held by each process', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const storeOn = (prefix: string) =>
    new RateLimitStore({ redisUrl: new Secret('redis://127.0.0.1:6379'), redisFailure: 'closed', keyPrefix: prefix });
  const outcome = (admission: Promise<{ release(): void }>) =>
    admission.then(
      (admitted) => admitted,
      () => undefined,
    );
  /** One process's limiter on a Redis prefix of its own, with a connection that reads the counts it left there. */
  const withOneProcess = async (
    test: (context: { limiter: KeyRateLimiter; counted: (key: string) => Promise<number> }) => Promise<void>,
  ) => {
    const prefix = `unit-lease-${randomUUID()}`;
    const store = storeOn(prefix);
    const redis = new Redis('redis://127.0.0.1:6379');
    try {
      await store.ready(5_000);
      await test({
        limiter: new KeyRateLimiter(store),
        counted: async (key) => Number(await redis.get(`${prefix}:rpm:${key}`)),
      });
    } finally {
      await redis.quit();
      await store.close();
    }
  };

  it('a block is a 64th of the limit, up to a thousand requests; spare slots a 64th, up to 64; none under 64', () => {
    expect([1, 63, 64, 6_400, 10_000_000].map(requestsBlockOf)).toEqual([1, 1, 1, 100, 1_000]);
    expect([1, 63, 128, 6_400, 10_000_000].map(spareSlotsOf)).toEqual([0, 0, 2, 64, 64]);
  });

  it("counts a block in Redis, not each request, and says where the key's minute stands", () =>
    withOneProcess(async ({ limiter, counted }) => {
      const busy = limits({ requestsPerMinute: 6_400 });
      let last: Admission | undefined;
      for (let index = 0; index < 10; index += 1) last = await limiter.admit('key_busy', busy);
      expect(last!.standing.requests).toMatchObject({ limit: 6_400, remaining: 6_390 });
      expect(await counted('key_busy')).toBe(100);
      // The limit lowered: nothing of the block taken under the old one is used, and what it did not admit goes
      // back to the minute, so the key is admitted as far as the new limit counts its 10 requests (as in memory).
      const lowered = limits({ requestsPerMinute: 50 });
      const admitted = [];
      for (let index = 0; index < 45; index += 1) admitted.push(await outcome(limiter.admit('key_busy', lowered)));
      expect(admitted.filter(Boolean)).toHaveLength(40);
      expect(admitted.slice(0, 40).every(Boolean)).toBe(true);
      expect(await counted('key_busy')).toBe(55);
    }));

  it('gives back the block of an admission that asked Redis under limits changed meanwhile', () =>
    withOneProcess(async ({ limiter, counted }) => {
      // The first asks Redis for a block of 100 under the old limit; the second comes under the lowered one
      // before that answer (a key read again after its limits changed). Redis counts the block when the second
      // asks, which may refuse it; once the first's answer is in, the 99 it did not make go back.
      const lowered = limits({ requestsPerMinute: 50 });
      const [first] = await Promise.all([
        outcome(limiter.admit('key_race', limits({ requestsPerMinute: 6_400 }))),
        outcome(limiter.admit('key_race', lowered)),
      ]);
      expect(first).toBeDefined();
      const admitted = [];
      for (let index = 0; index < 40; index += 1) admitted.push(await outcome(limiter.admit('key_race', lowered)));
      expect(admitted.every(Boolean)).toBe(true);
      expect(await counted('key_race')).toBe(42);
    }));

  it('keeps counted the request of an admission asking Redis for tokens when the limits change', () =>
    withOneProcess(async ({ limiter, counted }) => {
      const withTokens = limits({ requestsPerMinute: 6_400, tokensPerMinute: 1_000_000 });
      await limiter.admit('key_tokens', withTokens);
      expect(await counted('key_tokens')).toBe(100);
      // Past the tokens' reading's life, the next admission asks Redis for them alone, out of its block of 100;
      // the limits change while it asks, and the 98 left unmade go back, its own request staying counted.
      await sleep(1_100);
      await Promise.all([
        limiter.admit('key_tokens', withTokens),
        limiter.admit('key_tokens', limits({ requestsPerMinute: 50 })),
      ]);
      await limiter.admit('key_tokens', limits({ requestsPerMinute: 50 }));
      expect(await counted('key_tokens')).toBe(4);
    }));

  it('two processes together never pass a limit, and each holds back at most its spare share', async () => {
    const prefix = `unit-lease-${randomUUID()}`;
    const stores = [storeOn(prefix), storeOn(prefix)];
    const redis = new Redis('redis://127.0.0.1:6379');
    try {
      await Promise.all(stores.map((store) => store.ready(5_000)));
      const limiters = stores.map((store) => new KeyRateLimiter(store));
      const perMinute = limits({ requestsPerMinute: 128 });
      const minute = await Promise.all(
        Array.from({ length: 200 }, (_, index) => outcome(limiters[index % 2]!.admit('key_rpm', perMinute))),
      );
      const admitted = minute.filter(Boolean).length;
      // Blocks of 2: what one process took and had not used when the other ran out is all that goes unused.
      expect(admitted).toBeLessThanOrEqual(128);
      expect(admitted).toBeGreaterThanOrEqual(128 - 2 * 2);

      const inFlight = limits({ concurrentRequests: 128 });
      const held = await Promise.all(
        Array.from({ length: 200 }, (_, index) => outcome(limiters[index % 2]!.admit('key_slots', inFlight))),
      );
      const holding = held.filter((admission) => admission !== undefined);
      expect(holding.length).toBeLessThanOrEqual(128);
      expect(holding.length).toBeGreaterThanOrEqual(128 - 2 * 2);
      expect(await redis.zcard(`${prefix}:inflight:key_slots`)).toBeLessThanOrEqual(128);
      // Given back: each process keeps at most its 2 spare slots taken, and none once it closes.
      for (const admission of holding) admission.release();
      await sleep(50);
      expect(await redis.zcard(`${prefix}:inflight:key_slots`)).toBeLessThanOrEqual(2 * 2);
      await Promise.all(stores.map((store) => store.close()));
      expect(await redis.zcard(`${prefix}:inflight:key_slots`)).toBe(0);
    } finally {
      await redis.quit();
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it("sees another process's tokens within a second of their settlement", async () => {
    const prefix = `unit-lease-${randomUUID()}`;
    const stores = [storeOn(prefix), storeOn(prefix)];
    try {
      await Promise.all(stores.map((store) => store.ready(5_000)));
      const [here, there] = stores.map((store) => new KeyRateLimiter(store));
      const budget = limits({ tokensPerMinute: 100 });
      await here!.admit('key_tpm', budget);
      await there!.admit('key_tpm', budget);
      await there!.chargeTokens('key_tpm', 100);
      // Spent elsewhere, seen here once this process's reading is older than its bound.
      await sleep(tokensReadingMaxAgeMs + 50);
      await expect(here!.admit('key_tpm', budget)).rejects.toThrow('limit of 100 tokens per minute is spent');
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});

/** Redis at 127.0.0.1:6379: the admission is one script deciding on all three limits at once. */
describe('admission in Redis', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const refusalOf = (admission: Promise<unknown>) =>
    admission.then(
      () => undefined,
      (error: unknown) => error as RateLimitedError,
    );

  it('refuses on each limit, counting the request anyway, taking no slot when refused, and says where each limit stands', async () => {
    const prefix = `unit-admit-${randomUUID()}`;
    const store = new RateLimitStore({
      redisUrl: new Secret('redis://127.0.0.1:6379'),
      redisFailure: 'closed',
      keyPrefix: prefix,
    });
    const redis = new Redis('redis://127.0.0.1:6379');
    const slots = (keyId: string) => redis.zcard(`${prefix}:inflight:${keyId}`);
    try {
      await store.ready(5_000);
      const limiter = new KeyRateLimiter(store);
      const all = limits({ requestsPerMinute: 2, tokensPerMinute: 10, concurrentRequests: 1 });

      const first = await limiter.admit('key_x', all);
      expect(first.standing.requests).toMatchObject({ limit: 2, remaining: 1 });
      expect(first.standing.requests!.resetMs).toBeGreaterThan(55_000);
      expect(first.standing.requests!.resetMs).toBeLessThanOrEqual(60_000);
      expect(first.standing.tokens).toEqual({ limit: 10, remaining: 10, resetMs: 60_000 });
      expect(await slots('key_x')).toBe(1);

      // The slot is held: refused on concurrency (retry after a second), the request counted all the same.
      const busy = await refusalOf(limiter.admit('key_x', all));
      expect(busy).toBeInstanceOf(RateLimitedError);
      expect(busy!.message).toContain('limit of 1 concurrent requests is reached');
      expect(busy!.retryAfterSeconds).toBe(1);
      expect(busy!.standing).toMatchObject({
        requests: { limit: 2, remaining: 0 },
        tokens: { limit: 10, remaining: 10 },
      });

      first.release();
      first.release();
      await sleep(50);
      expect(await slots('key_x')).toBe(0);

      // Third request in the minute: refused on requests per minute, before tokens are read or a slot taken.
      const tooMany = await refusalOf(limiter.admit('key_x', all));
      expect(tooMany!.message).toContain('limit of 2 requests per minute is reached');
      expect(tooMany!.retryAfterSeconds).toBeGreaterThan(55);
      expect(tooMany!.retryAfterSeconds).toBeLessThanOrEqual(60);
      expect(tooMany!.standing.requests).toMatchObject({ limit: 2, remaining: 0 });
      expect(tooMany!.standing.tokens).toBeUndefined();
      expect(await slots('key_x')).toBe(0);

      // Tokens: counted at settlement (rounded up), refused once the minute's budget is spent, no slot taken.
      const tokensOnly = limits({ tokensPerMinute: 10, concurrentRequests: 5 });
      const spending = await limiter.admit('key_y', tokensOnly);
      expect(spending.standing.requests).toBeUndefined();
      await limiter.chargeTokens('key_y', 6.5);
      expect((await limiter.admit('key_y', tokensOnly)).standing.tokens).toMatchObject({ limit: 10, remaining: 3 });
      await limiter.chargeTokens('key_y', 3);
      const spent = await refusalOf(limiter.admit('key_y', tokensOnly));
      expect(spent!.message).toContain('limit of 10 tokens per minute is spent');
      expect(spent!.standing.tokens).toMatchObject({ limit: 10, remaining: 0 });
      expect(spent!.standing.tokens!.resetMs).toBeGreaterThan(55_000);
      expect(spent!.retryAfterSeconds).toBeLessThanOrEqual(60);
      expect(await slots('key_y')).toBe(2);

      // A key without limits on requests or tokens takes only its slot; a limit of 0 refuses at once.
      const slotOnly = await limiter.admit('key_z', limits({ concurrentRequests: 1 }));
      expect(slotOnly.standing).toEqual({});
      slotOnly.release();
      await expect(limiter.admit('key_z', limits({ requestsPerMinute: 0 }))).rejects.toThrow(
        'limit of 0 requests per minute is reached',
      );
    } finally {
      await redis.quit();
      await store.close();
    }
  });

  it('releases and charges reach Redis before any admission asked for after them: with it, alone, or at close', async () => {
    const prefix = `unit-admit-${randomUUID()}`;
    const store = new RateLimitStore({
      redisUrl: new Secret('redis://127.0.0.1:6379'),
      redisFailure: 'closed',
      keyPrefix: prefix,
    });
    const redis = new Redis('redis://127.0.0.1:6379');
    const slots = (keyId: string) => redis.zcard(`${prefix}:inflight:${keyId}`);
    try {
      await store.ready(5_000);
      const limiter = new KeyRateLimiter(store);
      const oneAtATime = limits({ tokensPerMinute: 100, concurrentRequests: 1 });
      const first = await limiter.admit('key_s', oneAtATime);
      // Released and charged, then admitted again in the same turn: the admission sees the slot free and the tokens spent.
      first.release();
      const charged = limiter.chargeTokens('key_s', 30);
      const second = await limiter.admit('key_s', oneAtATime);
      await charged;
      expect(second.standing.tokens).toMatchObject({ limit: 100, remaining: 70 });
      await expect(limiter.admit('key_s', oneAtATime)).rejects.toThrow('limit of 1 concurrent requests is reached');
      // Without an admission after them, they go on their own.
      second.release();
      await limiter.chargeTokens('key_s', 20);
      expect(await slots('key_s')).toBe(0);
      expect(await redis.get(`${prefix}:tpm:key_s`)).toBe('50');
      // Released just before the store closes: sent before the connection ends.
      const last = await limiter.admit('key_s', oneAtATime);
      expect(await slots('key_s')).toBe(1);
      last.release();
      await store.close();
      expect(await slots('key_s')).toBe(0);
    } finally {
      await redis.quit();
      await store.close();
    }
  });

  it("counts in the limiter library's keys and values: processes of the version before count together with these", async () => {
    const prefix = `unit-admit-${randomUUID()}`;
    const store = new RateLimitStore({
      redisUrl: new Secret('redis://127.0.0.1:6379'),
      redisFailure: 'closed',
      keyPrefix: prefix,
    });
    const redis = new Redis('redis://127.0.0.1:6379');
    const library = (name: string) =>
      new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${prefix}:${name}`,
        points: Number.MAX_SAFE_INTEGER,
        duration: 60,
      });
    try {
      await store.ready(5_000);
      const limiter = new KeyRateLimiter(store);
      const both = limits({ requestsPerMinute: 5, tokensPerMinute: 100 });
      await library('rpm').consume('key_old', 1);
      await library('tpm').penalty('key_old', 40);
      const admitted = await limiter.admit('key_old', both);
      expect(admitted.standing).toMatchObject({ requests: { remaining: 3 }, tokens: { remaining: 60 } });
      await limiter.chargeTokens('key_old', 25);
      expect(await library('rpm').get('key_old')).toMatchObject({ consumedPoints: 2 });
      const tokens = await library('tpm').get('key_old');
      expect(tokens).toMatchObject({ consumedPoints: 65 });
      expect(tokens!.msBeforeNext).toBeGreaterThan(55_000);
    } finally {
      await redis.quit();
      await store.close();
    }
  });
});
