import type { Redis, Result } from 'ioredis';

/** Slots of requests in flight per key: taken at admission, given back once when the request ends. */
export interface RequestsInFlight {
  /** Takes one of `keyId`'s slots unless `limit` are taken: the slot's release, or undefined when refused. */
  take(keyId: string, limit: number): Promise<(() => void) | undefined>;
  close(): void;
}

/**
 * One process: a count per key. Taking checks and counts in one synchronous step, so admissions racing each
 * other cannot both pass; a key's entry is removed when its last slot comes back.
 */
export class MemoryRequestsInFlight implements RequestsInFlight {
  private readonly counts = new Map<string, number>();

  take(keyId: string, limit: number): Promise<(() => void) | undefined> {
    const taken = this.counts.get(keyId) ?? 0;
    if (taken >= limit) return Promise.resolve(undefined);
    this.counts.set(keyId, taken + 1);
    return Promise.resolve(() => {
      const left = (this.counts.get(keyId) ?? 1) - 1;
      if (left > 0) this.counts.set(keyId, left);
      else this.counts.delete(keyId);
    });
  }

  close(): void {}
}

/**
 * A slot lives this long in Redis unless its process renews it: a killed process's slots come back within it.
 * Live slots are renewed well before, so a request in flight for longer is never forgotten.
 */
export const slotLifetimeMs = 120_000;
const renewEveryMs = 30_000;

/**
 * Redis's own clock scores every slot, so the processes' clocks need not agree. Taking drops the expired
 * slots, counts the others and adds when under the limit, atomically; renewing re-adds a slot (also one that
 * expired during an outage, so a live request is counted again when Redis answers).
 */
export const clockLua = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

const renewSlotLua = `${clockLua}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    renewSlotInFlight(key: string, lifetimeMs: number, member: string): Result<number, Context>;
  }
}

export interface StoreOutcomes {
  failed(error: unknown): void;
  answered(): void;
}

/**
 * Processes sharing Redis: one sorted-set entry per slot taken (its member names the slot, its score is when it
 * expires), so a release removes exactly its own slot and an expiry never touches the live ones. Slots are
 * taken and removed by the admission's scripts (redis-key-counters.ts); this keeps those of this process alive.
 */
export class RedisRequestsInFlight {
  /** This process's slots held now (member → Redis key), renewed together. */
  private readonly held = new Map<string, string>();
  private readonly renewal: NodeJS.Timeout;

  readonly lifetimeMs: number;

  private readonly redis: Redis;
  private readonly keyPrefix: string;
  private readonly outcomes: StoreOutcomes;

  constructor({
    redis,
    keyPrefix,
    outcomes,
    timing = { lifetimeMs: slotLifetimeMs, renewEveryMs },
  }: {
    redis: Redis;
    keyPrefix: string;
    outcomes: StoreOutcomes;
    timing?: { lifetimeMs: number; renewEveryMs: number };
  }) {
    this.redis = redis;
    this.keyPrefix = keyPrefix;
    this.outcomes = outcomes;
    this.lifetimeMs = timing.lifetimeMs;
    redis.defineCommand('renewSlotInFlight', { numberOfKeys: 1, lua: renewSlotLua });
    this.renewal = setInterval(() => this.renew(), timing.renewEveryMs);
    this.renewal.unref();
  }

  /** The Redis key of `keyId`'s slots. */
  keyOf(keyId: string): string {
    return `${this.keyPrefix}:${keyId}`;
  }

  /** A slot this process holds in Redis under `key`: renewed until forgotten. */
  keep(key: string, member: string): void {
    this.held.set(member, key);
  }

  /** A slot no longer renewed: its remover takes it out of Redis (or it expires within its lifetime). */
  forget(member: string): void {
    this.held.delete(member);
  }

  close(): void {
    clearInterval(this.renewal);
  }

  private renew(): void {
    if (this.held.size === 0) return;
    const batch = this.redis.pipeline();
    for (const [member, key] of this.held) batch.renewSlotInFlight(key, this.lifetimeMs, member);
    batch.exec().then(
      () => this.outcomes.answered(),
      (error: unknown) => this.outcomes.failed(error),
    );
  }
}
