import { once } from '../domain/once.ts';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { GatewayError } from '../domain/errors.ts';
import type { Secret } from '../domain/secret.ts';
import { MemoryKeyCounters, Refused, windowSeconds, type Counted, type KeyCounters } from './key-counters.ts';
import { RedisKeyCounters } from './redis-key-counters.ts';
import { MemoryRequestsInFlight, RedisRequestsInFlight } from './requests-in-flight.ts';

/** A key's (or, as its keys' default, an account's) rate limits; null is no limit. */
export interface RateLimits {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  concurrentRequests: number | null;
}

export const rateLimitNames = ['requestsPerMinute', 'tokensPerMinute', 'concurrentRequests'] as const;

const sessionsPrefix = 'sessions:';

/**
 * What the limiter counts an account's session requests under: the account's sessions together, as one more
 * credential under the account's limits (a key id never takes this form).
 */
export function sessionsCounterOf(accountId: string): string {
  return `${sessionsPrefix}${accountId}`;
}

/** The account whose sessions a counter id counts, if it is such an id. */
export function accountOfSessionsCounter(counterId: string): string | undefined {
  return counterId.startsWith(sessionsPrefix) ? counterId.slice(sessionsPrefix.length) : undefined;
}

/** The counter a generation's tokens count under: its key's, or its account's sessions' when no key made it. */
export function counterOfGeneration(generation: { apiKeyId: string | null; accountId: string }): string {
  return generation.apiKeyId ?? sessionsCounterOf(generation.accountId);
}
export type RateLimitName = (typeof rateLimitNames)[number];

export const noRateLimits: Readonly<RateLimits> = Object.freeze({
  requestsPerMinute: null,
  tokensPerMinute: null,
  concurrentRequests: null,
});

/**
 * The account's limits are the operator's: each is the default of the account's keys and a ceiling for each
 * of them. A key's own limit (set by its owner) can only tighten it: the smaller of the two applies.
 */
export function effectiveRateLimits(key: RateLimits, account: RateLimits): RateLimits {
  return {
    requestsPerMinute: tighter(key.requestsPerMinute, account.requestsPerMinute),
    tokensPerMinute: tighter(key.tokensPerMinute, account.tokensPerMinute),
    concurrentRequests: tighter(key.concurrentRequests, account.concurrentRequests),
  };
}

function tighter(own: number | null, ceiling: number | null): number | null {
  if (own === null) return ceiling;
  return ceiling === null ? own : Math.min(own, ceiling);
}

export function hasRateLimits(limits: RateLimits): boolean {
  return limits.requestsPerMinute !== null || limits.tokensPerMinute !== null || limits.concurrentRequests !== null;
}

/** Where a limit stands after an admission: what the surfaces' rate-limit headers report. */
export interface LimitStanding {
  limit: number;
  remaining: number;
  /** Milliseconds until the window starts afresh. */
  resetMs: number;
}

export interface RateStanding {
  requests?: LimitStanding;
  tokens?: LimitStanding;
}

/** A refusal: 429 in the envelope with `retry-after`, and where each limit stands for the surface's headers. */
export class RateLimitedError extends GatewayError {
  constructor(
    message: string,
    retryAfterSeconds: number,
    readonly standing: RateStanding,
  ) {
    super('GW_RATE_LIMITED', message);
    this.retryAfter(retryAfterSeconds);
  }
}

export interface RateLimitStoreOptions {
  /** Redis shared by the gateway's processes; without, counters live in this process's memory. */
  redisUrl?: Secret;
  /** What admission does while Redis does not answer: admit without limits (`open`) or refuse with 503 (`closed`). */
  redisFailure: 'open' | 'closed';
  keyPrefix: string;
  /** Redis stopped answering (said once per outage). */
  onOutage?: (error: unknown) => void;
  /** Redis answers again after an outage. */
  onRecovery?: () => void;
}

/** A Redis command that does not answer within this is a failure (fail open or closed), never a request left hanging. */
const redisCommandTimeoutMs = 500;

/**
 * The counters, in memory or in Redis (the limiter library's for the sign-in throttle; for keys' limits,
 * blocks of them held by each process, see redis-key-counters.ts), and the failure policy for Redis: every counter made
 * here shares one connection, and one outage flag, so an outage is said once. The connection does not
 * auto-pipeline: measured (bench/rate-limiter.ts), batching commands of concurrent requests saved no gateway
 * CPU at 32 requests under way and doubled it for requests one at a time.
 */
export class RateLimitStore {
  private readonly redis: Redis | undefined;
  private inOutage = false;
  private readonly inFlight: RedisRequestsInFlight[] = [];
  private readonly keyCountersMade: RedisKeyCounters[] = [];

  constructor(private readonly options: RateLimitStoreOptions) {
    if (options.redisUrl) {
      // Loaded only when Redis is configured: the client costs about 20 MiB of resident memory at start.
      const { Redis: RedisClient }: typeof import('ioredis') = createRequire(import.meta.url)('ioredis');
      this.redis = new RedisClient(options.redisUrl.reveal(), {
        // Commands fail at once while disconnected instead of queueing behind a reconnection.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: redisCommandTimeoutMs,
        lazyConnect: false,
        retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
      });
      // ioredis reports every failed reconnection; the outage is said once, by the first command that fails.
      this.redis.on('error', () => undefined);
    }
  }

  /**
   * Waits (at most `timeoutMs`) for the Redis connection to be ready: commands fail at once while it is not,
   * so a process that served before it connects would admit its first requests without limits, or refuse them.
   */
  async ready(timeoutMs: number): Promise<void> {
    const redis = this.redis;
    if (!redis || redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      redis.once('ready', done);
    });
  }

  get shared(): boolean {
    return this.redis !== undefined;
  }

  get failOpen(): boolean {
    return this.options.redisFailure === 'open';
  }

  /**
   * A fixed-window counter named `name`, refusing past `points` within `durationSeconds`. An `insured` counter
   * in Redis counts in this process's memory while Redis does not answer, so it never stops counting.
   */
  counter(
    name: string,
    { points, durationSeconds, insured }: { points: number; durationSeconds: number; insured?: boolean },
  ): RateLimiterAbstract {
    const keyPrefix = `${this.options.keyPrefix}:${name}`;
    if (!this.redis) return new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds });
    const insuranceLimiter = insured
      ? new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds })
      : undefined;
    return new RateLimiterRedis({
      storeClient: this.redis,
      keyPrefix,
      points,
      duration: durationSeconds,
      rejectIfRedisNotReady: true,
      ...(insuranceLimiter ? { insuranceLimiter } : {}),
    });
  }

  /**
   * The per-key counters of requests (`rpm`) and tokens (`tpm`) per minute and of slots in flight
   * (`inflight`): in memory the library's counters and a count per key; in Redis blocks of each key's limits
   * held by this process and one script per block (redis-key-counters.ts), the slots one sorted-set entry each.
   */
  keyCounters(): KeyCounters {
    if (!this.redis)
      return new MemoryKeyCounters(
        this.counter('rpm', { points: unbounded, durationSeconds: windowSeconds }),
        this.counter('tpm', { points: unbounded, durationSeconds: windowSeconds }),
        new MemoryRequestsInFlight(),
      );
    const inFlight = new RedisRequestsInFlight({
      redis: this.redis,
      keyPrefix: `${this.options.keyPrefix}:inflight`,
      outcomes: this,
    });
    this.inFlight.push(inFlight);
    const counters = new RedisKeyCounters({
      redis: this.redis,
      keyPrefix: this.options.keyPrefix,
      inFlight,
      outcomes: this,
    });
    this.keyCountersMade.push(counters);
    return counters;
  }

  /**
   * A command the store failed (the counters never refuse themselves: their `points` are never reached, so
   * whatever they throw is the store's failure). Starts an outage, said once.
   */
  failed(error: unknown): void {
    if (this.inOutage) return;
    this.inOutage = true;
    this.options.onOutage?.(error);
  }

  /** A command the store answered: ends an outage. */
  answered(): void {
    if (!this.inOutage) return;
    this.inOutage = false;
    this.options.onRecovery?.();
  }

  /** Refusal while the store is down and the policy is to fail closed. */
  unavailable(): GatewayError {
    return new GatewayError(
      'GW_RATE_LIMITS_UNAVAILABLE',
      'rate limits cannot be checked right now (their store is unreachable)',
    ).retryAfter(1);
  }

  async close(): Promise<void> {
    for (const requests of this.inFlight) requests.close();
    if (!this.redis) return;
    // Releases and charges still waiting are sent before the connection closes (they cannot fail the close).
    await Promise.all(this.keyCountersMade.map((counters) => counters.close().catch(() => undefined)));
    await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}

/** The counters decide against each key's own limit, not the library's `points`, which is never reached. */
const unbounded = Number.MAX_SAFE_INTEGER;

/** What an admission holds until the request ends: its concurrency slot, given back once by `release`. */
export interface Admission {
  standing: RateStanding;
  release(): void;
}

const noRelease = () => undefined;
const nothingHeld: Admission = { standing: {}, release: noRelease };
const settled: Promise<void> = Promise.resolve();

/** A key's effective rate limits as storage has them now (null: no such key). */
export type RateLimitsLookup = (keyId: string) => Promise<RateLimits | null>;

/** How long a key's tokens-per-minute limit is trusted for settlements (a change of the key forgets it at once). */
const tokenLimitTtlMs = 60_000;
const maxKnownTokenLimits = 100_000;

/**
 * Per-key requests per minute, tokens per minute and requests in flight. Requests are counted at admission,
 * tokens when a generation settles (a key over its minute's budget is refused at its next admission), and a
 * slot in flight is taken at admission and given back however the request ends. In Redis most admissions of a
 * busy key are decided from blocks of its limits this process holds, the others in one round trip.
 */
export class KeyRateLimiter {
  private readonly counters: KeyCounters;
  /**
   * Each key's tokens-per-minute limit (null: none), as last seen at admission or read from storage: a
   * settlement is counted whichever process admitted its request (a media job settles where it ran).
   */
  private readonly tokenLimits = new Map<string, { limit: number | null; until: number }>();
  private readonly lookups = new Map<string, Promise<number | null>>();

  constructor(
    private readonly store: RateLimitStore,
    private readonly lookup: RateLimitsLookup = () => Promise.resolve(null),
  ) {
    this.counters = store.keyCounters();
  }

  /** Admits a request of `keyId` under `limits`, or throws 429 (`RateLimitedError`), or 503 when failing closed. */
  async admit(keyId: string, limits: RateLimits): Promise<Admission> {
    this.noteTokenLimit(keyId, limits.tokensPerMinute);
    let counted: Counted;
    try {
      counted = await this.counters.admit(keyId, limits);
    } catch (error) {
      this.store.failed(error);
      if (this.store.failOpen) return nothingHeld;
      throw this.store.unavailable();
    }
    this.store.answered();
    const standing: RateStanding = {};
    if (limits.requestsPerMinute !== null) {
      standing.requests = standingOf(limits.requestsPerMinute, counted.requestsUsed, counted.requestsResetMs);
      if (counted.refused === Refused.requests) {
        throw refusal(
          `this API key's limit of ${limits.requestsPerMinute} requests per minute is reached`,
          counted.requestsResetMs,
          standing,
        );
      }
    }
    if (limits.tokensPerMinute !== null) {
      standing.tokens = standingOf(limits.tokensPerMinute, counted.tokensUsed, counted.tokensResetMs);
      if (counted.refused === Refused.tokens) {
        throw refusal(
          `this API key's limit of ${limits.tokensPerMinute} tokens per minute is spent`,
          counted.tokensResetMs,
          standing,
        );
      }
    }
    if (counted.refused === Refused.concurrent)
      throw new RateLimitedError(
        `this API key's limit of ${limits.concurrentRequests} concurrent requests is reached`,
        1,
        standing,
      );
    return { standing, release: counted.release ? once(counted.release) : noRelease };
  }

  /** A key admitted without any rate limit: its settlements cost nothing, without asking storage. */
  admittedUnlimited(keyId: string): void {
    this.noteTokenLimit(keyId, null);
  }

  /**
   * Counts a settled generation's tokens against its key's minute, when the key has a tokens-per-minute limit
   * (known from an admission here, else read from storage once and kept for a while). The promise, which
   * never rejects, says when the count is done; settlements need not wait for it.
   */
  chargeTokens(keyId: string | null, tokens: number): Promise<void> {
    if (keyId === null || tokens <= 0) return settled;
    const known = this.tokenLimits.get(keyId);
    if (known && known.until > Date.now()) return known.limit === null ? settled : this.count(keyId, tokens);
    return this.tokenLimitOf(keyId).then(
      (limit) => (limit === null ? undefined : this.count(keyId, tokens)),
      // Storage did not answer: the settlement is counted rather than lost.
      () => this.count(keyId, tokens),
    );
  }

  /**
   * Counts a settled generation's usage against its key's minute, as `chargeTokens`; a key known to have no
   * tokens limit (the usual case) costs one lookup, without reading the usage.
   */
  chargeUsage(keyId: string | null, usage: unknown): Promise<void> {
    if (keyId === null) return settled;
    const known = this.tokenLimits.get(keyId);
    if (known && known.limit === null && known.until > Date.now()) return settled;
    return this.chargeTokens(keyId, tokensUsed(usage));
  }

  /** A key changed (its limits or its account's): its limit is read afresh; `*` forgets every key. */
  forgetKey(keyId: string): void {
    if (keyId === '*') this.tokenLimits.clear();
    else this.tokenLimits.delete(keyId);
  }

  private count(keyId: string, tokens: number): Promise<void> {
    return this.counters.chargeTokens(keyId, Math.ceil(tokens)).then(
      () => this.store.answered(),
      (error: unknown) => this.store.failed(error),
    );
  }

  private tokenLimitOf(keyId: string): Promise<number | null> {
    const pending = this.lookups.get(keyId);
    if (pending) return pending;
    const lookup = this.lookup(keyId)
      .then((limits) => {
        const limit = limits?.tokensPerMinute ?? null;
        this.noteTokenLimit(keyId, limit);
        return limit;
      })
      .finally(() => this.lookups.delete(keyId));
    this.lookups.set(keyId, lookup);
    return lookup;
  }

  /** Bounded: a forgotten entry is only read again from storage. */
  private noteTokenLimit(keyId: string, limit: number | null): void {
    const until = Date.now() + tokenLimitTtlMs;
    const known = this.tokenLimits.get(keyId);
    // Every admission notes its key: the entry is renewed in place rather than allocated anew.
    if (known) {
      known.limit = limit;
      known.until = until;
      return;
    }
    if (this.tokenLimits.size >= maxKnownTokenLimits) this.tokenLimits.clear();
    this.tokenLimits.set(keyId, { limit, until });
  }
}

function standingOf(limit: number, used: number, resetMs: number): LimitStanding {
  return { limit, remaining: Math.max(0, limit - used), resetMs: Math.max(0, resetMs) };
}

function refusal(message: string, resetMs: number, standing: RateStanding): RateLimitedError {
  const seconds = Math.max(1, Math.ceil(resetMs / 1000));
  return new RateLimitedError(`${message}: try again in ${seconds} seconds`, seconds, standing);
}

/** Input and output tokens of a usage record, in whichever modality's names it has them. */
export function tokensUsed(usage: unknown): number {
  if (usage === null || typeof usage !== 'object') return 0;
  const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
  const field = (name: string): unknown => (Object.hasOwn(usage, name) ? Reflect.get(usage, name) : undefined);
  const total = count(field('totalTokens'));
  if (total > 0) return total;
  return (
    count(field('promptTokens') ?? field('inputTokens')) + count(field('completionTokens') ?? field('outputTokens'))
  );
}
