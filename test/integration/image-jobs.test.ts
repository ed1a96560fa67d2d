import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { mediaAssets } from '../../src/storage/schema.ts';
import { startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { submissionsOf } from '../fakes/fake-images.ts';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import { balanceNanosOf, tinyPngBase64, waitForImageJob } from '../support/image-jobs.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const seedreamPath = '/api/v3/images/generations';

describe('image jobs through the ModelArk and OpenAI fakes', () => {
  let gateway: TestGateway;
  let ark: FakeServer;
  let openai: FakeServer;

  beforeAll(async () => {
    [ark, openai] = await Promise.all([startArkFake(), startOpenAiFake()]);
    gateway = await startTestGateway({
      upstreams: [ark, openai],
      configText: [
        'providers:',
        `${fakeProviderYaml('ark', 'ark', ark)}`,
        `  ark-single: { protocol: ark, baseUrl: "${ark.url}/api/v3", apiKey: fake-ark-key, maxConcurrentJobs: 1 }`,
        `  ark-quick: { protocol: ark, baseUrl: "${ark.url}/api/v3", apiKey: fake-ark-key, timeoutMs: 300, firstByteTimeoutMs: 300 }`,
        fakeProviderYaml('openai', 'openai', openai),
        '  down: { protocol: ark, baseUrl: "http://127.0.0.1:9/api/v3", apiKey: fake-ark-key, timeoutMs: 2000 }',
        'models:',
        '  - { id: seedream-down, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: down, model: seedream-4-0-250828 }] }',
        '  - { id: seedream, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-4-0-250828 }] }',
        '  - { id: seedream-single, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark-single, model: seedream-4-0-250828 }] }',
        '  - { id: seedream-quick, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark-quick, model: seedream-4-0-250828 }] }',
        '  - { id: layers, outputModalities: [image], pricing: { perImage: 0.035 }, providers: [{ provider: ark, model: seedream-5-0-260128, capabilities: { image: { params: { layerDecomposition: { type: bool } } } } }] }',
        '  - { id: gpt-image, outputModalities: [image], pricing: { perImageByQuality: { low: 0.011, medium: 0.042, high: 0.167 } }, providers: [{ provider: openai, model: gpt-image-1 }] }',
        'jobs: { maxAttempts: 3, retryBaseMs: 20, claimSeconds: 5 }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function submit(key: string, body: Record<string, unknown>): Promise<string> {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(key),
      payload: body,
    });
    expect(response.statusCode, response.body).toBe(202);
    return response.json<{ generationId: string }>().generationId;
  }

  const poll = async (key: string, id: string) =>
    (
      await gateway.request({ method: 'GET', url: `/api/v1/image/generations/async/${id}`, headers: keyHeaders(key) })
    ).json<{ status: string }>().status;

  it('goes queued -> processing -> succeeded; estimate = hold = charge for fixed-price images', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const prompt = 'three foxes fake-slow-600';
    const body = { model: 'seedream', content: [{ type: 'text', text: prompt }], numberOfImages: 3, size: '2048x2048' };
    const estimate = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/estimate',
      headers: keyHeaders(key),
      payload: body,
    });
    expect(estimate.json<{ data: { estimatedUserCost: number } }>().data.estimatedUserCost).toBe(0.09);
    const id = await submit(key, body);
    const seen = new Set<string>();
    for (let i = 0; i < 100 && !seen.has('processing'); i++) {
      seen.add(await poll(key, id));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(seen.has('processing')).toBe(true);
    expect(await heldNanosOf(gateway, accountId)).toBe(usdToNanos(0.09));
    const job = await waitForImageJob(gateway, { key, generationId: id });
    expect(job.status, job.error).toBe('succeeded');
    expect(job.result!.images).toHaveLength(3);
    for (const image of job.result!.images) expect(image.url).toMatch(/\/files\//);
    expect(job.result!.usage).toMatchObject({ generatedImages: 3, outputTokens: 3 * 16_384, usdCost: 0.09 });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.09));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    const sent = ark.requests.find(
      (request) => request.path === seedreamPath && (request.body as { prompt: string }).prompt === prompt,
    )!.body;
    expect(sent).toMatchObject({
      model: 'seedream-4-0-250828',
      size: '2048x2048',
      sequential_image_generation: 'auto',
      sequential_image_generation_options: { max_images: 3 },
      response_format: 'url',
    });
  });

  it("past media retention an image shows no link at all, the provider's own url neither", async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const id = await submit(key, { model: 'seedream', content: [{ type: 'text', text: 'one kept fox' }] });
    const job = await waitForImageJob(gateway, { key, generationId: id });
    expect(job.status, job.error).toBe('succeeded');
    expect(job.result!.images[0]!.url).toMatch(/\/files\//);
    await gateway.gateway.core.storage.db
      .update(mediaAssets)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(mediaAssets.jobId, id));
    const expired = await waitForImageJob(gateway, { key, generationId: id });
    expect(expired.result!.images[0]).toMatchObject({ assetExpired: true });
    for (const link of ['url', 'downloadUrl', 'assetId']) expect(expired.result!.images[0]).not.toHaveProperty(link);
  });

  it('a provider refusal fails the job with its message, refunds the hold and charges nothing', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const job = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, {
        model: 'seedream',
        content: [{ type: 'text', text: 'refused fake-error-400' }],
      }),
    });
    expect(job.status).toBe('failed');
    expect(job.error).toContain('400');
    expect(job.error).toContain('The fake failed with 400');
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    const usage = await gateway.request({ method: 'GET', url: '/api/compat/v1/usage', headers: keyHeaders(key) });
    expect(usage.json<{ results: unknown[] }>().results[0]).toMatchObject({
      id: job.generationId,
      modality: 'image',
      status: 'failed',
      usdCost: 0,
    });
    expect(submissionsOf(ark.requests, seedreamPath, 'refused fake-error-400')).toBe(1);
  });

  it('retries a 5xx with backoff up to jobs.maxAttempts, then fails', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const prompt = 'flaky fake-error-503';
    const job = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, { model: 'seedream', content: [{ type: 'text', text: prompt }] }),
    });
    expect(job.status).toBe('failed');
    expect(submissionsOf(ark.requests, seedreamPath, prompt)).toBe(3);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
  });

  /** The waiting route's answer to `prompt` on `model`. */
  const generate = (key: string, { model, prompt }: { model: string; prompt: string }) =>
    gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations',
      headers: keyHeaders(key),
      payload: { model, content: [{ type: 'text', text: prompt }] },
    });

  it("the waiting route answers a provider's refusal with the provider's own status and body, charging nothing", async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const prompt = 'waited refusal fake-error-400';
    const response = await generate(key, { model: 'seedream', prompt });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['x-upstream-status']).toBe('400');
    expect(response.json()).toEqual({
      error: {
        code: 'OutputImageSensitiveContentDetected',
        message: 'The fake failed with 400',
        param: null,
        type: 'BadRequest',
      },
    });
    expect(submissionsOf(ark.requests, seedreamPath, prompt)).toBe(1);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it("the waiting route relays the provider's 503 once the job's tries are spent", async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const prompt = 'waited outage fake-error-503';
    const response = await generate(key, { model: 'seedream', prompt });
    expect(response.statusCode, response.body).toBe(503);
    expect(response.headers['x-upstream-status']).toBe('503');
    expect(response.json()).toMatchObject({
      error: { code: 'InternalServiceError', message: 'The fake failed with 503' },
    });
    expect(submissionsOf(ark.requests, seedreamPath, prompt)).toBe(3);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
  });

  // The provider's retry-after is kept with the job's failure and relayed, so an SDK that honours it waits as the
  // provider asked before it sends the request (a new job) again.
  it("the waiting route relays the provider's retry-after with its 429 once the job's tries are spent", async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const prompt = 'waited limit fake-error-429 fake-retry-after-1';
    const response = await generate(key, { model: 'seedream', prompt });
    expect(response.statusCode, response.body).toBe(429);
    expect(response.headers['x-upstream-status']).toBe('429');
    expect(response.headers['retry-after']).toBe('1');
    expect(response.headers['retry-after-ms']).toBe('1000');
    expect(submissionsOf(ark.requests, seedreamPath, prompt)).toBe(3);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    // A refusal sent with a wait in seconds (never tried again: a 400 is no passing trouble) keeps it too.
    const refused = await generate(key, {
      model: 'seedream',
      prompt: 'waited refusal fake-error-400 fake-retry-after-7',
    });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.headers['retry-after']).toBe('7');
    // A provider that asks for no wait gets none relayed.
    expect((await generate(key, { model: 'seedream', prompt: 'plain fake-error-400' })).headers['retry-after']).toBe(
      undefined,
    );
  });

  it('the waiting route answers 502 GW_GENERATION_FAILED when the provider could not be reached', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await generate(key, { model: 'seedream-down', prompt: 'nobody home' });
    expect(response.statusCode, response.body).toBe(502);
    expect(response.headers['x-gateway-error-code']).toBe('GW_GENERATION_FAILED');
    expect(response.headers['x-upstream-status']).toBeUndefined();
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
  });

  it('a group with one failed image succeeds with the others, charged only for those', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const job = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, {
        model: 'seedream',
        content: [{ type: 'text', text: 'group fake-partial' }],
        numberOfImages: 3,
      }),
    });
    expect(job.status, job.error).toBe('succeeded');
    expect(job.result!.images).toHaveLength(2);
    expect(job.result!.usage.usdCost).toBe(0.06);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.06));
  });

  it('outputs whose provider URL expired before archiving are not charged; none left fails the job', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const job = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, {
        model: 'seedream',
        content: [{ type: 'text', text: 'gone fake-expired-url' }],
        numberOfImages: 2,
      }),
    });
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/could not be archived.*403/);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    // The provider reported both images made, but the client got neither: as for a job that archived one of
    // two (charged one), an output that could not be archived is not charged.
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
  });

  it('an answer that breaks the protocol, and a provider that hangs past its timeout, fail the job without retries', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const garbage = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, { model: 'seedream', content: [{ type: 'text', text: 'junk fake-garbage' }] }),
    });
    expect(garbage.status).toBe('failed');
    expect(garbage.error).toMatch(/protocol/);
    const hung = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, {
        model: 'seedream-quick',
        content: [{ type: 'text', text: 'stuck fake-hang' }],
      }),
    });
    expect(hung.status).toBe('failed');
    expect(hung.error).toMatch(/in time|maximum/);
    expect(submissionsOf(ark.requests, seedreamPath, 'stuck fake-hang')).toBe(1);
  });

  it('decomposes layers through ModelArk: base first, ascending layers with absolute and normalized boxes', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const job = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, {
        model: 'layers',
        layerDecomposition: true,
        resolution: '2K',
        content: [
          { type: 'text', text: 'split it' },
          { type: 'imageBase64', data: tinyPngBase64, mediaType: 'image/png' },
        ],
      }),
    });
    expect(job.status, job.error).toBe('succeeded');
    const [base, ...layers] = job.result!.images;
    expect(base).toMatchObject({ zIndex: 0 });
    expect(base!.boundingBox).toBeUndefined();
    expect(layers.map((layer) => layer.zIndex)).toEqual([1, 2, 3]);
    // The fake's base image is 32x24: the box [4, 2, 12, 8] is [125, 83, 375, 333] on the 0..1000 scale.
    expect(layers[0]).toMatchObject({
      boundingBox: { absolute: [4, 2, 12, 8], normalized: [125, 83, 375, 333] },
      name: 'element 1',
      description: 'the 1. element of the picture',
    });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.035) * 4n);
    const sent = ark.requests
      .filter((request) => request.path === seedreamPath && (request.body as { prompt: string }).prompt === 'split it')
      .at(-1)!.body;
    expect(sent).toMatchObject({
      layer_decomposition: true,
      resolution: '2K',
      image: `data:image/png;base64,${tinyPngBase64}`,
    });
    expect(sent).not.toHaveProperty('size');
  });

  it('one failed layer fails the whole job', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const job = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, {
        model: 'layers',
        layerDecomposition: true,
        content: [
          { type: 'text', text: 'fake-layer-fail' },
          { type: 'imageBase64', data: tinyPngBase64, mediaType: 'image/png' },
        ],
      }),
    });
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/layer decomposition failed/);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    // Nothing reaches the client, so nothing is charged: not the layers made and archived before one failed.
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    // The layers it had archived are deleted with the failure: no file outlives a job without assets.
    for (const index of [0, 1, 3])
      expect(await gateway.gateway.core.store.get(`images/${job.generationId}/${index}.png`)).toBeUndefined();
  });

  it('OpenAI images: reference images go as a multipart edit; priced at the quality rendered', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const body = {
      model: 'gpt-image',
      content: [
        { type: 'text', text: 'restyle' },
        { type: 'imageBase64', data: tinyPngBase64, mediaType: 'image/png' },
      ],
      numberOfImages: 2,
      quality: 'auto',
    };
    const estimate = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/estimate',
      headers: keyHeaders(key),
      payload: body,
    });
    expect(estimate.json<{ data: { estimatedUserCost: number } }>().data.estimatedUserCost).toBe(0.334);
    const job = await waitForImageJob(gateway, { key, generationId: await submit(key, body) });
    expect(job.status, job.error).toBe('succeeded');
    expect(job.result!.images).toHaveLength(2);
    expect(job.result!.usage).toMatchObject({ generatedImages: 2, inputTokens: 50, usdCost: 0.084 });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.084));
    const edit = openai.requests.find((request) => request.path === '/v1/images/edits');
    expect(String(edit?.headers['content-type'])).toMatch(/^multipart\/form-data/);
  });

  it('an output whose bytes are no picture (whatever the provider calls it) fails the job, archived and charged nothing', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const job = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, { model: 'gpt-image', content: [{ type: 'text', text: 'page fake-not-image' }] }),
    });
    expect(job.status).toBe('failed');
    expect(job.error).toBe('output 0 could not be archived: the provider output is not an image');
    expect(job.result).toBeUndefined();
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('a provider row runs at most maxConcurrentJobs jobs at once', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const ids = await Promise.all(
      [1, 2, 3].map((n) =>
        submit(key, {
          model: 'seedream-single',
          content: [{ type: 'text', text: `one at a time ${n} fake-slow-300` }],
        }),
      ),
    );
    let most = 0;
    for (let i = 0; i < 200; i++) {
      const states = await Promise.all(ids.map((id) => poll(key, id)));
      most = Math.max(most, states.filter((state) => state === 'processing').length);
      if (states.every((state) => state === 'succeeded')) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(most).toBe(1);
    for (const id of ids) expect((await waitForImageJob(gateway, { key, generationId: id })).status).toBe('succeeded');
  });
});

describe('a job past its maximum time', () => {
  let gateway: TestGateway;
  let ark: FakeServer;

  beforeAll(async () => {
    ark = await startArkFake();
    gateway = await startTestGateway({
      upstreams: [ark],
      configText: [
        'providers:',
        fakeProviderYaml('ark', 'ark', ark),
        'models:',
        '  - { id: seedream, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-4-0-250828 }] }',
        'jobs: { maxAttempts: 5, retryBaseMs: 2000, maxJobSeconds: 1 }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('fails once jobs.maxJobSeconds has passed, and gives its hold back', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(key),
      payload: { model: 'seedream', content: [{ type: 'text', text: 'slow retry fake-error-500' }] },
    });
    const job = await waitForImageJob(gateway, {
      key,
      generationId: response.json<{ generationId: string }>().generationId,
      timeoutMs: 15_000,
    });
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/within 1 seconds/);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('fails at its deadline when the upstream asks to be tried again in a thousand years, or in nonsense', async () => {
    for (const retryAfter of ['31536000000', '9'.repeat(40), 'Fri, 31 Dec 9999 23:59:59 GMT', '-5']) {
      const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
      const prompt = `never fake-error-503 fake-retry-after-${retryAfter.replaceAll(' ', '_')}`;
      const before = ark.requests.length;
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/image/generations/async',
        headers: keyHeaders(key),
        payload: { model: 'seedream', content: [{ type: 'text', text: prompt }] },
      });
      expect(response.statusCode, response.body).toBe(202);
      const job = await waitForImageJob(gateway, {
        key,
        generationId: response.json<{ generationId: string }>().generationId,
        timeoutMs: 15_000,
      });
      expect(job.status, retryAfter).toBe('failed');
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
      expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
      // The first call and, the backoff being longer than the deadline, no more than one other.
      expect(ark.requests.length - before).toBeLessThanOrEqual(2);
    }
  });
});
