import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaAssets } from '../../src/storage/schema.ts';
import { expectEnvelope, keyHeaders, pollUntil } from '../support/http-helpers.ts';
import { waitForImageJob } from '../support/image-jobs.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * Once media retention (`media.retentionDays`) has deleted a job's archived output, polling the job says so: no
 * link that would answer 404 and no asset id that reuse would refuse, but `assetExpired: true` where they were
 * (alpha's videos: the spec's `expired` status), the rest of the job as it was.
 */
describe('a job polled after retention deleted its archived output', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    // The shipped gateway.yaml: its sandbox makes images, videos and speech offline.
    gateway = await startTestGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  /** Puts the job's assets past their retention; `sweep`: and lets retention delete them, as its timer would. */
  async function expire(jobId: string, { sweep }: { sweep: boolean }) {
    await gateway.gateway.core.storage.db
      .update(mediaAssets)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(mediaAssets.jobId, jobId));
    if (sweep) expect(await gateway.gateway.core.retention.sweep()).toBeGreaterThanOrEqual(1);
  }

  const poll = <T extends { status: string }>(key: string, url: string, done: (job: T) => boolean) =>
    pollUntil<T>(gateway, { key, url }, done);

  const pathOf = (link: string) => {
    const url = new URL(link);
    return `${url.pathname}${url.search}`;
  };

  it('an image job: each image without its link and asset id, marked expired, from the moment its retention ends', async () => {
    const { key } = await gateway.createFundedKey();
    const submitted = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-image', content: [{ type: 'text', text: 'kept a while' }], numberOfImages: 2 },
    });
    const { generationId } = submitted.json<{ generationId: string }>();
    const job = await waitForImageJob(gateway, { key, generationId });
    expect(job.status, job.error).toBe('succeeded');
    const { downloadUrl } = job.result!.images[0]!;
    expect((await gateway.request({ method: 'GET', url: pathOf(downloadUrl) })).statusCode).toBe(200);

    // Past its retention the output is gone to its owner (reuse refuses it) before the sweep has deleted it.
    for (const sweep of [false, true]) {
      await expire(generationId, { sweep });
      const expired = await waitForImageJob(gateway, { key, generationId });
      expect(expired.status).toBe('succeeded');
      expect(expired.result!.images).toEqual([{ assetExpired: true }, { assetExpired: true }]);
      expect(expired.result!.usage).toEqual(job.result!.usage);
    }
    expectEnvelope(await gateway.request({ method: 'GET', url: pathOf(downloadUrl) }), {
      status: 404,
      code: 'GW_NOT_FOUND',
      path: new URL(downloadUrl).pathname,
    });
  });

  it('a video task: native and alpha polls without links, the alpha job expired, its content 404', async () => {
    const { key } = await gateway.createFundedKey();
    const created = await gateway.request({
      method: 'POST',
      url: '/api/v1/video/generations',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-video', content: [{ type: 'text', text: 'a heron' }], duration: 1 },
    });
    expect(created.statusCode, created.body).toBe(200);
    const { taskId } = created.json<{ taskId: string }>();
    type Task = { status: string; downloadUrl?: string; usage?: { usdCost: number } };
    const task = await poll<Task>(key, `/api/v1/video/tasks/${taskId}`, (job) => job.status === 'succeeded');
    expect(task.downloadUrl).toBeDefined();
    const alpha = await poll<{ status: string }>(key, `/api/alpha/v1/videos/${taskId}`, () => true);
    expect(alpha).toMatchObject({ status: 'completed', unsigned_urls: [expect.any(String)] });

    await expire(taskId, { sweep: true });
    const expired = await poll<Task>(key, `/api/v1/video/tasks/${taskId}`, () => true);
    expect(expired).toMatchObject({ status: 'succeeded', assetExpired: true, usage: task.usage });
    for (const field of ['videoUrl', 'downloadUrl', 'assetId']) expect(expired).not.toHaveProperty(field);

    const alphaExpired = await poll<{ status: string }>(key, `/api/alpha/v1/videos/${taskId}`, () => true);
    expect(alphaExpired).toMatchObject({ id: taskId, status: 'expired', usage: { cost: task.usage!.usdCost } });
    expect(alphaExpired).not.toHaveProperty('unsigned_urls');
    const content = expectEnvelope(
      await gateway.request({
        method: 'GET',
        url: `/api/alpha/v1/videos/${taskId}/content`,
        headers: keyHeaders(key),
      }),
      { status: 404, code: 'GW_NOT_FOUND', path: `/api/alpha/v1/videos/${taskId}/content` },
    );
    expect(content.errors[0]).toContain('media.retentionDays');
  });

  it('an audio job: no audioUrl, marked expired, what it said of the audio kept', async () => {
    const { key } = await gateway.createFundedKey();
    const submitted = await gateway.request({
      method: 'POST',
      url: '/api/v1/audio/text-to-speech',
      headers: keyHeaders(key),
      payload: { voiceType: 'zh_female_vv_uranus_bigtts', text: 'Hello there.', enableSubtitle: true },
    });
    const { generationId } = submitted.json<{ generationId: string }>();
    type Audio = { status: string; audioUrl?: string; subtitle?: unknown };
    const url = `/api/v1/audio/generations/${generationId}`;
    const job = await poll<Audio>(key, url, (audio) => audio.status === 'succeeded' || audio.status === 'failed');
    expect(job.audioUrl).toBeDefined();

    await expire(generationId, { sweep: true });
    const expired = await poll<Audio>(key, url, () => true);
    expect(expired).toMatchObject({ status: 'succeeded', assetExpired: true, subtitle: job.subtitle });
    expect(expired).not.toHaveProperty('audioUrl');
  });
});
