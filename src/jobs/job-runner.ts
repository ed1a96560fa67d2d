import type { RowRef } from '../domain/provider-rows.ts';
import type { UpstreamErrorAnswer } from '../domain/upstream-failure.ts';
import type { ProviderTarget } from '../providers/provider-adapter.ts';
import type { MediaKind } from '../domain/usage-modalities.ts';
import type { MediaAssetRow, MediaJobRow } from '../storage/media-jobs-repository.ts';

/** A job of one kind, its stored JSON read into that kind's types. */
export type MediaJobOf<Kind extends MediaKind> = Extract<MediaJobRow, { kind: Kind }>;

/** How a run of a job ended. */
export type JobOutcome =
  | {
      kind: 'succeeded';
      result: unknown;
      usage: unknown;
      costNanos: bigint;
      /**
       * Billed by the seconds delivered, and those seconds read from the file itself: their cost, up to which
       * (and `limits.maxDurationOverrun`) a cost past the hold may be charged (billing/settlement.ts).
       */
      measuredCostNanos?: bigint;
      assets: ReadonlyArray<Omit<MediaAssetRow, 'createdAt'>>;
    }
  /**
   * Charged `costNanos` (what the provider billed, usually nothing); the rest of the hold goes back. `upstreamAnswer`:
   * the provider's own error answer, when the job failed because its last upstream call was answered with one.
   */
  | { kind: 'failed'; error: string; costNanos: bigint; upstreamAnswer?: UpstreamErrorAnswer }
  /** The provider cancelled the task (or was asked to): nothing is charged. */
  | { kind: 'cancelled'; error: string }
  /** A transient failure before anything reached the provider's books: the job runs again later (not before `retryAfterMs`). */
  | { kind: 'retry'; error: string; retryAfterMs?: number }
  /** Another process took the job over; this run writes nothing more. */
  | { kind: 'lost' };

/**
 * One attempt of a job's upstream call on one row: `markSent` is awaited right before the call (it throws
 * `ClaimLost` when the job is no longer this process's, and then nothing may be sent). A failure to make the
 * job ready for the row is thrown as `UnsendableJob`; the upstream's own failures as they come. `key` is the
 * provider's settings with the upstream key chosen for the attempt (absent: the provider's as configured).
 */
export type JobSend<T> = (row: RowRef, markSent: () => Promise<void>, key: ProviderTarget | undefined) => Promise<T>;

/** What a runner may do to its job while it holds the job's claim. */
export interface JobContext {
  /**
   * Sends the job through the provider rows' breakers, falling back over its model's rows as a request does
   * (gateway/upstream-dispatch.ts), from the row it is on: the answer of the row that served, with that row,
   * or the outcome the job then takes (lost, retried later, or failed with the reason). Used only before the
   * upstream holds anything of the job: once a task id or an answer is stored, it is never sent again.
   */
  dispatch<T>(send: JobSend<T>): Promise<{ value: T; row: RowRef } | { outcome: JobOutcome }>;
  /** Stores the id of the task the provider created, before it is read; false when the claim is lost. */
  recordTask(taskId: string): Promise<boolean>;
  /** Stores the upstream's answer before archiving; false when the claim is lost. */
  recordGenerated(upstreamResult: unknown): Promise<boolean>;
  /** Whether the claim was lost (its renewal found another owner). */
  lost(): boolean;
  /**
   * Aborts at the job's deadline (`deadlineAt`, set at submission, so a job taken over keeps it), with a
   * `JobDeadlineError`: every provider call and download of the job takes it, so a hanging upstream is cut
   * on time.
   */
  deadline: AbortSignal;
}

/** The job is no longer this process's (another took it over): this run writes and sends nothing more. */
export class ClaimLost extends Error {
  constructor() {
    super('the claim of the job was lost');
    this.name = 'ClaimLost';
  }
}

/**
 * The job could not be made ready for a row (its provider is gone, an input could not be read or fetched):
 * it fails with this message, and no other row is tried.
 */
export class UnsendableJob extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsendableJob';
  }
}

/** Why a job's deadline signal fired: it ran past `jobs.maxJobSeconds`. */
export class JobDeadlineError extends Error {
  constructor(maxJobSeconds: number) {
    super(`the job did not finish within ${maxJobSeconds} seconds`);
    this.name = 'JobDeadlineError';
  }
}

/** The failure of a job past its deadline: `costNanos` charged (what the provider billed, usually nothing), the rest of the hold given back. */
export function pastDeadline(deadline: AbortSignal, costNanos = 0n): Extract<JobOutcome, { kind: 'failed' }> {
  const reason: unknown = deadline.reason;
  return {
    kind: 'failed',
    error: reason instanceof JobDeadlineError ? reason.message : 'the job did not finish within its time limit',
    costNanos,
  };
}

/** Runs the jobs of one kind (image, audio, video). */
export interface JobRunner<Kind extends MediaKind> {
  run(job: MediaJobOf<Kind>, context: JobContext): Promise<JobOutcome>;
}

/** The runner of each kind of job this process runs. */
export type JobRunners = { readonly [Kind in MediaKind]?: JobRunner<Kind> };

/** An archived output as its asset row needs it. */
export interface ArchivedAsset {
  assetId: string;
  objectKey: string;
  mediaType: string;
  bytes: number;
}

/** A job's success: its result and usage, the charge, and an asset of each archived output, kept `retentionMs` (undefined: for ever). */
export function succeeded(
  job: MediaJobRow,
  outcome: { result: unknown; usage: unknown; costNanos: bigint; measuredCostNanos?: bigint },
  { outputs, retentionMs }: { outputs: readonly ArchivedAsset[]; retentionMs: number | undefined },
): JobOutcome {
  const expiresAt = retentionMs === undefined ? null : new Date(Date.now() + retentionMs);
  const assets = outputs.map((output) => ({
    id: output.assetId,
    accountId: job.accountId,
    jobId: job.id,
    objectKey: output.objectKey,
    mediaType: output.mediaType,
    bytes: output.bytes,
    expiresAt,
  }));
  return { kind: 'succeeded', ...outcome, assets };
}
