import type { CreditLedger } from '../billing/credit-ledger.ts';
import type { ProviderRow } from '../catalog/catalog.ts';
import type { JobsConfig } from '../config/load-config.ts';
import { GatewayError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { RoutingStrategyName } from '../domain/generation-route.ts';
import type { MediaJobInput } from '../domain/media-job.ts';
import type { MediaKind } from '../domain/usage-modalities.ts';
import type { JobWaiters } from '../jobs/job-waiters.ts';
import { endedPastDeadlineMs } from '../jobs/job-worker.ts';
import type {
  MediaAssetRow,
  MediaJobRow,
  MediaJobsRepository,
  NewMediaJob,
  ReadJobRow,
} from '../storage/media-jobs-repository.ts';
import type { Caller, RequestContext } from '../domain/request-context.ts';
import type { NamedAsset } from './image-request-check.ts';

export interface JobSubmissionDependencies {
  jobs: Pick<MediaJobsRepository, 'submit' | 'find' | 'findAssets' | 'assetsOfJob'>;
  ledger: Pick<CreditLedger, 'freeLeasedCredit' | 'refusal'>;
  waiters: JobWaiters;
  config: JobsConfig;
  /** Tells the workers of every process that jobs were queued. */
  announce: () => void;
  clock?: () => Date;
}

/** A checked media request, priced, ready to be held and queued. */
export type JobToSubmit = MediaJobInput & {
  modelId: string;
  row: ProviderRow;
  holdNanos: bigint;
  /** The catalog's version of the prices the job is frozen at. */
  priceVersion: string | undefined;
  /** The routing strategy the model names, which picked `row`; its record's route names it. */
  strategy?: RoutingStrategyName;
};

/**
 * How long a request waits for its job to end (without `waitMs`, until it ends: at most until its deadline has
 * passed by `endedPastDeadlineMs`), and the signal of a client gone meanwhile.
 */
export interface JobWait {
  waitMs?: number;
  signal?: AbortSignal;
}

/** What every kind of media job shares: the hold and the row in one transaction, the owner's reads, the wait for the end. */
export class JobSubmission {
  private readonly clock: () => Date;

  constructor(private readonly dependencies: JobSubmissionDependencies) {
    this.clock = dependencies.clock ?? (() => new Date());
  }

  /** Holds the job's credit and queues it, answering its row; 403 or 429 (as any request) when the balance or a cap refuses. */
  async enqueue(caller: RequestContext, job: JobToSubmit): Promise<MediaJobRow> {
    const { jobs, ledger, config } = this.dependencies;
    const generationId = newId('gen');
    const now = this.clock();
    const submission: NewMediaJob = {
      ...job,
      id: generationId,
      accountId: caller.accountId,
      apiKeyId: caller.apiKeyId,
      model: job.modelId,
      providerId: job.row.providerId,
      upstreamModel: job.row.upstreamModel,
      requestId: caller.requestId ?? null,
      holdId: newId('hold'),
      holdNanos: job.holdNanos,
      deadlineAt: new Date(now.getTime() + config.maxJobSeconds * 1000),
      now,
    };
    let outcome = await jobs.submit(submission);
    if (typeof outcome === 'string' && outcome !== 'key_inactive') {
      // Credit this or another process leases for quick requests may be what stands in the way: it is given back, then tried once more.
      await ledger.freeLeasedCredit(caller.accountId);
      outcome = await jobs.submit({ ...submission, now: this.clock() });
    }
    if (typeof outcome === 'string') {
      const { accountId, apiKeyId } = caller;
      throw await ledger.refusal(outcome, { accountId, apiKeyId, amountNanos: job.holdNanos });
    }
    this.dependencies.announce();
    return outcome;
  }

  /**
   * The caller's job of `kind`; 404 for an unknown id or another account's. A job whose stored JSON this
   * release cannot read is answered as such (its worker fails it, giving its hold back).
   */
  async find(caller: Caller, generationId: string, kind: MediaKind): Promise<ReadJobRow> {
    const job = await this.dependencies.jobs.find(generationId);
    if (!job || job.accountId !== caller.accountId || job.kind !== kind)
      throw new GatewayError('GW_NOT_FOUND', `${kind} generation "${generationId}" not found`);
    return job;
  }

  /**
   * The archived outputs of the caller's that a request reuses, read in one query; 404 naming the field of the
   * first that is another account's, unknown or expired.
   */
  async ownedAssets(caller: Caller, named: readonly NamedAsset[]): Promise<ReadonlyMap<string, MediaAssetRow>> {
    if (named.length === 0) return new Map();
    const rows = await this.dependencies.jobs.findAssets([...new Set(named.map(({ assetId }) => assetId))]);
    const now = this.clock();
    const owned = new Map<string, MediaAssetRow>();
    for (const asset of rows) {
      if (asset.accountId === caller.accountId && isKept(asset, now)) owned.set(asset.id, asset);
    }
    const missing = named.find(({ assetId }) => !owned.has(assetId));
    if (missing) throw new GatewayError('GW_NOT_FOUND', `${missing.where}: asset "${missing.assetId}" not found`);
    return owned;
  }

  /**
   * The ids of a job's archived outputs still kept, read in one query. An output past its retention
   * (`media.retentionDays`) is gone from then on, as reuse has it, whether or not the sweep has deleted it yet.
   */
  async keptAssetIds(jobId: string): Promise<ReadonlySet<string>> {
    const now = this.clock();
    const assets = await this.dependencies.jobs.assetsOfJob(jobId);
    return new Set(assets.filter((asset) => isKept(asset, now)).map((asset) => asset.id));
  }

  /** Waits for the job to end, as long as `wait` says; answers it as it is then. */
  async waitFor(
    caller: Caller,
    { generationId, kind }: { generationId: string; kind: MediaKind },
    { waitMs, signal }: JobWait,
  ): Promise<ReadJobRow> {
    let until: number | undefined = waitMs === undefined ? undefined : this.clock().getTime() + waitMs;
    for (;;) {
      const job = await this.find(caller, generationId, kind);
      // A job that succeeds within its grace past the deadline is charged: a request waiting for it sees it end.
      until ??= job.deadlineAt.getTime() + endedPastDeadlineMs;
      const left = until - this.clock().getTime();
      if (job.state === 'succeeded' || job.state === 'failed' || left <= 0 || signal?.aborted) return job;
      // The notification is the fast path; the re-read a second later covers one that was lost.
      await this.dependencies.waiters.wait(generationId, Math.min(left, 1_000), signal);
    }
  }
}

/** Whether an archived output is within its retention (one without an end is kept for ever). */
function isKept(asset: MediaAssetRow, now: Date): boolean {
  return asset.expiresAt === null || asset.expiresAt > now;
}
