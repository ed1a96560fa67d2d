/**
 * The job worker holds a job to its deadline whatever its runner does: a runner whose call ignores the deadline's
 * signal is given up a moment after it and the job failed (the runner's later writes changing nothing), and a
 * runner whose aborted call asks for a retry fails for its time instead of being queued again, as does one that
 * succeeds past it (what it archived deleted). A request waiting for its job (OpenAI's image route) waits until it
 * ends, the grace past the deadline included.
 */
import { describe, expect, it } from 'vitest';
import type { JobsConfig } from '../../src/config/load-config.ts';
import type { JobContext, JobOutcome, JobRunner } from '../../src/jobs/job-runner.ts';
import { JobWaiters } from '../../src/jobs/job-waiters.ts';
import { JobWorker, type JobWorkerOptions, type WorkerJobs } from '../../src/jobs/job-worker.ts';
import { JobSubmission } from '../../src/gateway/job-submission.ts';
import type { JobSettlement, MediaJobRow } from '../../src/storage/media-jobs-repository.ts';
import { UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { quietResilience } from '../support/quiet-resilience.ts';

const config: JobsConfig = {
  concurrency: 1,
  claimSeconds: 30,
  maxAttempts: 3,
  retryBaseMs: 50,
  maxJobSeconds: 1,
  idlePollMs: 60_000,
  syncWaitMs: 0,
  taskPollMs: 100,
};

function jobRow(deadlineAt: Date): MediaJobRow {
  const now = new Date();
  return {
    id: 'gen_deadline',
    accountId: 'acct',
    apiKeyId: null,
    kind: 'image',
    model: 'm',
    providerId: 'p',
    upstreamModel: 'u',
    requestId: null,
    routingStrategy: null,
    request: { images: [], numberOfImages: 1 },
    recordedRequest: { operation: 'image-generation' },
    state: 'processing',
    phase: null,
    upstreamTaskId: null,
    upstreamResult: null,
    attempts: 0,
    fallbacks: [],
    priceSnapshot: { kind: 'per-image', nanos: '1000' },
    holdId: 'hold',
    holdNanos: 1000n,
    result: null,
    error: null,
    upstreamErrorStatus: null,
    upstreamErrorBody: null,
    upstreamErrorContentType: null,
    upstreamErrorRetryAfterMs: null,
    claimedBy: 'me',
    claimExpiresAt: null,
    runAfter: now,
    deadlineAt,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
}

/** One job, claimed once; its writes recorded. */
class OneJob implements WorkerJobs {
  claimed = false;
  /** The job as a read of its row finds it: in its settled state once settled. */
  read = (): Promise<MediaJobRow> => {
    const settled = this.settlements.at(-1)?.settlement;
    return Promise.resolve(settled ? { ...this.job, state: settled.state } : this.job);
  };
  readonly writes: string[] = [];
  readonly settlements: Array<{ settlement: JobSettlement; at: number }> = [];
  constructor(readonly job: MediaJobRow) {}
  dueProviders = () => Promise.resolve(this.claimed ? [] : [this.job.providerId]);
  claim = () => {
    const first = !this.claimed;
    this.claimed = true;
    return Promise.resolve(first ? [this.job] : []);
  };
  extendClaim = () => Promise.resolve(this.settlements.length === 0);
  markSent = () => {
    this.writes.push('sent');
    return Promise.resolve(this.settlements.length === 0);
  };
  recordUpstream = () => {
    this.writes.push('upstream');
    return Promise.resolve(this.settlements.length === 0);
  };
  retryLater = () => {
    this.writes.push('retry');
    return Promise.resolve(true);
  };
  /** Another process has taken the job over and settled it: this one's settle is refused. */
  takenOver = false;
  settle = (_job: MediaJobRow, _owner: string, settlement: JobSettlement) => {
    this.settlements.push({ settlement, at: Date.now() });
    this.settleTried();
    if (this.takenOver) return Promise.resolve(undefined);
    return Promise.resolve({ held: true, chargedNanos: settlement.claimNanos, shortUsage: undefined });
  };
  private settleTried: () => void = () => undefined;
  /** Resolves once the worker tries to settle the job, refused or not. */
  readonly settleAttempted = new Promise<void>((resolve) => (this.settleTried = resolve));
}

/** The object store as the worker sees it: the keys, and the folders of keys, it was asked to delete. */
class DeletedObjects {
  readonly keys: string[] = [];
  readonly folders: string[] = [];
  /** How the store answers a folder's deletion: done, refused (a store refusing the listing), or never. */
  constructor(readonly folderDeletion: 'done' | 'refused' | 'hangs' = 'done') {}
  /** The jobs whose folder the worker was told it could not delete. */
  readonly refusals: string[] = [];
  delete = (key: string) => {
    this.keys.push(key);
    return Promise.resolve();
  };
  deleteFolder = (folder: string) => {
    this.folders.push(folder);
    if (this.folderDeletion === 'refused') return Promise.reject(new Error('AccessDenied: s3:ListBucket'));
    return this.folderDeletion === 'hangs' ? new Promise<void>(() => undefined) : Promise.resolve();
  };
}

async function runOne(
  runner: (context: JobContext) => Promise<JobOutcome>,
  deadlineInMs: number,
  {
    dispatch = { resilience: quietResilience(), rowsOf: () => [] },
    jobs = new OneJob(jobRow(new Date(Date.now() + deadlineInMs))),
    store = new DeletedObjects(),
  }: { dispatch?: Pick<JobWorkerOptions, 'resilience' | 'rowsOf'>; jobs?: OneJob; store?: DeletedObjects } = {},
): Promise<{ jobs: OneJob; deadlineAt: number; finished: number; foldersWhenFinished: string[] }> {
  const deadlineAt = jobs.job.deadlineAt.getTime();
  let foldersWhenFinished: string[] = [];
  let finish: (at: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (finish = resolve));
  const imageRunner: JobRunner<'image'> = { run: (_job, context) => runner(context) };
  const worker = new JobWorker({
    jobs,
    store,
    maxDurationOverrun: 1.1,
    runners: { image: imageRunner },
    providers: new Map(),
    ...dispatch,
    owner: 'me',
    config: { ...config },
    onFinished: (jobId) => {
      foldersWhenFinished = [...store.folders];
      waiters.finished(jobId);
      finish(Date.now());
    },
    onError: (error) => {
      throw error;
    },
    onDiscardFailed: (_error, jobId) => store.refusals.push(jobId),
  });
  worker.start();
  const at = await finished;
  await worker.stop(0);
  return { jobs, deadlineAt, finished: at, foldersWhenFinished };
}

/** Requests of this file waiting for their jobs, woken as the worker finishes them. */
const waiters = new JobWaiters();

describe('job deadlines in the worker', () => {
  it('gives up a runner that ignores the deadline, fails its job moments after, ignores its late writes and deletes its late outputs', async () => {
    let late: boolean | undefined;
    let release: () => void = () => undefined;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const store = new DeletedObjects();
    const jobs = new OneJob(jobRow(new Date(Date.now() + 300)));
    const asset = { id: 'asset_late', accountId: 'acct', jobId: jobs.job.id, mediaType: 'image/png', bytes: 3 };
    const run = runOne(
      async (context) => {
        await context.dispatch(async (_row, markSent) => {
          await markSent();
          await stuck; // a call that never looks at `context.deadline`
        });
        late = await context.recordGenerated({ images: [] });
        const assets = [{ ...asset, objectKey: 'images/gen_deadline/0.png', expiresAt: null }];
        return { kind: 'succeeded', result: {}, usage: {}, costNanos: 1000n, assets };
      },
      300,
      { jobs, store },
    );
    const { deadlineAt, finished } = await run;
    expect(jobs.settlements).toHaveLength(1);
    expect(jobs.settlements[0]!.settlement).toMatchObject({
      state: 'failed',
      costNanos: 0n,
      error: 'the job did not finish within 1 seconds',
    });
    expect(finished - deadlineAt).toBeGreaterThanOrEqual(0);
    expect(finished - deadlineAt).toBeLessThan(3000);
    expect(store.keys).toEqual([]);
    expect(store.folders).toEqual(['images/gen_deadline/']);
    release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(late).toBe(false);
    expect(jobs.writes).toEqual(['sent']);
    // What it stored once it ended, its job already failed, no asset names: deleted, with the job's folder.
    expect(store.keys).toEqual([]);
    expect(store.folders).toEqual(['images/gen_deadline/', 'images/gen_deadline/']);
  });

  it('deletes the folder of a given-up run once it ends, when what it stored was never named (its record refused)', async () => {
    let release: () => void = () => undefined;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    let ended: () => void = () => undefined;
    const lateRun = new Promise<void>((resolve) => (ended = resolve));
    const store = new DeletedObjects();
    await runOne(
      async (context) => {
        await context.dispatch(async (_row, markSent) => {
          await markSent();
          await stuck;
        });
        // As the image runner does: its inline outputs are stored, then the answer naming them is refused.
        const recorded = await context.recordGenerated({ images: [] });
        ended();
        return recorded ? { kind: 'failed', error: 'not this way', costNanos: 0n } : { kind: 'lost' };
      },
      300,
      { store },
    );
    expect(store.folders).toEqual(['images/gen_deadline/']);
    release();
    await lateRun;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(store.keys).toEqual([]);
    expect(store.folders).toEqual(['images/gen_deadline/', 'images/gen_deadline/']);
  });

  it('fails a job taken over past its deadline without running it, and sets about deleting its folder before telling its waiters', async () => {
    let ran = false;
    const store = new DeletedObjects();
    const { jobs, foldersWhenFinished } = await runOne(
      () => {
        ran = true;
        return Promise.resolve({ kind: 'failed', error: 'run', costNanos: 0n });
      },
      -1000,
      { store },
    );
    expect(ran).toBe(false);
    expect(jobs.writes).toEqual([]);
    expect(jobs.settlements.map(({ settlement }) => settlement)).toMatchObject([
      { state: 'failed', costNanos: 0n, claimNanos: 0n, error: 'the job did not finish within 1 seconds', assets: [] },
    ]);
    // What a process killed while it ran had stored is under its folder, whether or not its row named it.
    expect(foldersWhenFinished).toEqual(['images/gen_deadline/']);
    expect(store.keys).toEqual([]);
  });

  it('deletes the folder of a job whose run fails, charging what the run said, and keeps that of one that succeeds', async () => {
    const failing = new DeletedObjects();
    const failed = await runOne(() => Promise.resolve({ kind: 'failed', error: 'refused', costNanos: 10n }), 5000, {
      store: failing,
    });
    expect(failed.jobs.settlements.map(({ settlement }) => settlement)).toMatchObject([
      { state: 'failed', costNanos: 10n, error: 'refused' },
    ]);
    expect(failed.foldersWhenFinished).toEqual(['images/gen_deadline/']);
    const succeeding = new DeletedObjects();
    const asset = { id: 'asset_kept', accountId: 'acct', jobId: 'gen_deadline', mediaType: 'image/png', bytes: 3 };
    const assets = [{ ...asset, objectKey: 'images/gen_deadline/0.png', expiresAt: null }];
    await runOne(() => Promise.resolve({ kind: 'succeeded', result: {}, usage: {}, costNanos: 1000n, assets }), 5000, {
      store: succeeding,
    });
    expect(succeeding.folders).toEqual([]);
    expect(succeeding.keys).toEqual([]);
  });

  it('tells the operator of a folder the store would not delete, and still fails the job', async () => {
    const refusing = new DeletedObjects('refused');
    const { jobs } = await runOne(() => Promise.resolve({ kind: 'failed', error: 'refused', costNanos: 0n }), 5000, {
      store: refusing,
    });
    expect(jobs.settlements.map(({ settlement }) => settlement.state)).toEqual(['failed']);
    expect(refusing.refusals).toEqual(['gen_deadline']);
  });

  it('ends a failed job, telling its waiters and freeing its slot, while a store does not answer its deletion', async () => {
    const hanging = new DeletedObjects('hangs');
    const { jobs, foldersWhenFinished } = await runOne(
      () => Promise.resolve({ kind: 'failed', error: 'refused', costNanos: 0n }),
      5000,
      { store: hanging },
    );
    expect(jobs.settlements.map(({ settlement }) => settlement.state)).toEqual(['failed']);
    expect(foldersWhenFinished).toEqual(['images/gen_deadline/']);
  });

  it('deletes nothing of a job it could not settle: another process took it over, maybe to success, under the same keys', async () => {
    const store = new DeletedObjects();
    const jobs = new OneJob(jobRow(new Date(Date.now() + 200)));
    // The claim ran out unnoticed (the renewal had not run yet): the job is another process's, settled.
    jobs.takenOver = true;
    const worker = new JobWorker({
      jobs,
      store,
      maxDurationOverrun: 1.1,
      runners: {
        image: {
          // A run that succeeds in the grace past its deadline, its asset under the job's own key.
          run: async (_job, context) => {
            await context.dispatch(async (_row, markSent) => {
              await markSent();
              await new Promise((resolve) => setTimeout(resolve, 500));
            });
            const asset = { id: 'asset_a', accountId: 'acct', jobId: 'gen_deadline', mediaType: 'image/png', bytes: 3 };
            const assets = [{ ...asset, objectKey: 'images/gen_deadline/0.png', expiresAt: null }];
            return { kind: 'succeeded', result: {}, usage: {}, costNanos: 1000n, assets };
          },
        },
      },
      providers: new Map(),
      resilience: quietResilience(),
      rowsOf: () => [],
      owner: 'me',
      config: { ...config },
      onFinished: () => undefined,
      onError: (error) => {
        throw error;
      },
      onDiscardFailed: (error) => {
        throw error;
      },
    });
    worker.start();
    await jobs.settleAttempted;
    await worker.stop(1000);
    expect(store.keys).toEqual([]);
    expect(store.folders).toEqual([]);
  });

  it('fails on time a run that succeeds in the grace past its deadline, deleting its outputs, and keeps a request waiting for its job until then', async () => {
    const jobs = new OneJob(jobRow(new Date(Date.now() + 200)));
    const store = new DeletedObjects();
    const archived = { id: 'asset_late', accountId: 'acct', jobId: jobs.job.id, mediaType: 'image/png', bytes: 3 };
    const submission = new JobSubmission({
      jobs: {
        find: jobs.read,
        submit: () => Promise.reject(new Error('nothing is submitted here')),
        findAssets: () => Promise.resolve([]),
        assetsOfJob: () => Promise.resolve([]),
      },
      ledger: {
        freeLeasedCredit: () => Promise.resolve(),
        refusal: () => Promise.reject(new Error('nothing is refused here')),
      },
      waiters,
      config,
      announce: () => undefined,
    });
    // The request waits as OpenAI's image route does: until its job ends.
    const waited = submission.waitFor(
      { accountId: 'acct', apiKeyId: null },
      { generationId: jobs.job.id, kind: 'image' },
      {},
    );
    const { deadlineAt, finished } = await runOne(
      async (context) => {
        await context.dispatch(async (_row, markSent) => {
          await markSent();
          // A call that ignores the deadline's signal and ends well within the grace after it.
          await new Promise((resolve) => setTimeout(resolve, jobs.job.deadlineAt.getTime() + 500 - Date.now()));
        });
        const assets = [{ ...archived, objectKey: 'images/gen_deadline/0.png', expiresAt: null }];
        return { kind: 'succeeded', result: {}, usage: {}, costNanos: 1000n, assets };
      },
      200,
      { jobs, store },
    );
    expect(finished).toBeGreaterThan(deadlineAt);
    // Not finished within its time: failed as the documentation says, uncharged, its output deleted (no asset names it).
    expect(jobs.settlements.map(({ settlement }) => settlement)).toMatchObject([
      { state: 'failed', costNanos: 0n, error: 'the job did not finish within 1 seconds', assets: [] },
    ]);
    expect(store.folders).toEqual(['images/gen_deadline/']);
    // The request that waited for it sees it end so.
    expect((await waited).state).toBe('failed');
  });

  it('fails a job whose aborted call asks for a retry, instead of queueing it again', async () => {
    const { jobs, deadlineAt, finished } = await runOne(
      (context) =>
        new Promise<JobOutcome>((resolve) => {
          context.deadline.addEventListener('abort', () =>
            resolve({ kind: 'retry', error: 'the upstream provider could not be reached' }),
          );
        }),
      200,
    );
    expect(jobs.writes).toEqual([]);
    expect(jobs.settlements.map(({ settlement }) => settlement)).toMatchObject([
      { state: 'failed', costNanos: 0n, error: 'the job did not finish within 1 seconds' },
    ]);
    expect(finished - deadlineAt).toBeLessThan(1000);
  });

  it("neither counts a call cut by the deadline against its row's breaker nor sends the job to another row", async () => {
    // One failure of one account would open a row: the cut call must not be one.
    const resilience = quietResilience({ failures: 1, minAccounts: 1, cooldownMs: 60_000 });
    const rows = [
      { providerId: 'p', upstreamModel: 'u' },
      { providerId: 'q', upstreamModel: 'v' },
    ];
    const sentTo: string[] = [];
    const { jobs } = await runOne(
      async (context) => {
        const sent = await context.dispatch(async (row, markSent) => {
          sentTo.push(row.providerId);
          await markSent();
          await new Promise((resolve) => context.deadline.addEventListener('abort', resolve));
          throw new UpstreamUnreachableError('connect', 'the upstream provider could not be reached');
        });
        return 'outcome' in sent ? sent.outcome : { kind: 'failed', error: 'served', costNanos: 0n };
      },
      300,
      { dispatch: { resilience, rowsOf: () => rows } },
    );
    expect(sentTo).toEqual(['p']);
    expect(resilience.breakers.available(rows[0]!)).toBe(true);
    expect(jobs.settlements.map(({ settlement }) => settlement)).toMatchObject([
      { state: 'failed', error: 'the job did not finish within 1 seconds' },
    ]);
  });

  it('sends a job whose row left the catalog to the rows now serving its model, never to a stand-in', async () => {
    const standIn = { providerId: 'sandbox', upstreamModel: 'speech', standIn: true };
    const sentTo = async (rows: Array<{ providerId: string; upstreamModel: string; standIn?: boolean }>) => {
      const sent: string[] = [];
      await runOne(
        async (context) => {
          await context.dispatch(async (row, markSent) => {
            sent.push(row.providerId);
            await markSent();
          });
          return { kind: 'failed', error: 'served', costNanos: 0n };
        },
        5000,
        { dispatch: { resilience: quietResilience(), rowsOf: () => rows } },
      );
      return sent;
    };
    // The job is on p/u, which left the catalog (its provider lost its key).
    expect(await sentTo([{ providerId: 'q', upstreamModel: 'v' }, standIn])).toEqual(['q']);
    // Only a stand-in left: the job goes to its own row, whose runner fails it, rather than to made-up output.
    expect(await sentTo([standIn])).toEqual(['p']);
  });
});
