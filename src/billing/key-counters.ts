import { randomUUID } from 'node:crypto';
import type { Redis, Result } from 'ioredis';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import {
  clockLua,
  takeSlotLua,
  type RedisRequestsInFlight,
  type RequestsInFlight,
  type StoreOutcomes,
} from './requests-in-flight.ts';

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
    if (limits.requestsPerMinute !== null && counted.requestsUsed > limits.requestsPerMinute)
      counted.refused = Refused.requests;
    else if (limits.tokensPerMinute !== null && counted.tokensUsed >= limits.tokensPerMinute)
      counted.refused = Refused.tokens;
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
 * Releases of slots and charges of tokens waiting to be sent, applied in the order they came: KEYS from
 * `firstKey` on, two ARGV each from `firstArg` on (`r` and the slot's member, or `c` and the tokens). A
 * charge adds to the key's minute as the limiter library's Redis counter does.
 */
const settleLua = `local function settle(firstKey, firstArg, window)
  local a = firstArg
  for i = firstKey, #KEYS do
    if ARGV[a] == 'r' then
      redis.call('ZREM', KEYS[i], ARGV[a + 1])
    else
      redis.call('SET', KEYS[i], 0, 'EX', window, 'NX')
      redis.call('INCRBY', KEYS[i], ARGV[a + 1])
      if redis.call('PTTL', KEYS[i]) == -1 then redis.call('EXPIRE', KEYS[i], window) end
    end
    a = a + 2
  end
end`;

/**
 * One admission in Redis is one script, one round trip: it counts the request in its minute, reads the tokens
 * spent in the minute and takes the slot in flight, deciding atomically. Each is what the limiter library's
 * Redis counters and the slot script did as separate commands (the same keys and values, so processes of the
 * version before count together with these), but each command through ioredis costs the gateway 10-35 µs of
 * CPU and the request a round trip: the five of a request with all three limits (three at admission, the
 * token charge, the release) were over half a non-streamed request's own CPU cost (bench/RESULTS.md). Limits
 * the key does not have are passed as -1 and left alone. The releases and charges this process has not sent
 * yet go first, in the same script (see `RedisKeyCounters`). The script touches several keys, so it needs one
 * Redis server, not a cluster (as the connection made in rate-limits.ts is).
 *
 * KEYS: requests counter, tokens counter, slots in flight, then the settlements'. ARGV: requests limit, tokens
 * limit, slots limit, the window's seconds, a slot's lifetime (ms), the slot's member, then the settlements'.
 * Answers {refused, requests used, requests reset ms, tokens used, tokens reset ms}, refused as `Refused`.
 */
const admitLua = `${settleLua}
settle(4, 7, ARGV[4])
local requests, requestsTtl, tokens, tokensTtl = 0, 0, 0, 0
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

/** Settlements alone, when no admission took them along. ARGV[1]: the window's seconds. */
const settleAloneLua = `${settleLua}
settle(1, 2, ARGV[1])
return 1`;

type AdmitAnswer = [
  refused: Refused,
  requestsUsed: number,
  requestsResetMs: number,
  tokensUsed: number,
  tokensResetMs: number,
];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** Keys and arguments as `admitLua` says, after the number of keys. */
    admitUnderKeyLimits(...keysCountKeysAndArguments: (string | number)[]): Result<AdmitAnswer, Context>;
    /** Keys and arguments as `settleAloneLua` says, after the number of keys. */
    settleKeyLimits(...keysCountKeysAndArguments: (string | number)[]): Result<number, Context>;
  }
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((resolved, rejected) => {
    resolve = resolved;
    reject = rejected;
  });
  return { promise, resolve, reject };
}

/** At most this many settlements wait to be sent; more are sent at once. */
const maxWaitingSettlements = 256;

/**
 * Redis shared by the gateway's processes. The keys are the limiter library's (`<prefix>:rpm:<key>`,
 * `<prefix>:tpm:<key>`) and the slots' sorted set (`<prefix>:inflight:<key>`), whose held slots `inFlight`
 * renews. Releases and token charges, which nobody waits for, are not a command each: they wait for the next
 * admission, which applies them first in its own script, or for the end of this turn of the event loop, where
 * they go together in one script. Either way they reach Redis before any admission asked for after them, as
 * separate commands on this one connection did.
 */
export class RedisKeyCounters implements KeyCounters {
  private readonly requestsPrefix: string;
  private readonly tokensPrefix: string;
  /** Settlements waiting: their keys, and two arguments each (see `settleLua`). */
  private waitingKeys: string[] = [];
  private waitingArgs: (string | number)[] = [];
  private waitingDone: Deferred | undefined;
  private flushScheduled = false;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    private readonly inFlight: RedisRequestsInFlight,
    private readonly outcomes: StoreOutcomes,
  ) {
    this.requestsPrefix = `${keyPrefix}:rpm:`;
    this.tokensPrefix = `${keyPrefix}:tpm:`;
    redis.defineCommand('admitUnderKeyLimits', { lua: admitLua });
    redis.defineCommand('settleKeyLimits', { lua: settleAloneLua });
  }

  async admit(keyId: string, limits: CountedLimits): Promise<Counted> {
    const slotsKey = this.inFlight.keyOf(keyId);
    const member = limits.concurrentRequests === null ? '' : randomUUID();
    const settled = this.takeWaiting();
    let answer: AdmitAnswer;
    try {
      answer = await this.redis.admitUnderKeyLimits(
        3 + settled.keys.length,
        this.requestsPrefix + keyId,
        this.tokensPrefix + keyId,
        slotsKey,
        ...settled.keys,
        limits.requestsPerMinute ?? -1,
        limits.tokensPerMinute ?? -1,
        limits.concurrentRequests ?? -1,
        windowSeconds,
        this.inFlight.lifetimeMs,
        member,
        ...settled.args,
      );
    } catch (error) {
      settled.done?.reject(error);
      throw error;
    }
    settled.done?.resolve();
    const [refused, requestsUsed, requestsResetMs, tokensUsed, tokensResetMs] = answer;
    const taken = refused === Refused.none && limits.concurrentRequests !== null;
    return {
      refused,
      requestsUsed,
      requestsResetMs,
      tokensUsed,
      tokensResetMs,
      release: taken ? this.inFlight.hold(slotsKey, member, (key) => this.release(key, member)) : undefined,
    };
  }

  chargeTokens(keyId: string, tokens: number): Promise<void> {
    return this.wait(this.tokensPrefix + keyId, 'c', tokens);
  }

  /** Sends the settlements waiting now (before the connection closes). */
  flush(): Promise<void> {
    const settled = this.takeWaiting();
    if (!settled.done) return Promise.resolve();
    this.redis.settleKeyLimits(settled.keys.length, ...settled.keys, windowSeconds, ...settled.args).then(
      () => settled.done?.resolve(),
      (error: unknown) => settled.done?.reject(error),
    );
    return settled.done.promise;
  }

  private release(key: string, member: string): void {
    this.wait(key, 'r', member).then(
      () => this.outcomes.answered(),
      // The slot expires on its own within its lifetime, no longer renewed.
      (error: unknown) => this.outcomes.failed(error),
    );
  }

  private wait(key: string, kind: 'r' | 'c', value: string | number): Promise<void> {
    this.waitingKeys.push(key);
    this.waitingArgs.push(kind, value);
    this.waitingDone ??= deferred();
    const done = this.waitingDone.promise;
    if (this.waitingKeys.length >= maxWaitingSettlements) void this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        void this.flush();
      });
    }
    return done;
  }

  private takeWaiting(): { keys: string[]; args: (string | number)[]; done: Deferred | undefined } {
    const settled = { keys: this.waitingKeys, args: this.waitingArgs, done: this.waitingDone };
    if (settled.done) {
      this.waitingKeys = [];
      this.waitingArgs = [];
      this.waitingDone = undefined;
    }
    return settled;
  }
}
