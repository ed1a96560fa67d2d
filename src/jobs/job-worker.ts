import { applySettlement, settlementClaim } from '../billing/settlement.ts';
import type { JobsConfig, ProviderConfig } from '../config/load-config.ts';
import type { MediaJobRow, MediaJobsRepository, ReadJobRow } from '../storage/media-jobs-repository.ts';
import { usageRecord, type GenerationRoute, type RecordedGeneration } from '../domain/generation-route.ts';
import { JobDeadlineError, pastDeadline, type JobContext, type JobOutcome, type JobRunners } from './job-runner.ts';

/** How long past its deadline a run may take to wind down (a video task's cancel, say) before the job fails without it. */
const deadlineGraceMs = 1500;

/** What the worker needs of the jobs' storage. */
export type WorkerJobs = Pick<
  MediaJobsRepository,
  'dueProviders' | 'claim' | 'extendClaim' | 'markSent' | 'recordUpstream' | 'retryLater' | 'settle'
>;

export interface JobWorkerOptions {
  jobs: WorkerJobs;
  runners: JobRunners;
  providers: ReadonlyMap<string, Pick<ProviderConfig, 'maxConcurrentJobs'>>;
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
  clock?: () => Date;
}

/**
 * Runs media jobs in this process: claims due jobs (across processes, each job by one process at a time),
 * runs each under a claim it keeps renewing, and writes the outcome. A job whose stored JSON this release
 * cannot read is not run: it fails with the reason and its hold is released. Woken by `wake()` when jobs are
 * queued, and by a poll timer otherwise. At most `config.concurrency` jobs at once, and at most a
 * provider's `maxConcurrentJobs` of that provider's.
 */
export class JobWorker {
  private readonly running = new Map<string, Promise<void>>();
  private readonly perProvider = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private claiming: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private readonly clock: () => Date;

  constructor(private readonly options: JobWorkerOptions) {
    this.clock = options.clock ?? (() => new Date());
  }

  start(): void {
    if (this.options.config.concurrency === 0) return;
    this.stopped = false;
    this.timer = setInterval(() => this.wake(), this.options.config.idlePollMs);
    this.timer.unref();
    this.wake();
  }

  /** Looks for due jobs now. */
  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = this.claim()
      .catch((error: unknown) => this.options.onError(error))
      .finally(() => {
        this.claiming = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Stops claiming and waits up to `graceMs` for the jobs under way; the rest are let go for another process. */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.claiming;
    const all = Promise.all(this.running.values());
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }

  /** Jobs this process is running now. */
  get active(): number {
    return this.running.size;
  }

  /** Claiming jobs: started and not stopped (never with `jobs.concurrency: 0`). */
  get isRunning(): boolean {
    return !this.stopped;
  }

  private async claim(): Promise<void> {
    const { config, jobs, owner, providers } = this.options;
    const room = (providerId: string) =>
      (providers.get(providerId)?.maxConcurrentJobs ?? Infinity) - (this.perProvider.get(providerId) ?? 0);
    const busy = [...this.perProvider.keys()].filter((id) => room(id) <= 0);
    for (const providerId of await jobs.dueProviders(busy)) {
      const free = config.concurrency - this.running.size;
      if (free <= 0) return;
      const claimed = await jobs.claim(owner, providerId, Math.min(free, room(providerId)), config.claimSeconds);
      for (const job of claimed) this.launch(job);
    }
  }

  private launch(job: ReadJobRow): void {
    this.perProvider.set(job.providerId, (this.perProvider.get(job.providerId) ?? 0) + 1);
    const run = this.run(job).finally(() => {
      this.running.delete(job.id);
      this.perProvider.set(job.providerId, (this.perProvider.get(job.providerId) ?? 1) - 1);
      this.wake();
    });
    this.running.set(job.id, run);
  }

  private async run(job: ReadJobRow): Promise<void> {
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
    try {
      const context: JobContext = {
        markSent: async () => !lost && (await jobs.markSent(job.id, owner, this.clock())),
        recordTask: async (taskId) =>
          !lost && (await jobs.recordUpstream(job, owner, { phase: 'task', upstreamTaskId: taskId }, this.clock())),
        recordGenerated: async (upstreamResult) =>
          !lost && (await jobs.recordUpstream(job, owner, { phase: 'generated', upstreamResult }, this.clock())),
        lost: () => lost,
        deadline: deadline.signal,
        maxAttempts: config.maxAttempts,
      };
      let outcome: JobOutcome;
      if ('problem' in job) {
        outcome = { kind: 'failed', error: job.problem, costNanos: 0n };
      } else if (this.clock() > job.deadlineAt) {
        outcome = { kind: 'failed', error: new JobDeadlineError(config.maxJobSeconds).message, costNanos: 0n };
      } else {
        const run = this.runnerOf(job, context);
        outcome = run
          ? await this.withinDeadline(job, run, deadline.signal, () => (lost = true))
          : { kind: 'failed', error: `no runner for ${job.kind} jobs`, costNanos: 0n };
      }
      await this.finish(job, outcome);
    } catch (error) {
      // Storage failed under the job: its claim runs out and another process resumes it from its phase.
      this.options.onError(error, job.id);
    } finally {
      clearTimeout(cut);
      clearInterval(renewal);
    }
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
   * that ignores its signal) is given up, `abandon` making its later writes no-ops, and fails. Either way the
   * job is settled now, its hold given back, and no other process takes it up.
   */
  private async withinDeadline(
    job: ReadJobRow,
    run: Promise<JobOutcome>,
    deadline: AbortSignal,
    abandon: () => void,
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
        run.catch((error: unknown) => this.options.onError(error, job.id));
        return pastDeadline(deadline);
      }
      if (!deadline.aborted) return outcome;
      if (outcome.kind === 'retry') return pastDeadline(deadline);
      if (outcome.kind === 'failed') return pastDeadline(deadline, outcome.costNanos);
      return outcome;
    } finally {
      clearTimeout(grace);
    }
  }

  private async finish(job: ReadJobRow, outcome: JobOutcome): Promise<void> {
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
        await jobs.retryLater(job.id, owner, new Date(due), outcome.error, now);
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
          route: routeOf(job),
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
          assets: succeeded ? outcome.assets : [],
          now,
        });
        if (settled === undefined) return;
        applySettlement(record, settled);
        this.options.onFinished(job.id);
        this.options.onRecorded?.(record);
      }
    }
  }
}

/** A job runs on the one provider row it was queued for: no fallbacks. */
function routeOf(job: ReadJobRow): GenerationRoute {
  return {
    providerId: job.providerId,
    upstreamModel: job.upstreamModel,
    fallbacks: [],
    ...(job.requestId ? { requestId: job.requestId } : {}),
  };
}
