/**
 * The per-key rate limiter alone: CPU per admission (and release) of a key with a requests-per-minute limit too
 * high ever to refuse, with counters in memory, and the wall time per admission with counters in Redis
 * (REDIS_URL, default 127.0.0.1:6379, under a key prefix of its own). Beside `npm run bench:compare -- --baseline .
 * --ours-requests-per-minute 1000000000`, which measures the same thing inside the whole gateway, this figure
 * does not drown in the machine's noise.
 *
 *   node --import tsx bench/rate-limiter.ts [--admissions 200000] [--keys 100] [--redis]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { KeyRateLimiter, RateLimitStore, type RateLimits } from '../src/billing/rate-limits.ts';
import { Secret } from '../src/domain/secret.ts';

const { values: options } = parseArgs({
  options: {
    admissions: { type: 'string', default: '200000' },
    keys: { type: 'string', default: '100' },
    redis: { type: 'boolean', default: false },
  },
});
const admissions = Number(options.admissions);
const keys = Array.from({ length: Number(options.keys) }, (_, index) => `key_bench_${index}`);

async function measure(label: string, store: RateLimitStore, limits: RateLimits, count: number): Promise<void> {
  const limiter = new KeyRateLimiter(store);
  // Warm up: the counters exist and the code is optimised before the measurement.
  for (let index = 0; index < 10_000 && index < count; index++) (await limiter.admit(keys[index % keys.length]!, limits)).release();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let index = 0; index < count; index++) (await limiter.admit(keys[index % keys.length]!, limits)).release();
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuUs = (cpu.user + cpu.system) / count;
  process.stdout.write(`${label}: ${cpuUs.toFixed(2)} µs CPU and ${((wallMs * 1000) / count).toFixed(2)} µs wall per admission (${count} admissions, ${keys.length} keys)\n`);
}

const requestsOnly: RateLimits = { requestsPerMinute: 1_000_000_000, tokensPerMinute: null, concurrentRequests: null };
const allThree: RateLimits = { requestsPerMinute: 1_000_000_000, tokensPerMinute: 1_000_000_000, concurrentRequests: 1_000_000_000 };
const memory = new RateLimitStore({ redisFailure: 'open', keyPrefix: 'bench' });
await measure('memory, requests per minute', memory, requestsOnly, admissions);
await measure('memory, all three limits', memory, allThree, admissions);
if (options.redis) {
  const redis = new RateLimitStore({ redisUrl: new Secret(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), redisFailure: 'closed', keyPrefix: `bench-${randomUUID()}` });
  await redis.ready(5_000);
  await measure('Redis, requests per minute (one connection, sequential)', redis, requestsOnly, Math.min(admissions, 20_000));
  await redis.close();
}
