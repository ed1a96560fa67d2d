import {
  BrokenCircuitError,
  type CircuitBreakerPolicy,
  CircuitState,
  circuitBreaker,
  handleWhen,
  type IBreaker,
} from 'cockatiel';
import type { BreakerState, RowRef } from '../domain/provider-rows.ts';
import { UpstreamHttpError } from '../domain/upstream-failure.ts';
import { worthFallingBack } from './fallback.ts';

export interface BreakerSettings {
  /** Failures in a row (unreachable, timed out, 429 or 5xx before the first byte) that open a row's breaker. */
  failures: number;
  /** Distinct accounts those failures must come from: one tenant's requests cannot open a row for the others. */
  minAccounts: number;
  /** How long an open row is skipped before one request probes it. */
  cooldownMs: number;
  /** The failures that open a row all fall within this span; `cooldownMs` unless set. */
  windowMs?: number;
}

/** The row's breaker is open, or its one probe is under way: the row is skipped, not waited for. */
export class RowUnavailable extends Error {
  constructor(
    readonly row: RowRef,
    /** Milliseconds until the row may be probed again (0 while a probe runs). */
    readonly retryInMs: number,
  ) {
    super(`provider row ${row.providerId}/${row.upstreamModel} is skipped: its breaker is open`);
    this.name = 'RowUnavailable';
  }
}

/**
 * A probe that failed before the upstream answered (the gateway refused what it would have sent, say): it
 * says nothing of the row, and cockatiel would close the breaker on an error its policy does not handle.
 */
class InconclusiveProbe extends Error {
  constructor(readonly failure: unknown) {
    super('the probe of a provider row failed before the upstream answered');
    this.name = 'InconclusiveProbe';
  }
}

const states: Record<CircuitState, BreakerState> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
  [CircuitState.Isolated]: 'open',
};

/**
 * The rule that opens a row's breaker, as cockatiel's `IBreaker`: `failures` failures of the provider in a row
 * (no success between them), all within `windowMs`, from at least `minAccounts` distinct accounts. A request
 * whose content makes the upstream fail fails for its own account only, so one tenant never opens a row for
 * everyone; an outage fails everyone's requests. cockatiel tells a breaker only that a call failed, not whose
 * call it was, so `ProviderBreakers.run` records each failure here (with its account) before cockatiel asks.
 * Memory is bounded by the settings, whatever the rate of failures: only the latest `failures` times and the
 * latest `minAccounts` accounts are kept, which is all the rule needs.
 */
export class AccountSpreadBreaker implements IBreaker {
  /** Times of the latest failures in a row, oldest first, at most `failures` of them. */
  private times: number[] = [];
  /** The accounts of the latest failures in a row, each with the time of its latest one, least recent first; at most `minAccounts`. */
  private readonly accounts = new Map<string, number>();

  constructor(
    private readonly settings: { failures: number; minAccounts: number; windowMs: number },
    private readonly now: () => number = Date.now,
  ) {}

  /** What the rule holds, for cockatiel's `toJSON`. */
  get state(): unknown {
    return { times: [...this.times], accounts: Object.fromEntries(this.accounts) };
  }

  /** Never restored: breakers live in one process's memory and cockatiel is given no saved state to restore. */
  set state(_saved: unknown) {}

  /** A failure of the provider on a call of `accountId`'s, seen now. */
  record(accountId: string): void {
    const at = this.now();
    this.times.push(at);
    if (this.times.length > this.settings.failures) this.times.shift();
    this.accounts.delete(accountId);
    this.accounts.set(accountId, at);
    if (this.accounts.size > this.settings.minAccounts) this.accounts.delete(this.accounts.keys().next().value!);
  }

  success(): void {
    this.times = [];
    this.accounts.clear();
  }

  failure(state: CircuitState): boolean {
    // A probe that failed opens the row again, whoever sent it.
    if (state !== CircuitState.Closed) return true;
    const since = this.now() - this.settings.windowMs;
    const [oldestTime] = this.times;
    const [oldestAccount] = this.accounts.values();
    return (
      this.times.length >= this.settings.failures &&
      oldestTime! >= since &&
      this.accounts.size >= this.settings.minAccounts &&
      oldestAccount! >= since
    );
  }
}

interface Breaker {
  policy: CircuitBreakerPolicy;
  rule: AccountSpreadBreaker;
  openedAt: number;
}

/** The key a breaker is of when the caller names none: a provider's single `apiKey`. */
const defaultKey = 'default';

/** Worst first: a row or key is as available as its best breaker, and shown as its worst. */
const severity: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

/**
 * One circuit breaker per provider row and upstream key (`keyId`, the provider's single key when absent), in this process: after `failures` upstream failures in a row from at
 * least `minAccounts` accounts, within `windowMs`, the row is skipped for `cooldownMs`, then exactly one request
 * probes it while the others go on to the next row; the probe's success closes the breaker, its failure opens
 * it again. Only failures that another row might not share count (the ones a request falls back on); an
 * upstream's 4xx answer shows the row is alive. A streamed call counts as a success once its first byte is in.
 * A row is skipped only when the caller says another row may serve the request (`maySkip`); otherwise the call
 * goes to it regardless, so a breaker never replaces an upstream's answer with one of the gateway's.
 */
export class ProviderBreakers {
  /** By provider, upstream model, then key id: lookups on strings the catalog already holds, no key built per call. */
  private readonly breakers = new Map<string, Map<string, Map<string, Breaker>>>();

  constructor(
    private settings: BreakerSettings,
    private readonly onChange: (row: RowRef & { keyId: string }, state: BreakerState) => void,
  ) {}

  /**
   * The settings of a reloaded configuration. Breakers count failures under the rule they were made with, so
   * when the rule changes every row starts again closed under the new one.
   */
  reconfigure(settings: BreakerSettings): void {
    const { failures, minAccounts, cooldownMs, windowMs } = this.settings;
    if (
      settings.failures === failures &&
      settings.minAccounts === minAccounts &&
      settings.cooldownMs === cooldownMs &&
      settings.windowMs === windowMs
    )
      return;
    this.settings = settings;
    this.breakers.clear();
  }

  /**
   * Calls `attempt` through the row's breaker for a request of `accountId`. With the row's breaker open (or its
   * one probe under way) it throws `RowUnavailable` when `maySkip` (the default), and otherwise calls `attempt`
   * outside the breaker: the row is the request's only chance, and the probe after the cooldown decides the
   * row's state.
   */
  async run<T>(
    {
      row,
      keyId = defaultKey,
      accountId,
      maySkip = true,
    }: { row: RowRef; keyId?: string; accountId: string; maySkip?: boolean },
    attempt: () => Promise<T>,
  ): Promise<T> {
    const breaker = this.breakerOf(row, keyId);
    if (!this.isAvailable(breaker)) {
      if (maySkip) throw this.unavailable(row, breaker);
      return attempt();
    }
    const counted = async (): Promise<T> => {
      try {
        return await attempt();
      } catch (error) {
        // Recorded before cockatiel asks the rule whether to open (it does once this function has thrown).
        if (worthFallingBack(error)) breaker.rule.record(accountId);
        throw error;
      }
    };
    const state = breaker.policy.state;
    try {
      // An open row past its cooldown: this call is the probe. Only an upstream's answer closes the breaker;
      // a failure before one counts as a failed probe, so the row is not taken back untested.
      return await breaker.policy.execute(state === CircuitState.Open ? () => probe(counted) : counted);
    } catch (error) {
      if (error instanceof BrokenCircuitError) {
        if (maySkip) throw this.unavailable(row, breaker);
        return attempt();
      }
      throw error instanceof InconclusiveProbe ? error.failure : error;
    }
  }

  /**
   * Whether a call of the row with the key (the provider's single key when absent) would be sent now: its
   * breaker is closed, or open past its cooldown with no probe yet.
   */
  available(row: RowRef, keyId = defaultKey): boolean {
    const breaker = this.breakers.get(row.providerId)?.get(row.upstreamModel)?.get(keyId);
    return breaker === undefined || this.isAvailable(breaker);
  }

  /**
   * Every row that has had a breaker, with its state (for metrics and readiness): the state of its best key's
   * breaker, as a row serves while any of its keys does.
   */
  states(): Array<RowRef & { state: BreakerState }> {
    return [...this.breakers.entries()].flatMap(([providerId, byModel]) =>
      [...byModel.entries()].map(([upstreamModel, byKey]) => ({
        providerId,
        upstreamModel,
        state: [...byKey.values()]
          .map((breaker) => states[breaker.policy.state])
          .reduce((best, state) => (severity[state] < severity[best] ? state : best), 'open'),
      })),
    );
  }

  /** The state of each of a provider's keys that has had a breaker: the worst over the rows it was used on. */
  keyStates(providerId: string): Map<string, BreakerState> {
    const worst = new Map<string, BreakerState>();
    for (const byKey of this.breakers.get(providerId)?.values() ?? []) {
      for (const [keyId, breaker] of byKey) {
        const state = states[breaker.policy.state];
        const known = worst.get(keyId);
        if (known === undefined || severity[state] > severity[known]) worst.set(keyId, state);
      }
    }
    return worst;
  }

  private isAvailable(breaker: Breaker): boolean {
    const state = breaker.policy.state;
    if (state === CircuitState.Closed) return true;
    // cockatiel makes concurrent callers wait for a half-open probe; here they go to the next row instead.
    return state === CircuitState.Open && Date.now() - breaker.openedAt >= this.settings.cooldownMs;
  }

  private unavailable(row: RowRef, breaker: Breaker): RowUnavailable {
    const probing = breaker.policy.state === CircuitState.HalfOpen;
    return new RowUnavailable(row, probing ? 0 : Math.max(0, breaker.openedAt + this.settings.cooldownMs - Date.now()));
  }

  private breakerOf(row: RowRef, keyId: string): Breaker {
    let byModel = this.breakers.get(row.providerId);
    if (!byModel) {
      byModel = new Map();
      this.breakers.set(row.providerId, byModel);
    }
    let byKey = byModel.get(row.upstreamModel);
    if (!byKey) {
      byKey = new Map();
      byModel.set(row.upstreamModel, byKey);
    }
    let breaker = byKey.get(keyId);
    if (!breaker) {
      const { failures, minAccounts, cooldownMs, windowMs = cooldownMs } = this.settings;
      const rule = new AccountSpreadBreaker({ failures, minAccounts, windowMs });
      const policy = circuitBreaker(
        handleWhen((error) => error instanceof InconclusiveProbe || worthFallingBack(error)),
        { halfOpenAfter: cooldownMs, breaker: rule },
      );
      const created: Breaker = { policy, rule, openedAt: 0 };
      const ref = { providerId: row.providerId, upstreamModel: row.upstreamModel, keyId };
      policy.onBreak(() => (created.openedAt = Date.now()));
      policy.onStateChange((state) => this.onChange(ref, states[state]));
      byKey.set(keyId, created);
      breaker = created;
    }
    return breaker;
  }
}

/** A probe's attempt, its failures before any upstream answer made inconclusive. */
async function probe<T>(attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    throw error instanceof UpstreamHttpError || worthFallingBack(error) ? error : new InconclusiveProbe(error);
  }
}
