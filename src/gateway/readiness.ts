/** Whether this process should be sent requests, as `/readyz` reports it. */
export type ReadinessStatus = 'ready' | 'starting' | 'draining' | 'unavailable';

export interface CheckResult {
  ok: boolean;
  latencyMs: number;
  /**
   * Why it failed: the code (ECONNREFUSED, a SQLSTATE) or class name of the error or of one it wraps, else the
   * innermost error's message; or the timeout.
   */
  error?: string;
}

export interface WorkersReport {
  jobs: {
    /** `stopped` before the server starts it, after it stops, and always with `jobs.concurrency: 0`. */
    state: 'running' | 'stopped';
    /** Jobs this process runs now, and at most at once. */
    active: number;
    concurrency: number;
    /** Media jobs of every process by state, as the database counts them; absent when it cannot be read. */
    byState?: Record<string, number>;
  };
}

export interface ReadinessReport {
  status: ReadinessStatus;
  checks: { database: CheckResult; objectStore: CheckResult };
  workers: WorkersReport;
}

export interface ReadinessDependencies {
  /** A trivial query. */
  pingDatabase(): Promise<void>;
  /** The object store's own cheap check (ObjectStore.check). */
  checkObjectStore(): Promise<void>;
  /** Media jobs of every process queued and under way. */
  queueDepth(): Promise<Record<string, number>>;
  worker: { readonly isRunning: boolean; readonly active: number };
  concurrency: number;
  /** A check that has not answered within this long fails. */
  timeoutMs: number;
  /** Told when a check starts failing (once, until it passes again), with the whole error. */
  onCheckFailed(check: string, error: unknown): void;
  clock?: () => number;
}

type Phase = 'starting' | 'serving' | 'draining';

/**
 * What `/readyz` (which needs no credential) says of a failure: its code (ECONNREFUSED, a SQLSTATE) or the
 * name of its class (an S3 `NoSuchBucket`) rather than a message that may name internal hosts. Both are looked
 * for through the errors it wraps (`cause`): Drizzle wraps the driver's error in one of its own whose message
 * quotes the query and its parameters, so a wrapper's message is never said; the message of the innermost error
 * only when none has a code or a class of its own. The whole error goes to the log.
 */
function reasonOf(error: unknown): string {
  const chain = causeChain(error);
  for (const link of chain) {
    const code = property(link, 'code');
    if (typeof code === 'string' && code !== '') return code;
  }
  for (const link of chain) {
    const name = property(link, 'name');
    if (typeof name === 'string' && name !== '' && name !== 'Error') return name;
  }
  const innermost = chain.at(-1);
  return innermost instanceof Error ? innermost.message : String(innermost);
}

/** Wrappers followed at most: a cause that wraps itself, or a very long chain, ends the walk. */
const maxCauses = 8;

/** The error, then what it wraps (`cause`), and so on, outermost first. */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [error];
  for (let cause = property(error, 'cause'); cause !== undefined && chain.length <= maxCauses; ) {
    if (chain.includes(cause)) break;
    chain.push(cause);
    cause = property(cause, 'cause');
  }
  return chain;
}

function property(value: unknown, key: 'code' | 'name' | 'cause'): unknown {
  return typeof value === 'object' && value !== null && key in value ? Reflect.get(value, key) : undefined;
}

/** How many timeouts a check that never answers is shared for before another is started. */
const staleAfterTimeouts = 20;

/**
 * The process's readiness: `starting` until the server listens, `draining` from the moment it is told to stop,
 * and in between `ready` while the database and the object store answer, `unavailable` while either does not.
 * A check still running when the next probe comes is shared rather than started again, so probes against a
 * database that hangs do not pile up connection attempts.
 */
export class Readiness {
  private phase: Phase = 'starting';
  private readonly inFlight = new Map<string, { promise: Promise<unknown>; startedAt: number }>();
  private readonly failing = new Set<string>();
  private readonly clock: () => number;

  constructor(private readonly dependencies: ReadinessDependencies) {
    this.clock = dependencies.clock ?? (() => performance.now());
  }

  /** The server listens: from now on the checks decide. */
  listening(): void {
    if (this.phase === 'starting') this.phase = 'serving';
  }

  /** The process is stopping: load balancers should send it nothing new. */
  draining(): void {
    this.phase = 'draining';
  }

  async report(): Promise<ReadinessReport> {
    const { dependencies } = this;
    const [database, objectStore, byState] = await Promise.all([
      this.check('database', () => dependencies.pingDatabase()),
      this.check('objectStore', () => dependencies.checkObjectStore()),
      this.jobCounts(),
    ]);
    const status: ReadinessStatus =
      this.phase === 'starting'
        ? 'starting'
        : this.phase === 'draining'
          ? 'draining'
          : database.ok && objectStore.ok
            ? 'ready'
            : 'unavailable';
    const jobs: WorkersReport['jobs'] = {
      state: dependencies.worker.isRunning ? 'running' : 'stopped',
      active: dependencies.worker.active,
      concurrency: dependencies.concurrency,
    };
    if (byState) jobs.byState = byState;
    return { status, checks: { database, objectStore }, workers: { jobs } };
  }

  private async check(name: string, run: () => Promise<void>): Promise<CheckResult> {
    const started = this.clock();
    const latencyMs = () => Math.round((this.clock() - started) * 10) / 10;
    try {
      await this.bounded(name, run);
      this.failing.delete(name);
      return { ok: true, latencyMs: latencyMs() };
    } catch (error) {
      if (!this.failing.has(name)) {
        this.failing.add(name);
        this.dependencies.onCheckFailed(name, error);
      }
      return { ok: false, latencyMs: latencyMs(), error: reasonOf(error) };
    }
  }

  /** Job counts are a report, not a check: when the database cannot give them, they are left out. */
  private jobCounts(): Promise<Record<string, number> | undefined> {
    return this.bounded('jobs', () => this.dependencies.queueDepth()).catch(() => undefined);
  }

  /**
   * `run`, shared with any caller already waiting for it, given up on after the timeout. A run that never ends
   * (a connection the network dropped without a word) is shared for `staleAfterTimeouts` timeouts at most; then
   * a new one is started, so readiness comes back once the dependency does.
   */
  private bounded<T>(name: string, run: () => Promise<T>): Promise<T> {
    const { timeoutMs } = this.dependencies;
    const now = this.clock();
    let entry = this.inFlight.get(name);
    if (!entry || now - entry.startedAt > timeoutMs * staleAfterTimeouts) {
      const started = { promise: run() as Promise<unknown>, startedAt: now };
      started.promise = started.promise.finally(() => {
        if (this.inFlight.get(name) === started) this.inFlight.delete(name);
      });
      this.inFlight.set(name, started);
      entry = started;
    }
    const shared = entry.promise as Promise<T>;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([shared, timeout]).finally(() => clearTimeout(timer));
  }
}
