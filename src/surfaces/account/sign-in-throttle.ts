import { GatewayError } from '../../domain/errors.ts';
import type { AccountAbuseLimits } from '../../config/load-config.ts';
import { AttemptCounter } from '../../http/attempt-counter.ts';

/** A refusal of the throttle: 429 in the envelope, with the seconds to wait for the `retry-after` header. */
export class ThrottledError extends GatewayError {
  constructor(message: string, retryAfterSeconds: number) {
    super('GW_TOO_MANY_ATTEMPTS', `${message}: try again in ${retryAfterSeconds} seconds`, [], { retryAfterSeconds });
  }
}

/**
 * Password guessing and mass signups, limited in memory per process: failed logins per email and per
 * client address, signups per client address, each in a fixed window.
 */
export class SignInThrottle {
  private readonly failuresByEmail: AttemptCounter;
  private readonly failuresByAddress: AttemptCounter;
  private readonly signupsByAddress: AttemptCounter;

  constructor(limits: AccountAbuseLimits) {
    const common = { windowMs: limits.throttleWindowSeconds * 1000, maxEntries: limits.throttleMaxEntries };
    this.failuresByEmail = new AttemptCounter({ ...common, limit: limits.loginFailuresPerEmail });
    this.failuresByAddress = new AttemptCounter({ ...common, limit: limits.loginFailuresPerAddress });
    this.signupsByAddress = new AttemptCounter({ ...common, limit: limits.signupsPerAddress });
  }

  /**
   * Refuses a login before any password is checked when the email or the address has failed too often, else
   * counts it as a failure until it succeeds: attempts in flight together count against the limit too, so
   * concurrent guesses cannot all pass the check before the first one fails.
   */
  beginLogin(email: string, address: string): void {
    const byEmail = this.failuresByEmail.retryAfterSeconds(email);
    if (byEmail > 0) throw new ThrottledError('too many failed logins for this email', byEmail);
    const byAddress = this.failuresByAddress.retryAfterSeconds(address);
    if (byAddress > 0) throw new ThrottledError('too many failed logins from this address', byAddress);
    this.failuresByEmail.record(email);
    this.failuresByAddress.record(address);
  }

  /**
   * The right password clears its email's failures and takes back its own count from the address; the
   * address keeps its other failures, so it cannot launder guesses at other emails.
   */
  loginSucceeded(email: string, address: string): void {
    this.failuresByEmail.forget(email);
    this.failuresByAddress.unrecord(address);
  }

  /** A login that failed for another reason than the password (storage down, say) does not count. */
  loginAbandoned(email: string, address: string): void {
    this.failuresByEmail.unrecord(email);
    this.failuresByAddress.unrecord(address);
  }

  /** Counts a signup attempt, refusing it when the address has made too many. */
  admitSignup(address: string): void {
    const wait = this.signupsByAddress.retryAfterSeconds(address);
    if (wait > 0) throw new ThrottledError('too many signups from this address', wait);
    this.signupsByAddress.record(address);
  }
}
