import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RequestsInFlight } from './requests-in-flight.ts';

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
