import { randomUUID } from 'node:crypto';
import type { Redis, Result } from 'ioredis';
import { type Counted, type CountedLimits, type KeyCounters, Refused, windowSeconds } from './key-counters.ts';
import { clockLua, type RedisRequestsInFlight, type StoreOutcomes } from './requests-in-flight.ts';

/**
 * How much of a key's limit one process takes from Redis at a time: a 64th of it. A round trip to Redis costs
 * a request more of the gateway's CPU than the rest of the limiter (bench/RESULTS.md), so a process takes a
 * block of the minute's requests and a few spare slots in flight, and admits from them locally until they are
 * used up. What a process holds and does not use is what other processes cannot have: at most a 64th of each
 * limit per process, and nothing at all for limits under 64 (every admission asks Redis, as exactly as before).
 */
const leaseShare = 64;
const maxRequestsBlock = 1000;
const maxSpareSlots = 64;

/** Requests a process takes from its key's minute at once (this request's own included). */
export function requestsBlockOf(limit: number): number {
  return Math.max(1, Math.min(maxRequestsBlock, Math.floor(limit / leaseShare)));
}

/** Slots in flight a process keeps taken in Redis beyond those in use, ready for its next admissions. */
export function spareSlotsOf(limit: number): number {
  return Math.min(maxSpareSlots, Math.floor(limit / leaseShare));
}

/**
 * How long the tokens a key spent in its minute, as read from Redis and added to with this process's own
 * settlements, decide admissions here without asking again: another process's settlements are seen within it.
 */
export const tokensReadingMaxAgeMs = 1_000;

/** Token charges wait at most this long to be sent, added up per key (see `RedisKeyCounters.wait`). */
const tokensSendIntervalMs = 100;

/** Spare slots of a key not admitted for this long go back to Redis, for other processes to take. */
const idleSlotsReturnMs = 5_000;

/**
 * Requests of a block go back to their minute only while it has this long left to run: a give-back cannot land
 * in the next minute, which did not count them.
 */
const giveBackMarginMs = 1_000;

/** Most keys whose blocks a process keeps; past it they are given back and forgotten (they are only asked for again). */
const maxLeases = 100_000;

/**
 * Releases of slots, charges of tokens and requests given back waiting to be sent, applied in the order they
 * came: KEYS from `firstKey` on, two ARGV each from `firstArg` on (`r` and the slot's member, `c` and the
 * tokens, or `g` and the requests). A charge adds to the key's minute as the limiter library's Redis counter
 * does; requests given back come off the minute that counted them, while it runs, never below 0.
 */
const settleLua = `local function settle(firstKey, firstArg, window)
  local a = firstArg
  for i = firstKey, #KEYS do
    if ARGV[a] == 'r' then
      redis.call('ZREM', KEYS[i], ARGV[a + 1])
    elseif ARGV[a] == 'g' then
      if redis.call('PTTL', KEYS[i]) > 0 then
        local left = redis.call('DECRBY', KEYS[i], ARGV[a + 1])
        if left < 0 then redis.call('INCRBY', KEYS[i], -left) end
      end
    else
      redis.call('SET', KEYS[i], 0, 'EX', window, 'NX')
      redis.call('INCRBY', KEYS[i], ARGV[a + 1])
      if redis.call('PTTL', KEYS[i]) == -1 then redis.call('EXPIRE', KEYS[i], window) end
    end
    a = a + 2
  end
end`;

/**
 * One admission that cannot be decided locally is one script, one round trip: it takes a block of the minute's
 * requests, reads the tokens spent in the minute and takes slots in flight, deciding atomically. The counters
 * are the limiter library's keys and values and the slots the sorted sets of requests-in-flight.ts, so
 * processes of earlier versions count together with these. A block is what is left of the limit when less
 * than asked is; a request refused is counted all the same (one request). Limits the key does not have are
 * passed as -1 and left alone; a block of 0 asked (this process still holds some) only reads. The releases and
 * charges this process has not sent yet go first, in the same script. The script touches several keys, so it
 * needs one Redis server, not a cluster (as the connection made in rate-limits.ts is).
 *
 * KEYS: requests counter, tokens counter, slots in flight, then the settlements'. ARGV: requests limit, tokens
 * limit, slots limit, the window's seconds, a slot's lifetime (ms), requests asked, slots asked, the slots'
 * member prefix, then the settlements'. Answers {refused (as `Refused`), requests counted, requests reset ms,
 * tokens spent, tokens reset ms, requests granted, slots granted}; slot i granted is `<prefix>:<i>`, from 1.
 */
const admitLua = `${settleLua}
settle(4, 9, ARGV[4])
local requests, requestsTtl, tokens, tokensTtl, requestsGranted, slotsGranted = 0, 0, 0, 0, 0, 0
local requestsLimit, tokensLimit, slotsLimit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local requestsAsked, slotsAsked = tonumber(ARGV[6]), tonumber(ARGV[7])
if requestsLimit >= 0 then
  redis.call('SET', KEYS[1], 0, 'EX', ARGV[4], 'NX')
  requests = tonumber(redis.call('GET', KEYS[1]))
  if requestsAsked > 0 then
    requestsGranted = math.max(0, math.min(requestsAsked, requestsLimit - requests))
    requests = redis.call('INCRBY', KEYS[1], math.max(1, requestsGranted))
  end
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
local function answer(refused) return {refused, requests, requestsTtl, tokens, tokensTtl, requestsGranted, slotsGranted} end
if requestsAsked > 0 and requestsGranted == 0 then return answer(1) end
if tokensLimit >= 0 and tokens >= tokensLimit then return answer(2) end
if slotsAsked > 0 then
  ${clockLua}
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  slotsGranted = math.max(0, math.min(slotsAsked, slotsLimit - redis.call('ZCARD', KEYS[3])))
  if slotsGranted == 0 then return answer(3) end
  for i = 1, slotsGranted do redis.call('ZADD', KEYS[3], now + tonumber(ARGV[5]), ARGV[8] .. ':' .. i) end
  redis.call('PEXPIRE', KEYS[3], ARGV[5])
end
return answer(0)`;

/** Settlements alone, when no admission took them along. ARGV[1]: the window's seconds. */
const settleAloneLua = `${settleLua}
settle(1, 2, ARGV[1])
return 1`;

type AdmitAnswer = [
  refused: Refused,
  requestsCounted: number,
  requestsResetMs: number,
  tokensSpent: number,
  tokensResetMs: number,
  requestsGranted: number,
  slotsGranted: number,
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

/** What this process holds of one key's limits, taken from Redis. Times are `Date.now()` milliseconds. */
interface KeyLease {
  /** The limits it was taken under: a change of them takes the key back to Redis. */
  limits: CountedLimits;
  /** Requests of the block not yet admitted, and the minute's counter in Redis when the block was taken. */
  requestsLeft: number;
  requestsCounted: number;
  requestsResetAt: number;
  /** Tokens spent in the minute as last read, plus this process's settlements since. */
  tokensSpent: number;
  tokensReadAt: number;
  tokensResetAt: number;
  /** Slots taken in Redis and not in use (their members). */
  spareSlots: string[];
  lastAdmittedAt: number;
  /** An admission asking Redis for this key now: others wait for it rather than each taking a block. */
  asking: Promise<unknown> | undefined;
}

/**
 * Redis shared by the gateway's processes, with blocks of each key's limits held locally (see `leaseShare`):
 * most admissions of a busy key are decided in this process's memory, and those that are not ask Redis in
 * one script. Releases and token charges, which nobody waits for, are not a command each: they wait for the
 * next script, which applies them first, or go together in one script soon after (see `wait`). Either way
 * they reach Redis before any admission this process asks it for after them.
 */
export class RedisKeyCounters implements KeyCounters {
  private readonly requestsPrefix: string;
  private readonly tokensPrefix: string;
  private readonly leases = new Map<string, KeyLease>();
  /** Settlements waiting: their keys, and two arguments each (see `settleLua`). */
  private waitingKeys: string[] = [];
  private waitingArgs: (string | number)[] = [];
  private waitingDone: Deferred | undefined;
  /** Where each key's waiting token charge is in `waitingArgs`, to add to it. */
  private readonly chargeAt = new Map<string, number>();
  private sendSoon = false;
  private sendLater: NodeJS.Timeout | undefined;
  private readonly idleReturn: NodeJS.Timeout;

  private readonly redis: Redis;
  private readonly inFlight: RedisRequestsInFlight;
  private readonly outcomes: StoreOutcomes;

  constructor({
    redis,
    keyPrefix,
    inFlight,
    outcomes,
  }: {
    redis: Redis;
    keyPrefix: string;
    inFlight: RedisRequestsInFlight;
    outcomes: StoreOutcomes;
  }) {
    this.redis = redis;
    this.inFlight = inFlight;
    this.outcomes = outcomes;
    this.requestsPrefix = `${keyPrefix}:rpm:`;
    this.tokensPrefix = `${keyPrefix}:tpm:`;
    redis.defineCommand('admitUnderKeyLimits', { lua: admitLua });
    redis.defineCommand('settleKeyLimits', { lua: settleAloneLua });
    this.idleReturn = setInterval(() => this.returnIdleSlots(Date.now() - idleSlotsReturnMs), idleSlotsReturnMs);
    this.idleReturn.unref();
  }

  async admit(keyId: string, limits: CountedLimits): Promise<Counted> {
    let lease = this.leaseOf(keyId, limits);
    // Admissions waiting for the same answer wake one after another: each checks again whether another asks now.
    while (lease.asking && sharesAnAnswer(limits)) {
      await lease.asking.catch(() => undefined);
      lease = this.leaseOf(keyId, limits);
    }
    const now = Date.now();
    if (coversLocally(lease, limits, now)) return this.admitLocally(keyId, lease, now);
    const asking = this.ask(keyId, lease, limits);
    lease.asking = asking;
    try {
      return await asking;
    } finally {
      if (lease.asking === asking) lease.asking = undefined;
    }
  }

  chargeTokens(keyId: string, tokens: number): Promise<void> {
    const lease = this.leases.get(keyId);
    if (lease) lease.tokensSpent += tokens;
    return this.wait(this.tokensPrefix + keyId, 'c', tokens);
  }

  /** Gives back every spare slot and sends the settlements waiting now, before the connection closes. */
  close(): Promise<void> {
    clearInterval(this.idleReturn);
    this.returnIdleSlots(Number.POSITIVE_INFINITY);
    return this.sendWaiting();
  }

  /** The key's lease, made empty for a key seen first; limits that changed make it ask Redis again. */
  private leaseOf(keyId: string, limits: CountedLimits): KeyLease {
    const known = this.leases.get(keyId);
    if (known) {
      if (!sameLimits(known.limits, limits)) this.retake(keyId, known, limits);
      return known;
    }
    if (this.leases.size >= maxLeases) {
      this.returnIdleSlots(Number.POSITIVE_INFINITY);
      this.leases.clear();
    }
    const lease: KeyLease = {
      limits,
      requestsLeft: 0,
      requestsCounted: 0,
      requestsResetAt: 0,
      tokensSpent: 0,
      tokensReadAt: Number.NEGATIVE_INFINITY,
      tokensResetAt: 0,
      spareSlots: [],
      lastAdmittedAt: 0,
      asking: undefined,
    };
    this.leases.set(keyId, lease);
    return lease;
  }

  /**
   * A key whose limits changed: nothing held under the old ones is used under the new ones. The requests of its
   * block go back to the minute, which counted them unmade: kept, they would refuse the key under a lowered limit
   * it has not reached.
   */
  private retake(keyId: string, lease: KeyLease, limits: CountedLimits): void {
    lease.limits = limits;
    // An admission asking Redis now without a block of its own (for its tokens' reading, say) takes its request
    // out of this one: that request stays counted.
    const spare = lease.requestsLeft - (lease.asking === undefined ? 0 : 1);
    if (this.giveBack(keyId, spare, lease.requestsResetAt)) lease.requestsCounted -= spare;
    lease.requestsLeft = 0;
    lease.tokensReadAt = Number.NEGATIVE_INFINITY;
    this.returnSlots(keyId, lease.spareSlots.splice(0));
  }

  /**
   * Gives `requests` the key's minute counted and that were never made back to it, unless the minute ends at
   * `resetAt` too soon (the give-back could land in the next one); whether it did. Not given back, the minute
   * counts them until it ends.
   */
  private giveBack(keyId: string, requests: number, resetAt: number): boolean {
    if (requests <= 0 || resetAt - Date.now() <= giveBackMarginMs) return false;
    this.wait(this.requestsPrefix + keyId, 'g', requests).then(
      () => this.outcomes.answered(),
      (error: unknown) => this.outcomes.failed(error),
    );
    return true;
  }

  private admitLocally(keyId: string, lease: KeyLease, now: number): Counted {
    const { limits } = lease;
    lease.lastAdmittedAt = now;
    if (limits.requestsPerMinute !== null) lease.requestsLeft -= 1;
    const member = limits.concurrentRequests === null ? undefined : lease.spareSlots.pop();
    return {
      refused: Refused.none,
      requestsUsed: lease.requestsCounted - lease.requestsLeft,
      requestsResetMs: limits.requestsPerMinute === null ? 0 : lease.requestsResetAt - now,
      tokensUsed: lease.tokensSpent,
      tokensResetMs: limits.tokensPerMinute === null ? 0 : lease.tokensResetAt - now,
      release: member === undefined ? undefined : () => this.releaseSlot(keyId, member),
    };
  }

  /** The admission asks Redis for what this process lacks: a block of requests, the tokens spent, slots. */
  private async ask(keyId: string, lease: KeyLease, limits: CountedLimits): Promise<Counted> {
    const under = lease.limits;
    const now = Date.now();
    const requestsAsked =
      limits.requestsPerMinute !== null && (lease.requestsLeft <= 0 || now >= lease.requestsResetAt)
        ? requestsBlockOf(limits.requestsPerMinute)
        : 0;
    const slotsAsked =
      limits.concurrentRequests !== null && lease.spareSlots.length === 0
        ? 1 + spareSlotsOf(limits.concurrentRequests)
        : 0;
    const memberPrefix = slotsAsked > 0 ? randomUUID() : '';
    const settled = this.takeWaiting();
    let answer: AdmitAnswer;
    try {
      answer = await this.redis.admitUnderKeyLimits(
        3 + settled.keys.length,
        this.requestsPrefix + keyId,
        this.tokensPrefix + keyId,
        this.inFlight.keyOf(keyId),
        ...settled.keys,
        limits.requestsPerMinute ?? -1,
        limits.tokensPerMinute ?? -1,
        limits.concurrentRequests ?? -1,
        windowSeconds,
        this.inFlight.lifetimeMs,
        requestsAsked,
        slotsAsked,
        memberPrefix,
        ...settled.args,
      );
    } catch (error) {
      settled.done?.reject(error);
      throw error;
    }
    settled.done?.resolve();
    const [refused, requestsCounted, requestsResetMs, tokensSpent, tokensResetMs, requestsGranted, slotsGranted] =
      answer;
    const answeredAt = Date.now();
    const slotsKey = this.inFlight.keyOf(keyId);
    if (this.leases.get(keyId) !== lease || lease.limits !== under) {
      // The key's limits changed (or it was forgotten) while Redis answered: only this request's own slot and its
      // own request are kept; the rest of the block goes back to the minute, which counted it unmade.
      const spare = requestsGranted - 1;
      const givenBack = this.giveBack(keyId, spare, answeredAt + requestsResetMs) ? spare : 0;
      const members = grantedMembers(memberPrefix, slotsGranted);
      const own = refused === Refused.none ? members.shift() : undefined;
      this.returnSlots(keyId, members);
      if (own !== undefined) this.inFlight.keep(slotsKey, own);
      const release = own === undefined ? undefined : () => this.releaseSlot(keyId, own);
      return {
        refused,
        requestsUsed: requestsCounted - givenBack,
        requestsResetMs,
        tokensUsed: tokensSpent,
        tokensResetMs,
        release,
      };
    }
    if (limits.requestsPerMinute !== null) {
      // Blocks granted to asks of the same minute add up; a new minute starts from what was granted in it.
      if (answeredAt >= lease.requestsResetAt) {
        lease.requestsLeft = requestsGranted;
        lease.requestsCounted = requestsCounted;
      } else {
        lease.requestsLeft += requestsGranted;
        lease.requestsCounted = Math.max(lease.requestsCounted, requestsCounted);
      }
      lease.requestsResetAt = answeredAt + requestsResetMs;
    }
    if (limits.tokensPerMinute !== null) {
      lease.tokensSpent = tokensSpent;
      lease.tokensReadAt = answeredAt;
      lease.tokensResetAt = answeredAt + tokensResetMs;
    }
    for (const member of grantedMembers(memberPrefix, slotsGranted)) {
      this.inFlight.keep(slotsKey, member);
      lease.spareSlots.push(member);
    }
    if (refused === Refused.none) return this.admitLocally(keyId, lease, answeredAt);
    // Refused: counted all the same (the script counted a request refused on requests; one of the block otherwise).
    if (refused !== Refused.requests && limits.requestsPerMinute !== null) lease.requestsLeft -= 1;
    return {
      refused,
      requestsUsed: lease.requestsCounted - Math.max(0, lease.requestsLeft),
      requestsResetMs: lease.requestsResetAt - answeredAt,
      tokensUsed: lease.tokensSpent,
      tokensResetMs: limits.tokensPerMinute === null ? 0 : lease.tokensResetAt - answeredAt,
      release: undefined,
    };
  }

  /** A slot given back: kept as a spare while the key may have more, else taken out of Redis. */
  private releaseSlot(keyId: string, member: string): void {
    const lease = this.leases.get(keyId);
    const limit = lease?.limits.concurrentRequests ?? null;
    if (lease && limit !== null && lease.spareSlots.length < spareSlotsOf(limit)) {
      lease.spareSlots.push(member);
      return;
    }
    this.returnSlots(keyId, [member]);
  }

  private returnSlots(keyId: string, members: readonly string[]): void {
    const slotsKey = this.inFlight.keyOf(keyId);
    for (const member of members) {
      this.inFlight.forget(member);
      this.wait(slotsKey, 'r', member).then(
        () => this.outcomes.answered(),
        // The slot expires on its own within its lifetime, no longer renewed.
        (error: unknown) => this.outcomes.failed(error),
      );
    }
  }

  /** Spare slots of keys not admitted since `admittedBefore` go back, for other processes to take. */
  private returnIdleSlots(admittedBefore: number): void {
    for (const [keyId, lease] of this.leases) {
      if (lease.spareSlots.length > 0 && lease.lastAdmittedAt < admittedBefore) {
        this.returnSlots(keyId, lease.spareSlots.splice(0));
      }
      if (lease.asking === undefined && lease.spareSlots.length === 0 && lease.lastAdmittedAt < admittedBefore) {
        this.leases.delete(keyId);
      }
    }
  }

  /**
   * Queues a settlement. A slot's release (and requests given back) goes at the end of this turn of the event
   * loop, so that a key whose slots are all in use gets it back at once; tokens wait up to `tokensSendIntervalMs`, added up per key, as
   * this process counts them at once in its own reading and other processes read them at most once a
   * `tokensReadingMaxAgeMs` anyway. Either goes sooner with the next script.
   */
  private wait(key: string, kind: 'r' | 'c' | 'g', value: number | string): Promise<void> {
    const charged = kind === 'c' ? this.chargeAt.get(key) : undefined;
    if (charged === undefined) {
      if (kind === 'c') this.chargeAt.set(key, this.waitingArgs.length + 1);
      this.waitingKeys.push(key);
      this.waitingArgs.push(kind, value);
    } else {
      this.waitingArgs[charged] = Number(this.waitingArgs[charged]) + Number(value);
    }
    this.waitingDone ??= deferred();
    const done = this.waitingDone.promise;
    if (this.waitingKeys.length >= maxWaitingSettlements) void this.sendWaiting();
    else if (kind !== 'c') {
      if (!this.sendSoon) {
        this.sendSoon = true;
        setImmediate(() => {
          this.sendSoon = false;
          void this.sendWaiting();
        });
      }
    } else if (!this.sendLater) {
      this.sendLater = setTimeout(() => void this.sendWaiting(), tokensSendIntervalMs);
      this.sendLater.unref();
    }
    return done;
  }

  private sendWaiting(): Promise<void> {
    const settled = this.takeWaiting();
    if (!settled.done) return Promise.resolve();
    this.redis.settleKeyLimits(settled.keys.length, ...settled.keys, windowSeconds, ...settled.args).then(
      () => settled.done?.resolve(),
      (error: unknown) => settled.done?.reject(error),
    );
    return settled.done.promise;
  }

  private takeWaiting(): { keys: string[]; args: (string | number)[]; done: Deferred | undefined } {
    const settled = { keys: this.waitingKeys, args: this.waitingArgs, done: this.waitingDone };
    if (settled.done) {
      this.waitingKeys = [];
      this.waitingArgs = [];
      this.waitingDone = undefined;
      this.chargeAt.clear();
      clearTimeout(this.sendLater);
      this.sendLater = undefined;
    }
    return settled;
  }
}

/** Whether this process can admit under `limits` from what it holds, without asking Redis. */
function coversLocally(lease: KeyLease, limits: CountedLimits, now: number): boolean {
  if (limits.requestsPerMinute !== null && (lease.requestsLeft <= 0 || now >= lease.requestsResetAt)) return false;
  if (
    limits.tokensPerMinute !== null &&
    (now - lease.tokensReadAt >= tokensReadingMaxAgeMs ||
      now >= lease.tokensResetAt ||
      lease.tokensSpent >= limits.tokensPerMinute)
  ) {
    return false;
  }
  return limits.concurrentRequests === null || lease.spareSlots.length > 0;
}

/**
 * Whether an admission asking Redis can leave enough for another of the same key: only then do admissions
 * arriving meanwhile wait for it, rather than each asking (with blocks of one they would wait in line).
 */
function sharesAnAnswer(limits: CountedLimits): boolean {
  return (
    (limits.requestsPerMinute === null || requestsBlockOf(limits.requestsPerMinute) > 1) &&
    (limits.concurrentRequests === null || spareSlotsOf(limits.concurrentRequests) > 0)
  );
}

function sameLimits(a: CountedLimits, b: CountedLimits): boolean {
  return (
    a === b ||
    (a.requestsPerMinute === b.requestsPerMinute &&
      a.tokensPerMinute === b.tokensPerMinute &&
      a.concurrentRequests === b.concurrentRequests)
  );
}

function grantedMembers(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}:${index + 1}`);
}
