import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitStore } from '../../billing/rate-limits.ts';
import { GatewayError } from '../../domain/errors.ts';
import type { AccountAbuseLimits } from '../../config/load-config.ts';

/** A refusal of the throttle: 429 in the envelope, with the seconds to wait for the `retry-after` header. */
export class ThrottledError extends GatewayError {
  constructor(message: string, retryAfterSeconds: number) {
    super('GW_TOO_MANY_ATTEMPTS', `${message}: try again in ${retryAfterSeconds} seconds`);
    this.retryAfter(retryAfterSeconds);
  }
}

/**
 * Password guessing and mass signups: failed logins per email and per client address, signups per client
 * address, each in a fixed window, counted by the limiter library of the per-key rate limits (in memory, or in
 * Redis shared by every process when REDIS_URL is set). Each count is one atomic increment, so attempts in
 * flight together cannot all pass before the first one fails. While Redis does not answer, each process counts
 * in its own memory (the library's insurance limiter), whatever `rateLimits.redisFailure` says: password
 * guessing stays throttled, per process, and sign-in stays open.
 */
export class SignInThrottle {
  private readonly failuresByEmail: RateLimiterAbstract;
  private readonly failuresByAddress: RateLimiterAbstract;
  private readonly signupsByAddress: RateLimiterAbstract;

  constructor(
    limits: AccountAbuseLimits,
    private readonly store: RateLimitStore,
  ) {
    const window = limits.throttleWindowSeconds;
    this.failuresByEmail = store.counter('login-email', {
      points: limits.loginFailuresPerEmail,
      durationSeconds: window,
      insured: true,
    });
    this.failuresByAddress = store.counter('login-address', {
      points: limits.loginFailuresPerAddress,
      durationSeconds: window,
      insured: true,
    });
    this.signupsByAddress = store.counter('signup-address', {
      points: limits.signupsPerAddress,
      durationSeconds: window,
      insured: true,
    });
  }

  /**
   * Refuses a login before any password is checked when the email or the address has failed too often, else
   * counts it as a failure until it succeeds. A refused attempt is not counted.
   */
  async beginLogin(email: string, address: string): Promise<void> {
    await this.begin(email, address, 'logins');
  }

  /**
   * A change of password, which proves the current password as a login does: counted against the same
   * failures of the account's email and of the address (guesses there and at login share one budget), and
   * ended like a login with `loginSucceeded` or `loginAbandoned` (a wrong password stays counted).
   */
  async beginPasswordCheck(email: string, address: string): Promise<void> {
    await this.begin(email, address, 'password checks');
  }

  private async begin(email: string, address: string, attempts: string): Promise<void> {
    const byEmail = await this.take(this.failuresByEmail, email);
    if (byEmail > 0) throw new ThrottledError(`too many failed ${attempts} for this email`, byEmail);
    const byAddress = await this.take(this.failuresByAddress, address);
    if (byAddress > 0) {
      await this.giveBack(this.failuresByEmail, email);
      throw new ThrottledError(`too many failed ${attempts} from this address`, byAddress);
    }
  }

  /**
   * The right password clears its email's failures and takes back its own count from the address; the
   * address keeps its other failures, so it cannot launder guesses at other emails.
   */
  async loginSucceeded(email: string, address: string): Promise<void> {
    await this.guarded(this.failuresByEmail.delete(email));
    await this.giveBack(this.failuresByAddress, address);
  }

  /** A login that failed for another reason than the password (storage down, say) does not count. */
  async loginAbandoned(email: string, address: string): Promise<void> {
    await this.giveBack(this.failuresByEmail, email);
    await this.giveBack(this.failuresByAddress, address);
  }

  /** Counts a signup attempt, refusing it when the address has made too many. */
  async admitSignup(address: string): Promise<void> {
    const wait = await this.take(this.signupsByAddress, address);
    if (wait > 0) throw new ThrottledError('too many signups from this address', wait);
  }

  /** Counts one attempt: 0 when it is within the limit, else the seconds to wait (the refused attempt given back). */
  private async take(counter: RateLimiterAbstract, key: string): Promise<number> {
    try {
      // Not a sign that Redis answered: the insurance limiter may have counted this one.
      await counter.consume(key, 1);
      return 0;
    } catch (outcome) {
      // The library refuses with where the counter stands; anything else is its store failing (insurance too).
      if (!(outcome instanceof RateLimiterRes)) return this.storeDown(outcome);
      await this.giveBack(counter, key);
      return Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
    }
  }

  /** Takes back one count; a window that ended meanwhile is not left below zero. */
  private async giveBack(counter: RateLimiterAbstract, key: string): Promise<void> {
    await this.guarded(
      counter.reward(key, 1).then(async (after) => {
        if (after.consumedPoints < 0) await counter.delete(key);
      }),
    );
  }

  private async guarded(operation: Promise<unknown>): Promise<void> {
    try {
      await operation;
    } catch (error) {
      this.store.failed(error);
    }
  }

  private storeDown(error: unknown): number {
    this.store.failed(error);
    if (this.store.failOpen) return 0;
    throw this.store.unavailable();
  }
}
