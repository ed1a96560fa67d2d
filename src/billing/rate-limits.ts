import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { GatewayError } from '../domain/errors.ts';
import type { Secret } from '../domain/secret.ts';

/** A key's (or, as its keys' default, an account's) rate limits; null is no limit. */
export interface RateLimits {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  concurrentRequests: number | null;
}

export const rateLimitNames = ['requestsPerMinute', 'tokensPerMinute', 'concurrentRequests'] as const;
export type RateLimitName = (typeof rateLimitNames)[number];

export const noRateLimits: Readonly<RateLimits> = Object.freeze({ requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null });

/** The key's own limit where it has one, else its account's default. */
export function effectiveRateLimits(key: RateLimits, account: RateLimits): RateLimits {
  return {
    requestsPerMinute: key.requestsPerMinute ?? account.requestsPerMinute,
    tokensPerMinute: key.tokensPerMinute ?? account.tokensPerMinute,
    concurrentRequests: key.concurrentRequests ?? account.concurrentRequests,
  };
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
    super('GW_RATE_LIMITED', message, [], { retryAfterSeconds });
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
 * The counters of the limiter library, in memory or in Redis with the same API, and the failure policy for
 * Redis: every counter made here shares one connection, and one outage flag, so an outage is said once.
 */
export class RateLimitStore {
  private readonly redis: Redis | undefined;
  private inOutage = false;

  constructor(private readonly options: RateLimitStoreOptions) {
    if (options.redisUrl) {
      this.redis = new Redis(options.redisUrl.reveal(), {
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
   * A fixed-window counter named `name`, refusing past `points` within `durationSeconds` (0: the window never
   * ends, memory only; Redis counters always expire).
   */
  counter(name: string, points: number, durationSeconds: number): RateLimiterAbstract {
    const keyPrefix = `${this.options.keyPrefix}:${name}`;
    if (!this.redis) return new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds });
    return new RateLimiterRedis({ storeClient: this.redis, keyPrefix, points, duration: durationSeconds, rejectIfRedisNotReady: true });
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
    return new GatewayError('GW_RATE_LIMITS_UNAVAILABLE', 'rate limits cannot be checked right now (their store is unreachable)', [], { retryAfterSeconds: 1 });
  }

  async close(): Promise<void> {
    if (!this.redis) return;
    await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}

/** Requests and tokens count per minute. */
const windowSeconds = 60;
/**
 * Slots of requests in flight are counted without a window in memory; in Redis their counter expires this
 * long after it was created, so the slots of a process killed mid-request come back at the latest then.
 */
const concurrencyExpirySeconds = 600;
/** The counters decide against each key's own limit, not the library's `points`, which is never reached. */
const unbounded = Number.MAX_SAFE_INTEGER;

/** What an admission holds until the request ends: its concurrency slot, given back once by `release`. */
export interface Admission {
  standing: RateStanding;
  release(): void;
}

const nothingHeld: Admission = { standing: {}, release: () => undefined };

/**
 * Per-key requests per minute, tokens per minute and requests in flight. Requests are counted at admission,
 * tokens when a generation settles (a key over its minute's budget is refused at its next admission), and a
 * slot in flight is taken at admission and given back however the request ends.
 */
export class KeyRateLimiter {
  private readonly requests: RateLimiterAbstract;
  private readonly tokens: RateLimiterAbstract;
  private readonly inFlight: RateLimiterAbstract;
  /** Keys with a tokens-per-minute limit seen by this process: only their settlements are counted. */
  private readonly tokenLimitedKeys = new Map<string, number>();

  constructor(private readonly store: RateLimitStore) {
    this.requests = store.counter('rpm', unbounded, windowSeconds);
    this.tokens = store.counter('tpm', unbounded, windowSeconds);
    this.inFlight = store.counter('conc', unbounded, store.shared ? concurrencyExpirySeconds : 0);
  }

  /** Admits a request of `keyId` under `limits`, or throws 429 (`RateLimitedError`), or 503 when failing closed. */
  async admit(keyId: string, limits: RateLimits): Promise<Admission> {
    const standing: RateStanding = {};
    try {
      const [requests, tokens] = await Promise.all([
        limits.requestsPerMinute === null ? undefined : this.requests.consume(keyId, 1),
        limits.tokensPerMinute === null ? undefined : this.tokens.get(keyId),
      ]);
      this.store.answered();
      if (requests && limits.requestsPerMinute !== null) {
        standing.requests = standingOf(limits.requestsPerMinute, requests.consumedPoints, requests.msBeforeNext);
        if (requests.consumedPoints > limits.requestsPerMinute) {
          throw refusal(`this API key's limit of ${limits.requestsPerMinute} requests per minute is reached`, requests.msBeforeNext, standing);
        }
      }
      if (limits.tokensPerMinute !== null) {
        this.noteTokenLimit(keyId, limits.tokensPerMinute);
        const used = tokens?.consumedPoints ?? 0;
        const resetMs = tokens?.msBeforeNext ?? windowSeconds * 1000;
        standing.tokens = standingOf(limits.tokensPerMinute, used, resetMs);
        if (used >= limits.tokensPerMinute) {
          throw refusal(`this API key's limit of ${limits.tokensPerMinute} tokens per minute is spent`, resetMs, standing);
        }
      }
      if (limits.concurrentRequests === null) return { standing, release: () => undefined };
      return await this.takeSlot(keyId, limits.concurrentRequests, standing);
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      this.store.failed(error);
      if (this.store.failOpen) return nothingHeld;
      throw this.store.unavailable();
    }
  }

  /** Counts a settled generation's tokens against its key's minute, when the key has a tokens-per-minute limit. */
  chargeTokens(keyId: string | null, tokens: number): void {
    if (keyId === null || tokens <= 0 || !this.tokenLimitedKeys.has(keyId)) return;
    this.tokens.penalty(keyId, Math.ceil(tokens)).then(
      () => this.store.answered(),
      (error: unknown) => this.store.failed(error),
    );
  }

  private async takeSlot(keyId: string, limit: number, standing: RateStanding): Promise<Admission> {
    const taken = await this.inFlight.consume(keyId, 1);
    if (taken.consumedPoints > limit) {
      this.giveBack(keyId);
      throw new RateLimitedError(`this API key's limit of ${limit} concurrent requests is reached`, 1, standing);
    }
    let held = true;
    return {
      standing,
      release: () => {
        if (!held) return;
        held = false;
        this.giveBack(keyId);
      },
    };
  }

  private giveBack(keyId: string): void {
    this.inFlight.reward(keyId, 1).then(
      (after) => {
        this.store.answered();
        // The counter expired (Redis) while requests were in flight: it is brought back to zero, never below.
        if (after.consumedPoints < 0) void this.inFlight.penalty(keyId, -after.consumedPoints).catch(() => undefined);
      },
      (error: unknown) => this.store.failed(error),
    );
  }

  /** Bounded: an entry is only a hint that settlements of this key are worth counting. */
  private noteTokenLimit(keyId: string, limit: number): void {
    if (this.tokenLimitedKeys.get(keyId) === limit) return;
    if (this.tokenLimitedKeys.size >= maxTokenLimitedKeys) this.tokenLimitedKeys.clear();
    this.tokenLimitedKeys.set(keyId, limit);
  }
}

const maxTokenLimitedKeys = 100_000;

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
  const fields = new Map(Object.entries(usage));
  const total = count(fields.get('totalTokens'));
  if (total > 0) return total;
  return count(fields.get('promptTokens') ?? fields.get('inputTokens')) + count(fields.get('completionTokens') ?? fields.get('outputTokens'));
}
