import { frozenPriceVersion } from '../domain/media-job.ts';
import { applySettlement, settlementClaim } from '../billing/settlement.ts';
import type { JobsConfig, ProviderConfig } from '../config/load-config.ts';
import type { MediaJobRow, MediaJobsRepository, ReadJobRow } from '../storage/media-jobs-repository.ts';
import { discardFolder, type ObjectStore } from '../storage/object-store.ts';
import { usageRecord, type GenerationAttempt, type RecordedGeneration } from '../domain/generation-route.ts';
import type { RowRef } from '../domain/provider-rows.ts';
import { worthFallingBack } from '../gateway/fallback.ts';
import { dispatchWithFallback, type Resilience } from '../gateway/upstream-dispatch.ts';
import {
  ClaimLost,
  JobDeadlineError,
  pastDeadline,
  type JobContext,
  type JobOutcome,
  type JobRunners,
  type JobSend,
} from './job-runner.ts';
import { ClaimingWorker } from './claiming-worker.ts';
import { outputFolder } from './output-keys.ts';
import { unsentOutcome } from './upstream-errors.ts';

/** How long past its deadline a run may take to wind down (a video task's cancel, say) before the job fails without it. */
const deadlineGraceMs = 1500;

/** How long after its deadline a job has ended for sure: the worker's grace, then time for its settlement's writes. */
export const endedPastDeadlineMs = deadlineGraceMs + 10_000;

/** What the worker needs of the jobs' storage. */
export type WorkerJobs = Pick<
  MediaJobsRepository,
  'dueProviders' | 'claim' | 'extendClaim' | 'markSent' | 'recordUpstream' | 'retryLater' | 'settle'
>;

export interface JobWorkerOptions {
  jobs: WorkerJobs;
  /**
   * Where runs archive outputs: a job that ends without succeeding keeps nothing there (no asset row would name it),
   * whichever run stored it.
   */
  store: Pick<ObjectStore, 'delete' | 'deleteFolder'>;
  runners: JobRunners;
  providers: ReadonlyMap<string, Pick<ProviderConfig, 'maxConcurrentJobs' | 'active'>>;
  /** The process's breakers, shared with requests: a row opened by either is skipped by both. */
  resilience: Resilience;
  /** The rows a job may be sent to now, best first, by the rule its recipe queued it by (media-rows.ts). */
  rowsOf: (job: MediaJobRow) => readonly RowRef[];
  /** This process: the owner written on the claims of the jobs it runs. */
  owner: string;
  config: JobsConfig;
  /** `limits.maxDurationOverrun`: how far past its hold a job billed on delivered seconds may be charged. */
  maxDurationOverrun: number;
  /** A job reached a terminal state (waiting requests are told across processes). */
  onFinished: (jobId: string) => void;
  /** A job's usage record was written (the operator's log line and metrics). */
  onRecorded?: (generation: RecordedGeneration) => void;
  onError: (error: unknown, jobId?: string) => void;
  /** The outputs of a job that did not succeed could not be deleted: they stay in the store, which an operator is told. */
  onDiscardFailed: (error: unknown, jobId: string) => void;
  clock?: () => Date;
}

/**
 * Runs media jobs in this process: claims due jobs (across processes, each job by one process at a time),
 * runs each under a claim it keeps renewing, and writes the outcome. A job whose stored JSON this release
 * cannot read is not run: it fails with the reason and its hold is released. Woken by `wake()` when jobs are
 * queued, and by a poll timer otherwise. At most `config.concurrency` jobs at once, and at most a
 * provider's `maxConcurrentJobs` of that provider's claimed (a job that falls back to another provider's row
 * counts against that provider from then on, and may take it past its number for the time it runs). A job is
 * sent as a request is, through the rows' breakers and over its model's rows (`dispatch`).
 */
export class JobWorker extends ClaimingWorker {
  private readonly running = new Map<string, Promise<void>>();
  private readonly perProvider = new Map<string, number>();
  private readonly clock: () => Date;

  constructor(private readonly options: JobWorkerOptions) {
    super({ pollMs: options.config.idlePollMs, concurrency: options.config.concurrency, onError: options.onError });
    this.clock = options.clock ?? (() => new Date());
  }

  protected underWay(): Iterable<Promise<void>> {
    return this.running.values();
  }

  /** Jobs this process is running now. */
  get active(): number {
    return this.running.size;
  }

  protected async claim(): Promise<void> {
    const { config, jobs, owner, providers } = this.options;
    const room = (providerId: string) =>
      (providers.get(providerId)?.maxConcurrentJobs ?? Infinity) - (this.perProvider.get(providerId) ?? 0);
    const busy = [...this.perProvider.keys()].filter((id) => room(id) <= 0);
    for (const providerId of await jobs.dueProviders(busy)) {
      const free = config.concurrency - this.running.size;
      if (free <= 0) return;
      const claimed = await jobs.claim(owner, {
        providerId,
        limit: Math.min(free, room(providerId)),
        claimSeconds: config.claimSeconds,
        // A task created on a provider this process does not have (removed from its gateway.yaml, or its key
        // gone) is followed by a process that has it, or by this one once it is configured again: failed here,
        // the provider's work would go unbilled and undelivered. Past its deadline it is claimed, and failed.
        followsTasks: providers.get(providerId)?.active === true,
      });
      for (const job of claimed) this.launch(job);
    }
  }

  private launch(job: ReadJobRow): void {
    let on = job.providerId;
    this.count(on, 1);
    // A job that falls back to another provider's row counts against that provider from then on.
    const moveTo = (providerId: string) => {
      this.count(on, -1);
      on = providerId;
      this.count(on, 1);
    };
    const run = this.run(job, moveTo).finally(() => {
      this.running.delete(job.id);
      this.count(on, -1);
      this.wake();
    });
    this.running.set(job.id, run);
  }

  private count(providerId: string, by: number): void {
    this.perProvider.set(providerId, (this.perProvider.get(providerId) ?? 0) + by);
  }

  private async run(job: ReadJobRow, moveTo: (providerId: string) => void): Promise<void> {
    const { config, jobs, owner } = this.options;
    let lost = false;
    const deadline = new AbortController();
    const remainingMs = () => job.deadlineAt.getTime() - this.clock().getTime();
    // A timer may fire a little before the clock reaches its due time (libuv counts from the time its loop
    // cached at the start of a turn): it is armed again for what remains, so no job is cut before its deadline.
    let cut: NodeJS.Timeout | undefined;
    const cutAtDeadline = (): void => {
      const left = remainingMs();
      if (left > 0) cut = setTimeout(cutAtDeadline, left);
      else deadline.abort(new JobDeadlineError(config.maxJobSeconds));
    };
    cut = setTimeout(cutAtDeadline, Math.max(0, remainingMs()));
    const renewal = setInterval(
      () => {
        jobs.extendClaim(job.id, owner, config.claimSeconds).then(
          (kept) => (lost ||= !kept),
          (error: unknown) => this.options.onError(error, job.id),
        );
      },
      Math.max(500, (config.claimSeconds * 1000) / 3),
    );
    renewal.unref();
    const fallbacks = 'problem' in job ? [] : job.fallbacks;
    const state: RunState = {
      route: { row: { providerId: job.providerId, upstreamModel: job.upstreamModel }, fallbacks },
      tried: fallbacks,
      sends: 0,
      deadline: deadline.signal,
      lost: () => lost,
      moveTo,
    };
    try {
      let outcome: JobOutcome;
      if ('problem' in job) {
        outcome = { kind: 'failed', error: job.problem, costNanos: 0n };
      } else if (this.clock() > job.deadlineAt) {
        outcome = { kind: 'failed', error: new JobDeadlineError(config.maxJobSeconds).message, costNanos: 0n };
      } else {
        const context: JobContext = {
          dispatch: (send) => this.dispatch(job, send, state),
          recordTask: async (taskId) =>
            !lost &&
            (await jobs.recordUpstream(job, owner, { phase: 'task', upstreamTaskId: taskId, now: this.clock() })),
          recordGenerated: async (upstreamResult) =>
            !lost && (await jobs.recordUpstream(job, owner, { phase: 'generated', upstreamResult, now: this.clock() })),
          lost: () => lost,
          deadline: deadline.signal,
        };
        const run = this.runnerOf(job, context);
        outcome = run
          ? await this.withinDeadline(run, {
              deadline: deadline.signal,
              abandon: () => {
                lost = true;
                state.abandoned = run;
              },
            })
          : { kind: 'failed', error: `no runner for ${job.kind} jobs`, costNanos: 0n };
      }
      await this.finish(job, outcome, state);
    } catch (error) {
      // Storage failed under the job: its claim runs out and another process resumes it from its phase.
      this.options.onError(error, job.id);
    } finally {
      clearTimeout(cut);
      clearInterval(renewal);
    }
  }

  /**
   * The job sent over its rows with the requests' breakers and fallback, from the row it is on; each row is
   * written on the job (with the rows tried before it) before anything is sent to it. A job waits out a
   * provider's retry-after in the queue, not here: the dispatch itself never waits.
   */
  private async dispatch<T>(
    job: MediaJobRow,
    send: JobSend<T>,
    state: RunState,
  ): Promise<{ value: T; row: RowRef } | { outcome: JobOutcome }> {
    const { jobs, owner, config, resilience } = this.options;
    const earlier = state.tried;
    const attempts: GenerationAttempt[] = [];
    const markSent = async (row: RowRef): Promise<void> => {
      const fallbacks = [...earlier, ...attempts];
      if (state.lost() || !(await jobs.markSent(job.id, owner, { row, fallbacks, now: this.clock() })))
        throw new ClaimLost();
      if (row.providerId !== state.route.row.providerId) state.moveTo(row.providerId);
      state.route = { row, fallbacks };
      state.sends += 1;
    };
    try {
      const served = await dispatchWithFallback<RowRef, T>({
        modelId: job.model,
        accountId: job.accountId,
        rows: this.rowsFrom(job),
        resilience: { ...resilience, retryBudgetMs: 0, maxRetries: 0 },
        mayContinue: worthFallingBack,
        attempt: async (row, key) => {
          try {
            return await send(row, () => markSent(row), key?.target);
          } catch (error) {
            // Cut by the job's deadline: it says nothing of the row (its breaker does not count it), and no
            // other row is tried.
            throw state.deadline.aborted ? state.deadline.reason : error;
          }
        },
        attempts,
      });
      if (served.key?.recorded) state.route = { ...state.route, keyId: served.key.id };
      return served;
    } catch (error) {
      state.tried = [...earlier, ...attempts];
      const last = attempts.at(-1);
      if (last) {
        const { providerId, upstreamModel } = last;
        state.route = { row: { providerId, upstreamModel }, fallbacks: [...earlier, ...attempts.slice(0, -1)] };
      }
      return { outcome: unsentOutcome(error, { mayRetry: job.attempts + state.sends < config.maxAttempts }) };
    }
  }

  /**
   * The rows the job may be sent to, from the one it is on: those before it were tried already, or it was
   * queued past them. A job whose row left the catalog goes to the model's rows as they are now, but never to a
   * stand-in (the sandbox's made-up output, billed at the real model's price, for a job its provider failed to
   * keep), or, with none left, to its own, whose runner then fails it.
   */
  private rowsFrom(job: MediaJobRow): readonly RowRef[] {
    const rows = this.options.rowsOf(job);
    const at = rows.findIndex((row) => row.providerId === job.providerId && row.upstreamModel === job.upstreamModel);
    if (at >= 0) return rows.slice(at);
    const real = rows.filter((row) => row.standIn !== true);
    return real.length > 0 ? real : [{ providerId: job.providerId, upstreamModel: job.upstreamModel }];
  }

  /** The run of the job by its kind's runner; undefined when this process has none for that kind. */
  private runnerOf(job: MediaJobRow, context: JobContext): Promise<JobOutcome> | undefined {
    const { runners } = this.options;
    switch (job.kind) {
      case 'image':
        return runners.image?.run(job, context);
      case 'video':
        return runners.video?.run(job, context);
      case 'audio':
        return runners.audio?.run(job, context);
    }
  }

  /**
   * The run's outcome, or its failure at the deadline: past it, a run that still fails or asks to be retried
   * (its calls were aborted) fails for its time, and one that has not ended `deadlineGraceMs` later (a call
   * that ignores its signal) is given up, `abandon` making its later writes no-ops (and its late outputs
   * deleted once its job is settled, `discardStored`), and fails. A run that
   * succeeds past it (a call that ignored its signal, a last write the deadline overtook) fails for its time as
   * well, uncharged, and what it archived is deleted once that is settled: a job not finished within its time
   * fails, whatever it delivers later. Either way the job is settled now, its hold given back, and no other process takes it up.
   */
  private async withinDeadline(
    run: Promise<JobOutcome>,
    { deadline, abandon }: { deadline: AbortSignal; abandon: () => void },
  ): Promise<JobOutcome> {
    let grace: NodeJS.Timeout | undefined;
    const givenUp = new Promise<'given up'>((resolve) => {
      const start = () => (grace = setTimeout(() => resolve('given up'), deadlineGraceMs));
      if (deadline.aborted) start();
      else deadline.addEventListener('abort', start, { once: true });
    });
    try {
      const outcome = await Promise.race([run, givenUp]);
      if (outcome === 'given up') {
        abandon();
        return pastDeadline(deadline);
      }
      if (!deadline.aborted) return outcome;
      if (outcome.kind === 'retry') return pastDeadline(deadline);
      if (outcome.kind === 'failed') return pastDeadline(deadline, outcome.costNanos);
      // What it stored is deleted once its failure is settled (`discardStored`), not before: a run this late may
      // be one whose job another process has taken over, and settled, under the same keys.
      if (outcome.kind === 'succeeded') return pastDeadline(deadline);
      return outcome;
    } finally {
      clearTimeout(grace);
    }
  }

  /**
   * What a job this process settled without success had stored, which no asset row names and no retention sweep
   * would ever delete: its output folder (what this run stored, or a run of a process that died, even what no write
   * of the job's row named yet), now; and, once it ends, what a run given up at the deadline stores later (a late
   * success's outputs, or an answer's outputs stored before its record was refused). Only once the job is settled:
   * it can never succeed now, so nothing under its folder is anyone's. Best effort, and never waited for: the job
   * has ended all the same, and a store that does not answer holds neither its waiters nor its slot.
   */
  private discardStored(job: ReadJobRow, state: RunState): void {
    const folder = outputFolder(job);
    if (folder === undefined) return;
    const discard = () =>
      discardFolder(this.options.store, folder, (error) => this.options.onDiscardFailed(error, job.id));
    void discard();
    void state.abandoned?.then(discard, (error: unknown) => {
      this.options.onError(error, job.id);
      return discard();
    });
  }

  private async finish(job: ReadJobRow, outcome: JobOutcome, state: RunState): Promise<void> {
    const { config, jobs, owner } = this.options;
    const now = this.clock();
    switch (outcome.kind) {
      case 'lost':
        return;
      case 'retry': {
        // Backoff, or the provider's own retry-after when it asks for longer; never past the job's deadline, where
        // the next claim fails it and gives its hold back, whatever wait an upstream asked for.
        const delay = Math.max(config.retryBaseMs * 2 ** Math.min(job.attempts, 16), outcome.retryAfterMs ?? 0);
        const due = Math.min(now.getTime() + delay, job.deadlineAt.getTime());
        await jobs.retryLater(job.id, owner, {
          runAfter: new Date(due),
          error: outcome.error,
          fallbacks: state.tried,
          now,
        });
        return;
      }
      case 'succeeded':
      case 'failed':
      case 'cancelled': {
        const succeeded = outcome.kind === 'succeeded';
        const measuredCostNanos = succeeded ? outcome.measuredCostNanos : undefined;
        const { claimNanos, costNanos } = settlementClaim({
          holdNanos: job.holdNanos,
          costNanos: outcome.kind === 'cancelled' ? 0n : outcome.costNanos,
          ...(measuredCostNanos !== undefined
            ? { deliveredDuration: { measuredCostNanos, maxOverrun: this.options.maxDurationOverrun } }
            : {}),
        });
        const record = usageRecord({
          generationId: job.id,
          accountId: job.accountId,
          apiKeyId: job.apiKeyId,
          model: job.model,
          modality: job.kind,
          status: outcome.kind,
          request: job.recordedRequest,
          usage: succeeded ? outcome.usage : { error: outcome.error },
          route: {
            ...state.route.row,
            fallbacks: state.route.fallbacks,
            ...(job.requestId ? { requestId: job.requestId } : {}),
            ...(job.routingStrategy === null ? {} : { strategy: job.routingStrategy }),
            ...(state.route.keyId === undefined ? {} : { keyId: state.route.keyId }),
          },
          // The version of the prices frozen at submission, which the cost was reckoned at.
          priceVersion: frozenPriceVersion(job.priceSnapshot),
          startedAt: job.createdAt.getTime(),
          endedAt: now.getTime(),
          claimNanos,
        });
        const settled = await jobs.settle(job, owner, {
          state: outcome.kind,
          costNanos,
          claimNanos,
          record,
          result: succeeded ? outcome.result : null,
          error: succeeded ? null : outcome.error,
          upstreamAnswer: outcome.kind === 'failed' ? outcome.upstreamAnswer : undefined,
          assets: succeeded ? outcome.assets : [],
          now,
        });
        if (settled === undefined) return;
        applySettlement(record, settled);
        if (!succeeded) this.discardStored(job, state);
        this.options.onFinished(job.id);
        this.options.onRecorded?.(record);
      }
    }
  }
}

/** What a run knows of the road its job took. */
interface RunState {
  /** What the job's usage record says of its route: the row it is on, and the rows tried before it. */
  route: { row: RowRef; fallbacks: GenerationAttempt[]; keyId?: string };
  /** Every row tried so far, the last failure's included: what a retry starts from. */
  tried: GenerationAttempt[];
  /** Upstream calls made in this run (the job's stored `attempts` counts those of earlier runs). */
  sends: number;
  deadline: AbortSignal;
  lost: () => boolean;
  /** The run given up at the deadline, which may still end (and store outputs) later. */
  abandoned?: Promise<JobOutcome>;
  /** The job went on to another provider's row. */
  moveTo: (providerId: string) => void;
}
