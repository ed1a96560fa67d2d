import { and, count, desc, eq, exists, gt, inArray, isNotNull, isNull, lt, lte, ne, or, sql } from 'drizzle-orm';
import Type from 'typebox';
import {
  usageRecord,
  type GenerationAttempt,
  type RecordedGeneration,
  type RoutingStrategyName,
} from '../domain/generation-route.ts';
import {
  frozenPriceVersion,
  outputProblem,
  readJobInput,
  readStoredJob,
  type MediaJobInput,
  type MediaJobPhase,
  type StoredMediaJob,
} from '../domain/media-job.ts';
import type { RowRef } from '../domain/provider-rows.ts';
import type { UpstreamErrorAnswer } from '../domain/upstream-failure.ts';
import type { MediaKind } from '../domain/usage-modalities.ts';
import { integerText, rowShape } from './checked-rows.ts';
import { type Database, type PageWindow, queryRows } from './database.ts';
import { holdOutcome, mediaJobHoldOwner, type HoldOutcome, type LedgerSettlement } from './ledger-repository.ts';
import { mediaAssets, mediaJobs } from './schema.ts';

const jobHold = rowShape('gw_hold (media job)', Type.Object({ outcome: holdOutcome }));

const dueProviderRows = rowShape('due media job providers', Type.Object({ provider_id: Type.String() }));

/** `count(*)` is a bigint, which pg answers as text. */
const queueDepthRows = rowShape('media job queue depth', Type.Object({ state: Type.String(), jobs: integerText }));

/** gw_settle's columns; `short_usage` is the usage as written when less than the cost was charged (else null). */
const jobSettlement = rowShape(
  'gw_settle (media job)',
  Type.Object({ was_held: Type.Boolean(), charged: integerText, short_usage: Type.Unknown() }),
);

/** A job's row as stored, its JSON columns not yet checked. */
export type MediaJobRecord = typeof mediaJobs.$inferSelect;
export type MediaAssetRow = typeof mediaAssets.$inferSelect;

/** The columns of a job that hold JSON checked against its kind's schemas (and its kind). */
type StoredJsonColumns =
  | 'kind'
  | 'request'
  | 'recordedRequest'
  | 'priceSnapshot'
  | 'fallbacks'
  | 'upstreamResult'
  | 'result';

/** A job as read: its columns, and its stored JSON (request, recorded request, prices, outcome) in its kind's types. */
export type MediaJobRow = Omit<MediaJobRecord, StoredJsonColumns> & StoredMediaJob;

/** A job whose stored JSON this release cannot read: its row as stored, and why (the job fails with it). */
export type UnreadableJobRow = MediaJobRecord & { problem: string };

/** A job as a read finds it: its columns either way; its typed JSON once `'problem' in` it is ruled out. */
export type ReadJobRow = MediaJobRow | UnreadableJobRow;

/** What settling a job reads of it (a job whose stored JSON is unreadable is settled too: failed, its hold released). */
export type SettledJob = Pick<
  MediaJobRecord,
  'id' | 'kind' | 'accountId' | 'apiKeyId' | 'model' | 'holdId' | 'createdAt'
> & {
  recordedRequest: unknown;
};

/** A succeeded job as an account's media listing reads it: no upstream details, no request as sent (it may hold base64). */
export type ArchivedJobRow = Pick<
  MediaJobRecord,
  'id' | 'kind' | 'model' | 'request' | 'recordedRequest' | 'result' | 'createdAt'
>;

export type NewMediaJob = MediaJobInput & {
  id: string;
  accountId: string;
  apiKeyId: string | null;
  model: string;
  providerId: string;
  upstreamModel: string;
  requestId: string | null;
  holdId: string;
  holdNanos: bigint;
  deadlineAt: Date;
  now: Date;
  /** The catalog's version of the prices in `priceSnapshot`: stored in the snapshot, named by the job's record. */
  priceVersion?: string;
  /** The routing strategy the model named (none: it named none), which ordered the rows the job was queued on. */
  strategy?: RoutingStrategyName;
};

export interface JobSettlement {
  state: 'succeeded' | 'failed' | 'cancelled';
  /** What the job cost: what is not charged of it is written on the record. */
  costNanos: bigint;
  /**
   * What the settlement asks to charge (billing/settlement.ts): at most the hold, but for media billed on the
   * seconds delivered, whose claim past the hold is charged out of what the account and the key have free.
   */
  claimNanos: bigint;
  /** The job's usage record, written with the charge the ledger decides. */
  record: Omit<RecordedGeneration, 'chargedNanos'>;
  result: unknown;
  error: string | null;
  /** A failed job's provider error answer, kept for a request waiting for the job (none: nothing is kept). */
  upstreamAnswer?: UpstreamErrorAnswer | undefined;
  assets: ReadonlyArray<Omit<MediaAssetRow, 'createdAt'>>;
  now: Date;
}

/**
 * The SQL of media jobs. Submission holds the job's credit and inserts the job in one transaction, and
 * settlement charges it, writes the usage record and ends the job in another, so a job exists exactly when
 * its hold does and is settled exactly once. Every write of a running job is conditioned on the worker
 * still holding the job's claim: a worker that lost it (it stalled and another took over) changes nothing.
 * The stored JSON is checked against its kind's schemas when a job is queued and whenever it is read.
 */
export class MediaJobsRepository {
  constructor(private readonly db: Database) {}

  /** Holds and queues the job; answers the refusal, or the row as inserted. */
  async submit(job: NewMediaJob): Promise<Exclude<HoldOutcome, 'ok'> | MediaJobRow> {
    const checked = readJobInput(job);
    // A request of a shape the job's kind cannot read back is a defect of the code that built it: nothing is held.
    if ('problem' in checked) throw new Error(`a ${job.kind} job cannot be queued: ${checked.problem}`);
    return this.db.transaction(async (tx) => {
      const [row] = await queryRows(
        tx,
        sql`SELECT gw_hold(${job.holdId}, ${job.accountId}, ${job.apiKeyId}, ${job.holdNanos}, ${mediaJobHoldOwner}, ${job.now.toISOString()}::timestamptz) AS outcome`,
        jobHold,
      );
      const outcome = row?.outcome ?? 'balance';
      if (outcome !== 'ok') return outcome;
      const [inserted] = await tx
        .insert(mediaJobs)
        .values({
          id: job.id,
          accountId: job.accountId,
          apiKeyId: job.apiKeyId,
          kind: job.kind,
          model: job.model,
          providerId: job.providerId,
          upstreamModel: job.upstreamModel,
          requestId: job.requestId,
          routingStrategy: job.strategy ?? null,
          request: job.request,
          recordedRequest: job.recordedRequest,
          state: 'queued',
          priceSnapshot:
            job.priceVersion === undefined
              ? job.priceSnapshot
              : { ...job.priceSnapshot, priceVersion: job.priceVersion },
          holdId: job.holdId,
          holdNanos: job.holdNanos,
          deadlineAt: job.deadlineAt,
          runAfter: job.now,
          createdAt: job.now,
          updatedAt: job.now,
        })
        .returning();
      return { ...columnsOf(inserted!), ...checked, fallbacks: [], upstreamResult: null, result: null };
    });
  }

  /** Providers that have due jobs (see `claim`), but none of `except`. */
  async dueProviders(except: readonly string[]): Promise<string[]> {
    const skip =
      except.length > 0
        ? sql`AND provider_id NOT IN (${sql.join(
            except.map((id) => sql`${id}`),
            sql`, `,
          )})`
        : sql``;
    const rows = await queryRows(
      this.db,
      sql`SELECT DISTINCT provider_id FROM media_jobs
           WHERE state IN ('queued', 'processing') AND run_after <= now() AND (claimed_by IS NULL OR claim_expires_at < now()) ${skip}`,
      dueProviderRows,
    );
    return rows.map((row) => row.provider_id);
  }

  /**
   * Claims up to `limit` due jobs of one provider for `owner`, for `claimSeconds`: queued ones, and running
   * ones whose claim ran out (their worker died or stalled) or that wait for a retry. Rows another process
   * is claiming at this moment are skipped. A job whose stored JSON cannot be read comes back as such, to
   * be failed. Without `followsTasks` (`owner` cannot reach the provider: gone from its configuration, or its
   * key), a job whose provider holds its task is left for a process that can follow it until its deadline,
   * and only then claimed, to be failed for its time.
   */
  async claim(
    owner: string,
    {
      providerId,
      limit,
      claimSeconds,
      followsTasks = true,
    }: { providerId: string; limit: number; claimSeconds: number; followsTasks?: boolean },
  ): Promise<ReadJobRow[]> {
    if (limit <= 0) return [];
    const due = this.db
      .select({ id: mediaJobs.id })
      .from(mediaJobs)
      .where(
        and(
          eq(mediaJobs.providerId, providerId),
          followsTasks
            ? undefined
            : or(isNull(mediaJobs.phase), ne(mediaJobs.phase, 'task'), lt(mediaJobs.deadlineAt, sql`now()`)),
          inArray(mediaJobs.state, ['queued', 'processing']),
          lte(mediaJobs.runAfter, sql`now()`),
          or(isNull(mediaJobs.claimedBy), lt(mediaJobs.claimExpiresAt, sql`now()`)),
        ),
      )
      .orderBy(mediaJobs.runAfter, mediaJobs.createdAt)
      .limit(limit)
      .for('update', { skipLocked: true });
    const claimed = await this.db
      .update(mediaJobs)
      .set({
        state: 'processing',
        claimedBy: owner,
        claimExpiresAt: sql`now() + make_interval(secs => ${claimSeconds})`,
        updatedAt: sql`now()`,
      })
      .where(inArray(mediaJobs.id, due))
      .returning();
    return claimed.map(readJob);
  }

  /** Extends `owner`'s claim on the job; false when `owner` no longer holds it. */
  async extendClaim(id: string, owner: string, claimSeconds: number): Promise<boolean> {
    const rows = await this.db
      .update(mediaJobs)
      .set({ claimExpiresAt: sql`now() + make_interval(secs => ${claimSeconds})` })
      .where(and(eq(mediaJobs.id, id), eq(mediaJobs.claimedBy, owner), eq(mediaJobs.state, 'processing')))
      .returning({ id: mediaJobs.id });
    return rows.length === 1;
  }

  /**
   * Records, before anything is sent upstream, that it is about to be, to `row` (the rows tried before it in
   * `fallbacks`): a takeover then knows not to send it again, and which row a task it finds was created on.
   */
  async markSent(
    id: string,
    owner: string,
    sent: { row: RowRef; fallbacks: readonly GenerationAttempt[]; now: Date },
  ): Promise<boolean> {
    const rows = await this.db
      .update(mediaJobs)
      .set({
        phase: 'sent',
        providerId: sent.row.providerId,
        upstreamModel: sent.row.upstreamModel,
        fallbacks: sent.fallbacks,
        attempts: sql`${mediaJobs.attempts} + 1`,
        updatedAt: sent.now,
      })
      .where(and(eq(mediaJobs.id, id), eq(mediaJobs.claimedBy, owner), eq(mediaJobs.state, 'processing')))
      .returning({ id: mediaJobs.id });
    return rows.length === 1;
  }

  /** Stores the upstream's answer (or its task id) so that archiving, or polling, can resume after a takeover. */
  async recordUpstream(
    job: Pick<MediaJobRecord, 'id' | 'kind'>,
    owner: string,
    update: { phase: Exclude<MediaJobPhase, 'sent'>; upstreamTaskId?: string; upstreamResult?: unknown; now: Date },
  ): Promise<boolean> {
    const { id } = job;
    const problem =
      update.upstreamResult === undefined
        ? undefined
        : outputProblem(job.kind, 'upstreamResult', update.upstreamResult);
    if (problem) throw new Error(`a provider's answer that could not be read back was not stored: ${problem}`);
    const rows = await this.db
      .update(mediaJobs)
      .set({
        phase: update.phase,
        upstreamTaskId: update.upstreamTaskId,
        upstreamResult: update.upstreamResult,
        updatedAt: update.now,
      })
      .where(and(eq(mediaJobs.id, id), eq(mediaJobs.claimedBy, owner), eq(mediaJobs.state, 'processing')))
      .returning({ id: mediaJobs.id });
    return rows.length === 1;
  }

  /**
   * A transient failure: nothing of this try reached a provider's books; the job runs again after `runAfter`, on
   * the row it was last sent to, with the rows tried so far (`fallbacks`, that failure's included).
   */
  async retryLater(
    id: string,
    owner: string,
    retry: { runAfter: Date; error: string; fallbacks: readonly GenerationAttempt[]; now: Date },
  ): Promise<boolean> {
    const { runAfter, error, fallbacks, now } = retry;
    const rows = await this.db
      .update(mediaJobs)
      .set({ phase: null, claimedBy: null, claimExpiresAt: null, runAfter, error, fallbacks, updatedAt: now })
      .where(and(eq(mediaJobs.id, id), eq(mediaJobs.claimedBy, owner), eq(mediaJobs.state, 'processing')))
      .returning({ id: mediaJobs.id });
    return rows.length === 1;
  }

  /**
   * Ends a job: its state, result and assets, the charge (the claim, within the ledger's floors) and the usage
   * record, all in one transaction. Answers what the ledger did; undefined, changing nothing, when `owner` no
   * longer holds the job.
   */
  async settle(job: SettledJob, owner: string, settlement: JobSettlement): Promise<LedgerSettlement | undefined> {
    const problem = settlement.result === null ? undefined : outputProblem(job.kind, 'result', settlement.result);
    if (problem) throw new Error(`a result that could not be read back was not stored: ${problem}`);
    return this.db.transaction(async (tx) => {
      const held = await tx
        .select({ id: mediaJobs.id })
        .from(mediaJobs)
        .where(and(eq(mediaJobs.id, job.id), eq(mediaJobs.claimedBy, owner), eq(mediaJobs.state, 'processing')))
        .for('update');
      if (held.length !== 1) return undefined;
      // Charged before the state changes: the state's trigger queues the job's webhook event, which shares the
      // endpoint's row, and a settlement takes the key and account locks before any endpoint's, as batches do
      // and as an endpoint's removal expects (webhooks-repository.ts).
      const settled = await chargeJob(tx, job, settlement);
      await tx
        .update(mediaJobs)
        .set({
          state: settlement.state,
          result: settlement.result,
          error: settlement.error,
          ...upstreamAnswerColumns(settlement.upstreamAnswer),
          claimedBy: null,
          claimExpiresAt: null,
          updatedAt: settlement.now,
          finishedAt: settlement.now,
        })
        .where(eq(mediaJobs.id, job.id));
      if (settled.shortUsage !== undefined) await recordShortCharge(tx, job.id, settled.shortUsage);
      if (settlement.assets.length > 0)
        await tx
          .insert(mediaAssets)
          .values(settlement.assets.map((asset) => ({ ...asset, createdAt: settlement.now })));
      return settled;
    });
  }

  /**
   * Cancels a job nothing was sent upstream for and no process is running: it ends `cancelled`, its hold is
   * released and its usage record says so, in one transaction. Undefined when the job is not the account's,
   * or is past that point.
   */
  async cancelUnsent(
    { id, accountId, kind }: { id: string; accountId: string; kind: MediaKind },
    now: Date,
  ): Promise<ReadJobRow | undefined> {
    return this.db.transaction(async (tx) => {
      const [job] = await tx
        .update(mediaJobs)
        .set({
          state: 'cancelled',
          error: 'cancelled by the client',
          claimedBy: null,
          claimExpiresAt: null,
          updatedAt: now,
          finishedAt: now,
        })
        .where(
          and(
            eq(mediaJobs.id, id),
            eq(mediaJobs.accountId, accountId),
            eq(mediaJobs.kind, kind),
            or(
              eq(mediaJobs.state, 'queued'),
              and(
                eq(mediaJobs.state, 'processing'),
                isNull(mediaJobs.phase),
                or(isNull(mediaJobs.claimedBy), lt(mediaJobs.claimExpiresAt, sql`now()`)),
              ),
            ),
          ),
        )
        .returning();
      if (!job) return undefined;
      await chargeJob(tx, job, {
        costNanos: 0n,
        claimNanos: 0n,
        record: usageRecord({
          generationId: job.id,
          accountId: job.accountId,
          apiKeyId: job.apiKeyId,
          model: job.model,
          modality: kind,
          status: 'cancelled',
          request: job.recordedRequest,
          usage: { cancelled: true },
          priceVersion: frozenPriceVersion(job.priceSnapshot),
          startedAt: job.createdAt.getTime(),
          endedAt: now.getTime(),
          claimNanos: 0n,
        }),
        now,
      });
      return readJob(job);
    });
  }

  async find(id: string): Promise<ReadJobRow | undefined> {
    const [row] = await this.db.select().from(mediaJobs).where(eq(mediaJobs.id, id));
    return row && readJob(row);
  }

  /** The assets of these ids that exist, in one read of the primary key. */
  findAssets(ids: readonly string[]): Promise<MediaAssetRow[]> {
    return this.db
      .select()
      .from(mediaAssets)
      .where(inArray(mediaAssets.id, [...ids]));
  }

  async assetsOfJob(jobId: string): Promise<MediaAssetRow[]> {
    return this.db.select().from(mediaAssets).where(eq(mediaAssets.jobId, jobId));
  }

  /** Assets past their retention, oldest first. */
  async expiredAssets(now: Date, limit: number): Promise<MediaAssetRow[]> {
    return this.db
      .select()
      .from(mediaAssets)
      .where(and(isNotNull(mediaAssets.expiresAt), lte(mediaAssets.expiresAt, now)))
      .orderBy(mediaAssets.expiresAt)
      .limit(limit);
  }

  async deleteAsset(id: string): Promise<void> {
    await this.db.delete(mediaAssets).where(eq(mediaAssets.id, id));
  }

  /**
   * One page of an account's succeeded jobs (of one kind, or all) that still have an output within its
   * retention at `now`, newest first, with their count and those outputs' assets. An output past its retention
   * is left out from that moment, whether or not the sweep has deleted it yet; a job whose outputs all passed
   * theirs has nothing left to show.
   */
  async listArchived(
    accountId: string,
    { kind, now }: { kind: MediaKind | undefined; now: Date },
    { offset, limit }: PageWindow,
  ): Promise<{ jobs: ArchivedJobRow[]; assets: MediaAssetRow[]; total: number }> {
    const retained = or(isNull(mediaAssets.expiresAt), gt(mediaAssets.expiresAt, now));
    const where = and(
      eq(mediaJobs.accountId, accountId),
      eq(mediaJobs.state, 'succeeded'),
      kind === undefined ? undefined : eq(mediaJobs.kind, kind),
      exists(
        this.db
          .select({ id: mediaAssets.id })
          .from(mediaAssets)
          .where(and(eq(mediaAssets.jobId, mediaJobs.id), retained)),
      ),
    );
    const [jobs, [totals]] = await Promise.all([
      this.db
        .select({
          id: mediaJobs.id,
          kind: mediaJobs.kind,
          model: mediaJobs.model,
          // Only an audio job's request is read (its text is what the media view shows); an image or video
          // job's holds its reference media inline, which a page of media has no use for.
          request: sql<unknown>`case when ${mediaJobs.kind} = 'audio' then ${mediaJobs.request} end`,
          recordedRequest: mediaJobs.recordedRequest,
          result: mediaJobs.result,
          createdAt: mediaJobs.createdAt,
        })
        .from(mediaJobs)
        .where(where)
        .orderBy(desc(mediaJobs.createdAt), desc(mediaJobs.id))
        .offset(offset)
        .limit(limit),
      this.db.select({ value: count() }).from(mediaJobs).where(where),
    ]);
    const assets =
      jobs.length === 0
        ? []
        : await this.db
            .select()
            .from(mediaAssets)
            .where(
              and(
                inArray(
                  mediaAssets.jobId,
                  jobs.map((job) => job.id),
                ),
                retained,
              ),
            );
    return { jobs, assets, total: totals?.value ?? 0 };
  }

  /**
   * The queue's depth: jobs of every process waiting and under way. Only these two states are counted (the
   * rows the partial index of due jobs covers), so a probe or scrape costs the same however many finished
   * jobs the table keeps.
   */
  async queueDepth(): Promise<{ queued: number; processing: number }> {
    const rows = await queryRows(
      this.db,
      sql`SELECT state, count(*) AS jobs FROM media_jobs WHERE state IN ('queued', 'processing') GROUP BY state`,
      queueDepthRows,
    );
    const depth = { queued: 0, processing: 0 };
    for (const row of rows)
      if (row.state === 'queued' || row.state === 'processing') depth[row.state] = Number(row.jobs);
    return depth;
  }
}

/** The columns of a provider's error answer (all null without one). */
function upstreamAnswerColumns(answer: UpstreamErrorAnswer | undefined) {
  return {
    upstreamErrorStatus: answer?.status ?? null,
    upstreamErrorBody: answer === undefined ? null : Buffer.from(answer.body, 'utf8'),
    upstreamErrorContentType: answer?.contentType ?? null,
    upstreamErrorRetryAfterMs: answer?.retryAfterMs ?? null,
  };
}

/** The provider's error answer a failed job kept, if it kept one. */
export function keptUpstreamAnswer(
  job: Pick<
    MediaJobRecord,
    'upstreamErrorStatus' | 'upstreamErrorBody' | 'upstreamErrorContentType' | 'upstreamErrorRetryAfterMs'
  >,
): UpstreamErrorAnswer | undefined {
  const { upstreamErrorStatus: status, upstreamErrorBody: body, upstreamErrorRetryAfterMs: retryAfterMs } = job;
  if (status === null || body === null) return undefined;
  return {
    status,
    body: body.toString('utf8'),
    contentType: job.upstreamErrorContentType ?? undefined,
    ...(retryAfterMs === null ? {} : { retryAfterMs }),
  };
}

/** A job's row with its stored JSON checked: typed, or unreadable with the reason. */
function readJob(record: MediaJobRecord): ReadJobRow {
  const stored = readStoredJob(record);
  return 'problem' in stored ? { ...record, problem: stored.problem } : { ...columnsOf(record), ...stored };
}

/** A row's columns without the JSON that `readStoredJob` checks. */
function columnsOf(record: MediaJobRecord): Omit<MediaJobRecord, StoredJsonColumns> {
  const {
    kind: _kind,
    request: _request,
    recordedRequest: _recorded,
    priceSnapshot: _prices,
    fallbacks: _fallbacks,
    upstreamResult: _upstream,
    result: _result,
    ...columns
  } = record;
  return columns;
}

/**
 * The job's settlement (gw_settle, as every settlement) and its usage record, inside the caller's transaction.
 * Answers what was charged, and the usage as written when that was less than the cost.
 */
async function chargeJob(
  tx: Database,
  job: Pick<SettledJob, 'holdId'>,
  settlement: Pick<JobSettlement, 'costNanos' | 'claimNanos' | 'record' | 'now'>,
): Promise<LedgerSettlement> {
  const { record } = settlement;
  const [settled] = await queryRows(
    tx,
    sql`SELECT was_held, charged::text AS charged, short_usage FROM gw_settle(${job.holdId}, false, ${record.accountId}, ${record.apiKeyId},
                         ${settlement.claimNanos}, ${settlement.costNanos}, ${settlement.now.toISOString()}::timestamptz,
                         ${record.generationId}, ${record.modality}, ${record.model}, ${record.status}, ${JSON.stringify(record.request ?? null)}::jsonb,
                         ${JSON.stringify(record.usage ?? null)}::jsonb, ${record.durationMs}, ${JSON.stringify(record.route ?? null)}::jsonb,
                         ${record.priceVersion ?? null})`,
    jobSettlement,
  );
  return {
    held: settled?.was_held === true,
    chargedNanos: BigInt(settled?.charged ?? '0'),
    shortUsage: settled?.short_usage ?? undefined,
  };
}

/** A cost the ledger did not charge whole: the job's result says what was charged and how much was not, as the record does. */
async function recordShortCharge(tx: Database, jobId: string, usage: unknown): Promise<void> {
  await tx.execute(
    sql`UPDATE media_jobs SET result = jsonb_set(result, '{usage}', COALESCE(result->'usage', '{}'::jsonb)
                 || jsonb_strip_nulls(jsonb_build_object('usdCost', u->'usdCost', 'unchargedUsdCost', u->'unchargedUsdCost')))
          FROM (SELECT ${JSON.stringify(usage)}::jsonb AS u) short
         WHERE id = ${jobId} AND jsonb_typeof(result) = 'object'`,
  );
}
