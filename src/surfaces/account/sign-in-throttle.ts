import { GatewayError } from '../../domain/errors.ts';
import type { AccountAbuseLimits } from '../../config/load-config.ts';
import { AttemptCounter } from '../../http/attempt-counter.ts';

/** A refusal of the throttle: 429 in the envelope, with the seconds to wait for the `retry-after` header. */
export class ThrottledError extends GatewayError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('GW_TOO_MANY_ATTEMPTS', `${message}: try again in ${retryAfterSeconds} seconds`);
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

  /** Refuses a login before any password is checked when the email or the address has failed too often. */
  checkLogin(email: string, address: string): void {
    const byEmail = this.failuresByEmail.retryAfterSeconds(email);
    if (byEmail > 0) throw new ThrottledError('too many failed logins for this email', byEmail);
    const byAddress = this.failuresByAddress.retryAfterSeconds(address);
    if (byAddress > 0) throw new ThrottledError('too many failed logins from this address', byAddress);
  }

  loginFailed(email: string, address: string): void {
    this.failuresByEmail.record(email);
    this.failuresByAddress.record(address);
  }

  /** The right password clears its email's failures; the address keeps its count, so it cannot launder guesses at other emails. */
  loginSucceeded(email: string): void {
    this.failuresByEmail.forget(email);
  }

  /** Counts a signup attempt, refusing it when the address has made too many. */
  admitSignup(address: string): void {
    const wait = this.signupsByAddress.retryAfterSeconds(address);
    if (wait > 0) throw new ThrottledError('too many signups from this address', wait);
    this.signupsByAddress.record(address);
  }
}
