import { BrokenCircuitError, CircuitBreakerPolicy, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen } from 'cockatiel';
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
  private readonly breakers = new Map<string, Breaker>();

  constructor(
    private readonly settings: BreakerSettings,
    private readonly onChange: (row: RowRef, state: BreakerState) => void,
  ) {}

  async run<T>(row: RowRef, attempt: () => Promise<T>): Promise<T> {
    const breaker = this.breakerOf(row);
    // cockatiel makes concurrent callers wait for a half-open probe; here they go to the next row instead.
    if (breaker.policy.state === CircuitState.HalfOpen) throw new RowUnavailable(row, 0);
    try {
      return await breaker.policy.execute(attempt);
    } catch (error) {
      if (error instanceof BrokenCircuitError) throw new RowUnavailable(row, Math.max(0, breaker.openedAt + this.settings.cooldownMs - Date.now()));
      throw error;
    }
  }

  /** Every row that has had a breaker, with its state (for metrics and readiness). */
  states(): Array<RowRef & { state: BreakerState }> {
    return [...this.breakers.entries()].map(([key, breaker]) => ({ ...rowOf(key), state: states[breaker.policy.state] }));
  }

  private breakerOf(row: RowRef): Breaker {
    const key = keyOf(row);
    let breaker = this.breakers.get(key);
    if (!breaker) {
      const policy = circuitBreaker(handleWhen(worthFallingBack), { halfOpenAfter: this.settings.cooldownMs, breaker: new ConsecutiveBreaker(this.settings.failures) });
      const created: Breaker = { policy, openedAt: 0 };
      policy.onBreak(() => (created.openedAt = Date.now()));
      policy.onStateChange((state) => this.onChange(row, states[state]));
      this.breakers.set(key, created);
      breaker = created;
    }
    return breaker;
  }
}

const keyOf = (row: RowRef) => `${row.providerId}\u0000${row.upstreamModel}`;

function rowOf(key: string): RowRef {
  const [providerId = '', upstreamModel = ''] = key.split('\u0000');
  return { providerId, upstreamModel };
}
