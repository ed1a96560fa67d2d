import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { heldNanosOf, keyHeaders, shippedConfigWith } from '../support/http-helpers.ts';
import { balanceNanosOf, waitForImageJob } from '../support/image-jobs.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * The trigger words of sandbox job prompts (docs/sandbox.md) on the shipped catalog's sandbox models: a
 * job that fails, is cancelled or runs until its time limit, each ending with its reason, its hold given
 * back and nothing charged; and ModelArk's prompt options, which the sandbox image model takes and ignores.
 */
const maxJobSeconds = 3;

interface VideoTask {
  taskId: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  error?: string;
}

interface AudioJob {
  status: string;
  error?: string;
}

describe('sandbox job trigger words', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      configText: shippedConfigWith({
        jobs: `jobs:\n  maxJobSeconds: ${maxJobSeconds}\n  taskPollMs: 20\n  idlePollMs: 20\n`,
      }),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  /** A funded key whose account must end every test as it began: nothing held, nothing charged. */
  async function account() {
    const funded = await gateway.createFundedKey({ credits: 1 });
    return {
      ...funded,
      async untouched() {
        expect(await heldNanosOf(gateway, funded.accountId)).toBe(0n);
        expect(await balanceNanosOf(gateway, funded.accountId)).toBe(usdToNanos(1));
      },
    };
  }

  async function submitImage(key: string, payload: Record<string, unknown>): Promise<string> {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-image', ...payload },
    });
    expect(response.statusCode, response.body).toBeLessThan(300);
    return response.json<{ generationId: string }>().generationId;
  }

  const readVideo = async (key: string, taskId: string) =>
    (
      await gateway.request({ method: 'GET', url: `/api/v1/video/tasks/${taskId}`, headers: keyHeaders(key) })
    ).json<VideoTask>();

  /** Reads a video task until it ends, collecting the states it was seen in. */
  async function videoEnd(key: string, taskId: string, seen: Set<string>): Promise<VideoTask> {
    for (;;) {
      const task = await readVideo(key, taskId);
      seen.add(task.status);
      if (task.status === 'succeeded' || task.status === 'failed' || task.status === 'cancelled') return task;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function submitVideo(key: string, prompt: string): Promise<string> {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/video/generations',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-video', content: [{ type: 'text', text: prompt }], duration: 1, resolution: '480p' },
    });
    expect(response.statusCode, response.body).toBeLessThan(300);
    return response.json<VideoTask>().taskId;
  }

  const image = (prompt: string) => ({ content: [{ type: 'text', text: prompt }] });

  it.each([
    ['a lighthouse sandbox-fail', 'the provider answered 400: the prompt asked the sandbox to fail (sandbox-fail)'],
    // Image jobs have no cancelled state: the job fails, saying the sandbox cancelled it.
    [
      'SANDBOX-CANCEL a lighthouse',
      'the provider answered 400: the sandbox cancelled the job, as the prompt asked (sandbox-cancel)',
    ],
    // Processing until the job's time limit cuts it.
    ['a lighthouse, sandbox-slow', `the job did not finish within ${maxJobSeconds} seconds`],
  ])('an image job whose prompt is "%s" fails: %s', async (prompt, error) => {
    const { key, untouched } = await account();
    const job = await waitForImageJob(gateway, { key, generationId: await submitImage(key, image(prompt)) });
    expect(job).toMatchObject({ status: 'failed', error });
    await untouched();
  });

  it("a request waiting for a sandbox-fail image job answers the sandbox's 400 as a provider's", async () => {
    const { key, untouched } = await account();
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-image', ...image('a lighthouse sandbox-fail') },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({
      error: {
        message: 'the prompt asked the sandbox to fail (sandbox-fail)',
        type: 'invalid_request_error',
        code: 'sandbox_trigger',
      },
    });
    await untouched();
  });

  it.each([
    ['a heron sandbox-fail', 'failed', 'the prompt asked the sandbox to fail (sandbox-fail)'],
    ['a heron sandbox-cancel', 'cancelled', 'the sandbox cancelled the job, as the prompt asked (sandbox-cancel)'],
  ])('a video task whose prompt is "%s" ends %s: %s', async (prompt, status, error) => {
    const { key, untouched } = await account();
    expect(await videoEnd(key, await submitVideo(key, prompt), new Set())).toMatchObject({ status, error });
    await untouched();
  });

  it('sandbox-slow keeps a video task running (a cancel is refused) until its time limit fails it', async () => {
    const { key, untouched } = await account();
    const taskId = await submitVideo(key, 'a heron sandbox-slow');
    const seen = new Set<string>();
    let running: VideoTask;
    do running = await readVideo(key, taskId);
    while (running.status === 'queued');
    expect(running.status).toBe('running');
    const cancel = await gateway.request({
      method: 'POST',
      url: `/api/v1/video/tasks/${taskId}/cancel`,
      headers: keyHeaders(key),
    });
    expect(cancel.statusCode).toBe(409);
    const task = await videoEnd(key, taskId, seen);
    expect([...seen]).toEqual(['running', 'failed']);
    // Said by the task's reader or by the worker's deadline, whichever notices the time limit first.
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(/^the (job|task) did not finish within/);
    await untouched();
  });

  it('sandbox-fail fails a text-to-speech job with its reason', async () => {
    const { key, untouched } = await account();
    const submitted = await gateway.request({
      method: 'POST',
      url: '/api/v1/audio/text-to-speech',
      headers: keyHeaders(key),
      payload: { voiceType: 'en_female_stokie_uranus_bigtts', text: 'Hello sandbox-fail' },
    });
    expect(submitted.statusCode, submitted.body).toBe(202);
    const id = submitted.json<{ generationId: string }>().generationId;
    let job: AudioJob;
    for (;;) {
      job = (
        await gateway.request({ method: 'GET', url: `/api/v1/audio/generations/${id}`, headers: keyHeaders(key) })
      ).json<AudioJob>();
      if (job.status === 'succeeded' || job.status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(job).toMatchObject({
      status: 'failed',
      error: 'the provider answered 400: the prompt asked the sandbox to fail (sandbox-fail)',
    });
    await untouched();
  });

  it('takes optimizePromptOptions on the sandbox image model, with no effect on the picture or the price', async () => {
    const { key, accountId } = await account();
    const plain = await waitForImageJob(gateway, { key, generationId: await submitImage(key, image('a lighthouse')) });
    const optimised = await waitForImageJob(gateway, {
      key,
      generationId: await submitImage(key, { ...image('a lighthouse'), optimizePromptOptions: { mode: 'fast' } }),
    });
    expect([plain.status, optimised.status]).toEqual(['succeeded', 'succeeded']);
    const bytes = async (downloadUrl: string) => {
      const url = new URL(downloadUrl);
      return (await gateway.request({ method: 'GET', url: `${url.pathname}${url.search}` })).rawPayload;
    };
    expect(await bytes(optimised.result!.images[0]!.downloadUrl)).toEqual(
      await bytes(plain.result!.images[0]!.downloadUrl),
    );
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - 2n * usdToNanos(0.001));
  });
});
