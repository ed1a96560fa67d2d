/**
 * A video task whose provider another process does not have (removed from its gateway.yaml, or its key gone):
 * that process leaves the job to one that can follow the task, rather than failing it uncharged while the
 * provider makes (and bills the operator for) the video. The process that has the provider takes it over,
 * delivers the video and charges it. Two gateways on one database stand for two processes.
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ReadJobRow } from '../../src/storage/media-jobs-repository.ts';
import { mediaJobs } from '../../src/storage/schema.ts';
import { startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { heldNanosOf, keyHeaders, usageRecords } from '../support/http-helpers.ts';
import { balanceNanosOf } from '../support/image-jobs.ts';
import { fakeProviderYaml, sandboxConfigYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { seedanceModel } from '../support/video-models.ts';

const jobs = 'jobs: { taskPollMs: 20, idlePollMs: 50, claimSeconds: 2 }';

describe('a video task resumed by a process without its provider', () => {
  let ark: FakeServer;
  let withProvider: TestGateway;
  let withoutProvider: TestGateway;

  beforeAll(async () => {
    ark = await startArkFake();
    withProvider = await startTestGateway({
      upstreams: [ark],
      configText: ['providers:', fakeProviderYaml('ark', 'ark', ark), 'models:', seedanceModel, jobs].join('\n'),
    });
    withoutProvider = await startTestGateway({
      configText: sandboxConfigYaml(jobs),
      sharedDatabase: withProvider.database,
    });
    // It looks for jobs only once the job's task exists (it would take a job not yet sent, too, and fail it).
    await withoutProvider.gateway.core.worker.stop(0);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await withoutProvider?.close();
    await withProvider?.close();
  });

  const jobRow = async (id: string) => {
    const [row] = await withProvider.gateway.core.storage.db.select().from(mediaJobs).where(eq(mediaJobs.id, id));
    return row!;
  };

  /**
   * A funded key's video job whose task the provider runs for `reads` reads, once its task is stored; the
   * process that sent it then stops claiming jobs.
   */
  async function taskLeftBehind(reads: number): Promise<{ key: string; accountId: string; taskId: string }> {
    const { key, accountId } = await withProvider.createFundedKey({ credits: 10 });
    const submitted = await withProvider.request({
      method: 'POST',
      url: '/api/v1/video/generations',
      headers: keyHeaders(key),
      payload: { model: 'seedance', content: [{ type: 'text', text: `a kite fake-video-slow-${reads}` }], duration: 5 },
    });
    expect(submitted.statusCode, submitted.body).toBe(200);
    const { taskId } = submitted.json<{ taskId: string }>();
    await expect.poll(async () => (await jobRow(taskId)).phase, { timeout: 10_000 }).toBe('task');
    await withProvider.gateway.core.worker.stop(0);
    return { key, accountId, taskId };
  }

  it('is left to the process that has the provider, which delivers and charges it', { timeout: 60_000 }, async () => {
    // The process that sent it stops claiming, and loses its claim as a process that died would.
    const { key, accountId, taskId } = await taskLeftBehind(150);
    const claims: ReadJobRow[][] = [];
    let claimLost = false;
    const jobsRepository = withoutProvider.gateway.core.upkeep.mediaJobs;
    const claim = jobsRepository.claim.bind(jobsRepository);
    const watched = vi.spyOn(jobsRepository, 'claim').mockImplementation(async (owner, options) => {
      const afterLoss = claimLost;
      const claimed = await claim(owner, options);
      if (afterLoss && options.providerId === 'ark') claims.push(claimed);
      return claimed;
    });
    await withProvider.gateway.core.storage.db
      .update(mediaJobs)
      .set({ claimedBy: 'a-stopped-process', claimExpiresAt: sql`now() - interval '1 second'` })
      .where(eq(mediaJobs.id, taskId));
    claimLost = true;
    withoutProvider.gateway.core.worker.start();

    // The process without the provider looks at the provider's due jobs, and takes none of them.
    await expect.poll(() => claims.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect(claims.flat().map((job) => job.id)).toEqual([]);
    expect((await jobRow(taskId)).state).toBe('processing');
    watched.mockRestore();
    await withoutProvider.gateway.core.worker.stop(0);

    // The process with the provider claims it again, follows the task to its end and charges the video.
    withProvider.gateway.core.worker.start();
    await expect.poll(async () => (await jobRow(taskId)).state, { timeout: 30_000, interval: 100 }).toBe('succeeded');
    const [record] = await usageRecords(withProvider, key);
    expect(record).toMatchObject({ modality: 'video', status: 'succeeded' });
    expect(record!.usdCost).toBeGreaterThan(0);
    expect(await heldNanosOf(withProvider, accountId)).toBe(0n);
    expect(await balanceNanosOf(withProvider, accountId)).toBeLessThan(10_000_000_000n);
  });

  it('is failed past its deadline by a process without the provider, its hold given back', {
    timeout: 60_000,
  }, async () => {
    const { accountId, taskId } = await taskLeftBehind(100_000);
    await withProvider.gateway.core.storage.db
      .update(mediaJobs)
      .set({
        claimedBy: 'a-stopped-process',
        claimExpiresAt: sql`now() - interval '1 second'`,
        deadlineAt: sql`now() - interval '1 second'`,
      })
      .where(eq(mediaJobs.id, taskId));
    withoutProvider.gateway.core.worker.start();
    await expect.poll(async () => (await jobRow(taskId)).state, { timeout: 10_000, interval: 100 }).toBe('failed');
    expect((await jobRow(taskId)).claimedBy).not.toBe('a-stopped-process');
    expect(await heldNanosOf(withProvider, accountId)).toBe(0n);
    expect(await balanceNanosOf(withProvider, accountId)).toBe(10_000_000_000n);
  });
});
