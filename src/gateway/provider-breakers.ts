import { BrokenCircuitError, CircuitBreakerPolicy, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen } from 'cockatiel';
import { UpstreamHttpError } from '../domain/upstream-failure.ts';
import { worthFallingBack } from './fallback.ts';

/** A provider row as the breakers know it: the provider and the upstream model it is asked for. */
export interface RowRef {
  providerId: string;
  upstreamModel: string;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerSettings {
  /** Failures in a row (unreachable, timed out, 429 or 5xx before the first byte) that open a row's breaker. */
  failures: number;
  /** How long an open row is skipped before one request probes it. */
  cooldownMs: number;
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

interface Breaker {
  policy: CircuitBreakerPolicy;
  openedAt: number;
}

/**
 * One circuit breaker per provider row, in this process: after `failures` upstream failures in a row the row
 * is skipped for `cooldownMs`, then exactly one request probes it while the others go on to the next row;
 * the probe's success closes the breaker, its failure opens it again. Only failures that another row might
 * not share count (the ones a request falls back on); an upstream's 4xx answer shows the row is alive. A
 * streamed call counts as a success once its first byte is in.
 */
export class ProviderBreakers {
  /** By provider, then upstream model: two lookups on strings the catalog already holds, no key built per call. */
  private readonly breakers = new Map<string, Map<string, Breaker>>();

  constructor(
    private readonly settings: BreakerSettings,
    private readonly onChange: (row: RowRef, state: BreakerState) => void,
  ) {}

  async run<T>(row: RowRef, attempt: () => Promise<T>): Promise<T> {
    const breaker = this.breakerOf(row);
    const state = breaker.policy.state;
    // cockatiel makes concurrent callers wait for a half-open probe; here they go to the next row instead.
    if (state === CircuitState.HalfOpen) throw new RowUnavailable(row, 0);
    try {
      // An open row past its cooldown: this call is the probe. Only an upstream's answer closes the breaker;
      // a failure before one counts as a failed probe, so the row is not taken back untested.
      return await breaker.policy.execute(state === CircuitState.Open ? () => probe(attempt) : attempt);
    } catch (error) {
      if (error instanceof BrokenCircuitError) throw new RowUnavailable(row, Math.max(0, breaker.openedAt + this.settings.cooldownMs - Date.now()));
      throw error instanceof InconclusiveProbe ? error.failure : error;
    }
  }

  /** Every row that has had a breaker, with its state (for metrics and readiness). */
  states(): Array<RowRef & { state: BreakerState }> {
    return [...this.breakers.entries()].flatMap(([providerId, byModel]) =>
      [...byModel.entries()].map(([upstreamModel, breaker]) => ({ providerId, upstreamModel, state: states[breaker.policy.state] })),
    );
  }

  private breakerOf(row: RowRef): Breaker {
    let byModel = this.breakers.get(row.providerId);
    if (!byModel) {
      byModel = new Map();
      this.breakers.set(row.providerId, byModel);
    }
    let breaker = byModel.get(row.upstreamModel);
    if (!breaker) {
      const policy = circuitBreaker(handleWhen((error) => error instanceof InconclusiveProbe || worthFallingBack(error)), {
        halfOpenAfter: this.settings.cooldownMs,
        breaker: new ConsecutiveBreaker(this.settings.failures),
      });
      const created: Breaker = { policy, openedAt: 0 };
      const ref = { providerId: row.providerId, upstreamModel: row.upstreamModel };
      policy.onBreak(() => (created.openedAt = Date.now()));
      policy.onStateChange((state) => this.onChange(ref, states[state]));
      byModel.set(row.upstreamModel, created);
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
