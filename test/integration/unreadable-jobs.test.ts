/**
 * A job whose stored JSON this release cannot read (as when a release changes a request type under a job
 * already queued) is not run on a guess: the worker that claims it fails it with the reason, which the job's
 * GET shows as the spec's failed job, and its hold goes back to the nano. Image, video and audio jobs, each
 * with one of its stored values (request, prices, the provider's answer) made not to match, on the embedded
 * database and on PostgreSQL alike.
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { JobWorker } from '../../src/jobs/job-worker.ts';
import { quietResilience } from '../support/quiet-resilience.ts';
import { MediaJobsRepository } from '../../src/storage/media-jobs-repository.ts';
import { generations, mediaJobs } from '../../src/storage/schema.ts';
import { startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startSpeechFake } from '../fakes/speech-fake.ts';
import { keyHeaders } from '../support/http-helpers.ts';
import { mediaJobCatalog } from '../support/media-job-catalog.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

const credits = 5;
const text = (value: string) => ({ type: 'text', text: value });

interface Case {
  submit: { url: string; body: Record<string, unknown> };
  poll: (id: string) => string;
  /** SQL that makes one stored value of the job unreadable. */
  spoil: (id: string) => ReturnType<typeof sql>;
  /** What the failure names: the stored value and where in it. */
  reason: RegExp;
}

const cases: Record<string, Case> = {
  'an image job whose stored request has a quality this release does not know': {
    submit: { url: '/api/v1/image/generations/async', body: { model: 'seedream', content: [text('a lighthouse')] } },
    poll: (id) => `/api/v1/image/generations/async/${id}`,
    spoil: (id) => sql`UPDATE media_jobs SET request = request || '{"quality": "ultra"}'::jsonb WHERE id = ${id}`,
    reason: /^the request stored with this image job is not one this release of the gateway can run \(\/quality /,
  },
  'a video job whose price snapshot lost its price': {
    submit: { url: '/api/v1/video/generations', body: { model: 'seedance', content: [text('waves')], duration: 2 } },
    poll: (id) => `/api/v1/video/tasks/${id}`,
    spoil: (id) => sql`UPDATE media_jobs SET price_snapshot = price_snapshot - 'nanos' WHERE id = ${id}`,
    reason: /^the price snapshot stored with this video job is not one this release of the gateway can run /,
  },
  'an image job whose stored answer of the provider is of an earlier shape': {
    submit: { url: '/api/v1/image/generations/async', body: { model: 'seedream', content: [text('a harbour')] } },
    poll: (id) => `/api/v1/image/generations/async/${id}`,
    spoil: (id) =>
      sql`UPDATE media_jobs SET phase = 'generated', upstream_result = '{"data": [{"url": "https://example.com/a.png"}]}'::jsonb WHERE id = ${id}`,
    reason: /^the provider's answer stored with this image job is not one this release of the gateway can run /,
  },
  'a text-to-speech job whose stored request is of an earlier shape': {
    submit: {
      url: '/api/v1/audio/text-to-speech',
      body: { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hello there' },
    },
    poll: (id) => `/api/v1/audio/generations/${id}`,
    spoil: (id) =>
      sql`UPDATE media_jobs SET request = (request - 'text') || '{"input": "hello there"}'::jsonb WHERE id = ${id}`,
    reason: /^the request stored with this audio job is not one this release of the gateway can run /,
  },
};

describe('jobs whose stored JSON this release cannot read', () => {
  let gateway: TestGateway;
  let ark: FakeServer;
  let speech: FakeServer;

  beforeAll(async () => {
    [ark, speech] = await Promise.all([startArkFake(), startSpeechFake()]);
    gateway = await startTestGateway({
      upstreams: [ark, speech],
      // The gateway runs no jobs itself: each is spoiled while queued, then claimed by the worker below.
      configText: mediaJobCatalog({ ark, speech, jobs: 'jobs: { concurrency: 0 }' }),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it.each(Object.entries(cases))('fails %s with the reason and gives its hold back', async (_name, job) => {
    const { accountId, key } = await gateway.createFundedKey({ credits });
    const db = gateway.gateway.core.storage.db;
    const submitted = await gateway.request({
      method: 'POST',
      url: job.submit.url,
      headers: keyHeaders(key),
      payload: job.submit.body,
    });
    expect(submitted.statusCode, submitted.body).toBeLessThan(300);
    const { generationId } = submitted.json<{ generationId: string }>();
    const [queued] = await db.select().from(mediaJobs).where(eq(mediaJobs.id, generationId));
    expect(queued).toMatchObject({ state: 'queued', accountId });
    expect(queued!.holdNanos).toBeGreaterThan(0n);
    await uncheckedRows(db, job.spoil(generationId));

    let finished: (id: string) => void = () => undefined;
    const done = new Promise<string>((resolve) => (finished = resolve));
    const errors: unknown[] = [];
    const worker = new JobWorker({
      jobs: new MediaJobsRepository(db),
      store: gateway.gateway.core.store,
      // No runner: a job that could not be read must not reach one.
      runners: {},
      providers: new Map(),
      resilience: quietResilience(),
      rowsOf: () => [],
      owner: 'unreadable-jobs-test',
      config: { ...gateway.gateway.core.services.config.jobs, concurrency: 1, idlePollMs: 50 },
      maxDurationOverrun: gateway.gateway.core.services.config.limits.maxDurationOverrun,
      onFinished: finished,
      onError: (error) => errors.push(error),
      onDiscardFailed: (error) => errors.push(error),
    });
    worker.start();
    try {
      expect(await done).toBe(generationId);
    } finally {
      await worker.stop(1000);
    }
    expect(errors).toEqual([]);

    const [failed] = await db.select().from(mediaJobs).where(eq(mediaJobs.id, generationId));
    expect(failed).toMatchObject({ state: 'failed', claimedBy: null, attempts: 0 });
    expect(failed!.error).toMatch(job.reason);
    const polled = await gateway.request({ method: 'GET', url: job.poll(generationId), headers: keyHeaders(key) });
    expect(polled.statusCode, polled.body).toBe(200);
    expect(polled.json()).toMatchObject({ status: 'failed', error: failed!.error });

    const [record] = await db.select().from(generations).where(eq(generations.id, generationId));
    expect(record).toMatchObject({ status: 'failed', usdCostNanos: 0n });
    await gateway.settled();
    const [books] = await uncheckedRows<{ balance: string; held: string; holds: string }>(
      db,
      sql`SELECT (SELECT balance_nanos FROM accounts WHERE id = ${accountId})::text AS balance,
                 (SELECT held_nanos FROM accounts WHERE id = ${accountId})::text AS held,
                 (SELECT count(*) FROM holds WHERE account_id = ${accountId})::text AS holds`,
    );
    expect(books).toEqual({ balance: String(usdToNanos(credits)), held: '0', holds: '0' });
  });
});
