/**
 * The per-key rate limiter alone: CPU and wall time per request of a key with limits too high ever to refuse,
 * one limit (requests per minute) or all three (with the settlement's token count and the slot's release),
 * with counters in memory and, with --redis, in Redis (REDIS_URL, default 127.0.0.1:6379, under a key prefix
 * of its own; the CPU is this process's only, not the Redis server's). Beside `npm run bench:compare -- --baseline .
 * --ours-requests-per-minute 1000000000`, which measures the same thing inside the whole gateway, this figure
 * does not drown in the machine's noise.
 *
 * With --concurrency N (default 1), N requests are under way at a time, as on a gateway serving N connections:
 * commands of requests under way together can share a write to Redis.
 *
 *   node --import tsx bench/rate-limiter.ts [--admissions 200000] [--keys 100] [--concurrency 1] [--redis]
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { parseArgs } from 'node:util';
import { KeyRateLimiter, RateLimitStore, type RateLimits } from '../src/billing/rate-limits.ts';
import { Secret } from '../src/domain/secret.ts';

const { values: options } = parseArgs({
  options: {
    admissions: { type: 'string', default: '200000' },
    keys: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '1' },
    redis: { type: 'boolean', default: false },
  },
});
const admissions = Number(options.admissions);
const concurrency = Number(options.concurrency);
const keys = Array.from({ length: Number(options.keys) }, (_, index) => `key_bench_${index}`);

/** The Redis server's CPU seconds so far (INFO cpu), to add its share: other clients of the same Redis count too. */
async function redisCpuSeconds(redis: Redis | undefined): Promise<number> {
  if (!redis) return 0;
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_sys') + field('used_cpu_user');
}

async function measure(
  label: string,
  store: RateLimitStore,
  { limits, count, redis }: { limits: RateLimits; count: number; redis?: Redis },
): Promise<void> {
  const limiter = new KeyRateLimiter(store);
  // Warm up: the counters exist and the code is optimised before the measurement.
  await run(limiter, limits, Math.min(10_000, count));
  const redisBefore = await redisCpuSeconds(redis);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await run(limiter, limits, count);
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuUs = (cpu.user + cpu.system) / count;
  const redisUs = redis
    ? ` + ${((((await redisCpuSeconds(redis)) - redisBefore) * 1e6) / count).toFixed(2)} µs of the Redis server's CPU`
    : '';
  process.stdout.write(
    `${label}: ${cpuUs.toFixed(2)} µs CPU${redisUs} and ${((wallMs * 1000) / count).toFixed(2)} µs wall per request (${count} requests, ${keys.length} keys, ${concurrency} at a time)\n`,
  );
}

/** `count` requests, `concurrency` under way at a time, each worker taking the next as its last ends. */
async function run(limiter: KeyRateLimiter, limits: RateLimits, count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      await oneRequest(limiter, keys[index % keys.length]!, limits);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** What the limiter does for one request: its admission, the settlement's tokens where limited, the release. */
async function oneRequest(limiter: KeyRateLimiter, keyId: string, limits: RateLimits): Promise<void> {
  const admission = await limiter.admit(keyId, limits);
  // The gateway does not wait for the count of a settlement's tokens, so neither does this.
  if (limits.tokensPerMinute !== null) void limiter.chargeTokens(keyId, 20);
  admission.release();
}

const requestsOnly: RateLimits = { requestsPerMinute: 1_000_000_000, tokensPerMinute: null, concurrentRequests: null };
const allThree: RateLimits = {
  requestsPerMinute: 1_000_000_000,
  tokensPerMinute: 1_000_000_000,
  concurrentRequests: 1_000_000_000,
};
const memory = new RateLimitStore({ redisFailure: 'open', keyPrefix: 'bench' });
await measure('memory, requests per minute', memory, { limits: requestsOnly, count: admissions });
await measure('memory, all three limits', memory, { limits: allThree, count: admissions });
if (options.redis) {
  const redisUrl = new Secret(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const redis = new RateLimitStore({ redisUrl, redisFailure: 'closed', keyPrefix: `bench-${randomUUID()}` });
  await redis.ready(5_000);
  const probe = new Redis(redisUrl.reveal());
  await measure('Redis, requests per minute (one connection)', redis, {
    limits: requestsOnly,
    count: Math.min(admissions, 20_000),
    redis: probe,
  });
  await measure('Redis, all three limits (one connection)', redis, {
    limits: allThree,
    count: Math.min(admissions, 20_000),
    redis: probe,
  });
  await probe.quit();
  await redis.close();
}
