import { randomUUID } from 'node:crypto';
import type { Redis, Result } from 'ioredis';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { clockLua, takeSlotLua, type RedisRequestsInFlight, type RequestsInFlight } from './requests-in-flight.ts';

/** A key's limits as the counters take them (the shape of rate-limits.ts's `RateLimits`); null is no limit. */
export interface CountedLimits {
  readonly requestsPerMinute: number | null;
  readonly tokensPerMinute: number | null;
  readonly concurrentRequests: number | null;
}

/** Which limit refused an admission, in the order they are checked (as the admission script answers it). */
export const Refused = { none: 0, requests: 1, tokens: 2, concurrent: 3 } as const;
export type Refused = (typeof Refused)[keyof typeof Refused];

/**
 * What the counters say of one admission: the request is counted against its minute (where limited) whatever
 * the outcome; the tokens spent in the minute are read; the slot in flight is taken only when neither refused.
 * The uses and resets of a limit the key does not have are 0.
 */
export interface Counted {
  refused: Refused;
  requestsUsed: number;
  requestsResetMs: number;
  tokensUsed: number;
  tokensResetMs: number;
  /** The slot's release, when one was taken. */
  release: (() => void) | undefined;
}

/** Requests per minute, tokens per minute and slots in flight of every key, in memory or in Redis. */
export interface KeyCounters {
  admit(keyId: string, limits: CountedLimits): Promise<Counted>;
  /** Adds `tokens` (a whole number) to `keyId`'s minute. */
  chargeTokens(keyId: string, tokens: number): Promise<void>;
}

/** Requests and tokens count per minute (a fixed window that starts with its first count). */
export const windowSeconds = 60;

/**
 * This process's memory: the limiter library's counters, whose `points` are never reached (the decision is
 * against each key's own limit), and a count of slots per key.
 */
export class MemoryKeyCounters implements KeyCounters {
  constructor(
    private readonly requests: RateLimiterAbstract,
    private readonly tokens: RateLimiterAbstract,
    private readonly inFlight: RequestsInFlight,
  ) {}

  async admit(keyId: string, limits: CountedLimits): Promise<Counted> {
    const [requests, tokens] = await Promise.all([
      limits.requestsPerMinute === null ? undefined : this.requests.consume(keyId, 1),
      limits.tokensPerMinute === null ? undefined : this.tokens.get(keyId),
    ]);
    const counted: Counted = {
      refused: Refused.none,
      requestsUsed: requests?.consumedPoints ?? 0,
      requestsResetMs: requests?.msBeforeNext ?? 0,
      tokensUsed: tokens?.consumedPoints ?? 0,
      tokensResetMs: limits.tokensPerMinute === null ? 0 : (tokens?.msBeforeNext ?? windowSeconds * 1000),
      release: undefined,
    };
    if (limits.requestsPerMinute !== null && counted.requestsUsed > limits.requestsPerMinute) counted.refused = Refused.requests;
    else if (limits.tokensPerMinute !== null && counted.tokensUsed >= limits.tokensPerMinute) counted.refused = Refused.tokens;
    else if (limits.concurrentRequests !== null) {
      counted.release = await this.inFlight.take(keyId, limits.concurrentRequests);
      if (!counted.release) counted.refused = Refused.concurrent;
    }
    return counted;
  }

  async chargeTokens(keyId: string, tokens: number): Promise<void> {
    await this.tokens.penalty(keyId, tokens);
  }
}

/**
 * One admission in Redis is one script, one round trip: it counts the request in its minute, reads the tokens
 * spent in the minute and takes the slot in flight, deciding atomically. Each is what the limiter library's
 * Redis counters and the slot script did as separate commands (the same keys and values, so processes of the
 * version before count together with these), but each command through ioredis costs the gateway tens of
 * microseconds of CPU and the request a round trip: three per admission were over half a non-streamed
 * request's own CPU cost. Limits the key does not have are passed as -1 and left alone.
 *
 * KEYS: requests counter, tokens counter, slots in flight. ARGV: requests limit, tokens limit, slots limit,
 * the window's seconds, a slot's lifetime (ms), the slot's member.
 * Answers {refused, requests used, requests reset ms, tokens used, tokens reset ms}, refused as `Refused`.
 */
const admitLua = `local requests, requestsTtl, tokens, tokensTtl = 0, 0, 0, 0
local requestsLimit, tokensLimit, slotsLimit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if requestsLimit >= 0 then
  redis.call('SET', KEYS[1], 0, 'EX', ARGV[4], 'NX')
  requests = redis.call('INCRBY', KEYS[1], 1)
  requestsTtl = redis.call('PTTL', KEYS[1])
  if requestsTtl == -1 then
    redis.call('EXPIRE', KEYS[1], ARGV[4])
    requestsTtl = 1000 * ARGV[4]
  end
end
if tokensLimit >= 0 then
  local spent = redis.call('GET', KEYS[2])
  if spent then
    tokens = tonumber(spent)
    tokensTtl = redis.call('PTTL', KEYS[2])
  else
    tokensTtl = 1000 * ARGV[4]
  end
end
if requestsLimit >= 0 and requests > requestsLimit then return {1, requests, requestsTtl, tokens, tokensTtl} end
if tokensLimit >= 0 and tokens >= tokensLimit then return {2, requests, requestsTtl, tokens, tokensTtl} end
if slotsLimit >= 0 then
  ${clockLua}
  ${takeSlotLua('KEYS[3]', 'ARGV[3]', 'ARGV[5]', 'ARGV[6]')}
  if taken == 0 then return {3, requests, requestsTtl, tokens, tokensTtl} end
end
return {0, requests, requestsTtl, tokens, tokensTtl}`;

/** A settlement's tokens added to the key's minute, as the limiter library's Redis counter adds them. */
const chargeLua = `redis.call('SET', KEYS[1], 0, 'EX', ARGV[2], 'NX')
redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) == -1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return 1`;

type AdmitAnswer = [refused: Refused, requestsUsed: number, requestsResetMs: number, tokensUsed: number, tokensResetMs: number];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    admitUnderKeyLimits(requestsKey: string, tokensKey: string, slotsKey: string, requestsLimit: number, tokensLimit: number, slotsLimit: number, windowSeconds: number, slotLifetimeMs: number, member: string): Result<AdmitAnswer, Context>;
    chargeKeyTokens(tokensKey: string, tokens: number, windowSeconds: number): Result<number, Context>;
  }
}

/**
 * Redis shared by the gateway's processes. The keys are the limiter library's (`<prefix>:rpm:<key>`,
 * `<prefix>:tpm:<key>`) and the slots' sorted set (`<prefix>:inflight:<key>`), whose held slots `inFlight`
 * renews and releases.
 */
export class RedisKeyCounters implements KeyCounters {
  private readonly requestsPrefix: string;
  private readonly tokensPrefix: string;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    private readonly inFlight: RedisRequestsInFlight,
  ) {
    this.requestsPrefix = `${keyPrefix}:rpm:`;
    this.tokensPrefix = `${keyPrefix}:tpm:`;
    redis.defineCommand('admitUnderKeyLimits', { numberOfKeys: 3, lua: admitLua });
    redis.defineCommand('chargeKeyTokens', { numberOfKeys: 1, lua: chargeLua });
  }

  async admit(keyId: string, limits: CountedLimits): Promise<Counted> {
    const slotsKey = this.inFlight.keyOf(keyId);
    const member = limits.concurrentRequests === null ? '' : randomUUID();
    const [refused, requestsUsed, requestsResetMs, tokensUsed, tokensResetMs] = await this.redis.admitUnderKeyLimits(
      this.requestsPrefix + keyId,
      this.tokensPrefix + keyId,
      slotsKey,
      limits.requestsPerMinute ?? -1,
      limits.tokensPerMinute ?? -1,
      limits.concurrentRequests ?? -1,
      windowSeconds,
      this.inFlight.lifetimeMs,
      member,
    );
    const taken = refused === Refused.none && limits.concurrentRequests !== null;
    return { refused, requestsUsed, requestsResetMs, tokensUsed, tokensResetMs, release: taken ? this.inFlight.hold(slotsKey, member) : undefined };
  }

  async chargeTokens(keyId: string, tokens: number): Promise<void> {
    await this.redis.chargeKeyTokens(this.tokensPrefix + keyId, tokens, windowSeconds);
  }
}
