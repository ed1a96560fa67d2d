import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoVideoFacts } from '../../src/media/media-duration.ts';
import { usdToNanos } from '../../src/domain/money.ts';
import { startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { expectEnvelope, heldNanosOf, keyHeaders, usageRecords } from '../support/http-helpers.ts';
import { balanceNanosOf, jobRowsOf, tinyPngBase64 } from '../support/image-jobs.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { sandboxVideoModel, seedanceModel } from '../support/video-models.ts';

const tasksPath = '/api/v3/contents/generations/tasks';

interface VideoTask {
  taskId: string;
  generationId: string;
  providerId: string;
  status: string;
  model: string;
  content: Array<Record<string, unknown>>;
  videoUrl?: string;
  downloadUrl?: string;
  assetId?: string;
  usage?: {
    completionTokens: number;
    totalTokens: number;
    usdCost: number;
    durationSeconds: number;
    providerUsage: Record<string, unknown>;
  };
  error?: string;
  createdAt: string;
  updatedAt: string;
}

function videoGatewayConfig(ark: FakeServer, jobs: string): string {
  return [
    'providers:',
    fakeProviderYaml('ark', 'ark', ark),
    '  sandbox: { protocol: sandbox }',
    'models:',
    seedanceModel,
    sandboxVideoModel,
    '  - { id: sandbox-image, outputModalities: [image], pricing: { perImage: 0.001 }, providers: [{ provider: sandbox, model: image }] }',
    '  - { id: sandbox-echo, outputModalities: [text], pricing: { inputPerMTok: 0.1, outputPerMTok: 0.2 }, providers: [{ provider: sandbox, model: echo }] }',
    jobs,
  ].join('\n');
}

const text = (value: string) => ({ type: 'text', text: value });

describe('video tasks through the sandbox and the ModelArk Seedance fake', () => {
  let gateway: TestGateway;
  let ark: FakeServer;

  beforeAll(async () => {
    ark = await startArkFake();
    gateway = await startTestGateway({
      upstreams: [ark],
      // Deliveries up to three times the held length are charged, so the floors past the hold show.
      configText: videoGatewayConfig(
        ark,
        'jobs: { taskPollMs: 20, idlePollMs: 50, maxAttempts: 3, retryBaseMs: 20 }\nlimits: { maxDurationOverrun: 3 }',
      ),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const create = (key: string, body: Record<string, unknown>) =>
    gateway.request({ method: 'POST', url: '/api/v1/video/generations', headers: keyHeaders(key), payload: body });
  const estimate = async (key: string, body: Record<string, unknown>) => {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/video/estimate',
      headers: keyHeaders(key),
      payload: body,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ data: { estimatedUserCost: number; currency: string } }>().data;
  };
  const read = async (key: string, taskId: string) => {
    const response = await gateway.request({
      method: 'GET',
      url: `/api/v1/video/tasks/${taskId}`,
      headers: keyHeaders(key),
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<VideoTask>();
  };
  async function submit(key: string, body: Record<string, unknown>): Promise<VideoTask> {
    const response = await create(key, body);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<VideoTask>();
  }
  async function waitForEnd(key: string, taskId: string, seen?: Set<string>): Promise<VideoTask> {
    for (let i = 0; i < 500; i++) {
      const task = await read(key, taskId);
      seen?.add(task.status);
      if (['succeeded', 'failed', 'cancelled'].includes(task.status)) return task;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`video task ${taskId} did not end`);
  }
  const creations = (prompt: string) =>
    ark.requests.filter(
      (request) =>
        request.method === 'POST' && request.path === tasksPath && JSON.stringify(request.body).includes(prompt),
    ).length;

  it('makes a real MP4 in the sandbox: the persisted task first, then succeeded with a signed link, billed per delivered second', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const body = {
      model: 'sandbox-video',
      content: [
        text('a paper boat on a pond'),
        { type: 'imageBase64', data: tinyPngBase64, mediaType: 'image/png', role: 'firstFrame' },
      ],
      duration: 3,
      ratio: '9:16',
      seed: 7,
    };
    expect(await estimate(key, body)).toEqual({ estimatedUserCost: 0.003, currency: 'USD' });
    const initial = await submit(key, body);
    expect(initial).toMatchObject({ status: 'queued', model: 'sandbox-video', providerId: 'sandbox' });
    expect(initial.taskId).toBe(initial.generationId);
    // The content is kept in order, its base64 cut short.
    expect(initial.content).toHaveLength(2);
    expect(initial.content[0]).toEqual(text('a paper boat on a pond'));
    expect(initial.content[1]).toMatchObject({ type: 'imageBase64', role: 'firstFrame' });
    expect(String(initial.content[1]!.data).length).toBeLessThan(tinyPngBase64.length);
    expect(await heldNanosOf(gateway, accountId)).toBe(usdToNanos(0.003));

    const seen = new Set<string>();
    const task = await waitForEnd(key, initial.taskId, seen);
    expect(task.status, task.error).toBe('succeeded');
    expect(seen.has('running')).toBe(true);
    expect(task.usage).toEqual({
      completionTokens: 0,
      totalTokens: 0,
      usdCost: 0.003,
      durationSeconds: 3,
      providerUsage: { sandbox: true, seconds: 3 },
    });
    expect(task.videoUrl).toMatch(/\/api\/v1\/media\/files\/videos\//);
    expect(task.downloadUrl).toBe(task.videoUrl);
    expect(task.assetId).toMatch(/^asset/);

    const url = new URL(task.downloadUrl!);
    const download = await gateway.request({ method: 'GET', url: url.pathname + url.search });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('video/mp4');
    expect(await isoVideoFacts(download.rawPayload)).toEqual({ container: 'mp4', seconds: 3 });
    // The same request makes the same video.
    const again = await waitForEnd(key, (await submit(key, body)).taskId);
    const url2 = new URL(again.downloadUrl!);
    expect(
      (await gateway.request({ method: 'GET', url: url2.pathname + url2.search })).rawPayload.equals(
        download.rawPayload,
      ),
    ).toBe(true);

    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - 2n * usdToNanos(0.003));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    const records = await usageRecords(gateway, key);
    expect(records.find((record) => record.id === task.generationId)).toMatchObject({
      modality: 'video',
      status: 'succeeded',
      usdCost: 0.003,
    });
  });

  it('serves ranges of the archived video', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const task = await waitForEnd(
      key,
      (await submit(key, { model: 'sandbox-video', content: [text('ranges')], duration: 1 })).taskId,
    );
    const url = new URL(task.downloadUrl!);
    const whole = await gateway.request({ method: 'GET', url: url.pathname + url.search });
    const part = await gateway.request({
      method: 'GET',
      url: url.pathname + url.search,
      headers: { range: 'bytes=4-11' },
    });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 4-11/${whole.rawPayload.length}`);
    expect(part.body).toBe('ftypisom');
  });

  it('follows a Seedance task queued -> running -> succeeded; the hold is the asked seconds at the asked resolution, the charge what was delivered', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 5 });
    const prompt = 'a lighthouse at dusk fake-video-slow-5 fake-video-short-3';
    const body = {
      model: 'seedance',
      content: [
        text(prompt),
        { type: 'imageUrl', url: 'https://example.com/last.png', role: 'lastFrame' },
        { type: 'imageUrl', url: 'https://example.com/first.png', role: 'firstFrame' },
      ],
      duration: 6,
      resolution: '720p',
      ratio: '16:9',
      seed: 12,
      watermark: false,
      cameraFixed: true,
      generateAudio: true,
      unknownField: 1,
    };
    expect((await estimate(key, body)).estimatedUserCost).toBe(0.3);
    const initial = await submit(key, body);
    expect(await heldNanosOf(gateway, accountId)).toBe(usdToNanos(0.3));
    const seen = new Set<string>();
    const task = await waitForEnd(key, initial.taskId, seen);
    expect(task.status, task.error).toBe('succeeded');
    expect(seen.has('running')).toBe(true);
    // Billed on the 3 seconds of the delivered file, not the 6 asked, at the 720p price.
    expect(task.usage).toMatchObject({
      durationSeconds: 3,
      usdCost: 0.15,
      completionTokens: Math.round((1280 * 720 * 24 * 6) / 1024),
    });
    expect(task.usage!.totalTokens).toBe(task.usage!.completionTokens);
    expect(task.usage!.providerUsage).toEqual({
      completion_tokens: task.usage!.completionTokens,
      total_tokens: task.usage!.totalTokens,
    });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(5) - usdToNanos(0.15));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);

    const sent = ark.requests.find(
      (request) =>
        request.method === 'POST' && request.path === tasksPath && JSON.stringify(request.body).includes(prompt),
    )!;
    expect(sent.headers.authorization).toBe('Bearer fake-ark-key');
    expect(sent.body).toEqual({
      model: 'seedance-1-0-pro-250528',
      content: [
        { type: 'text', text: prompt },
        { type: 'image_url', image_url: { url: 'https://example.com/last.png' }, role: 'last_frame' },
        { type: 'image_url', image_url: { url: 'https://example.com/first.png' }, role: 'first_frame' },
      ],
      ratio: '16:9',
      resolution: '720p',
      duration: 6,
      seed: 12,
      camera_fixed: true,
      watermark: false,
      generate_audio: true,
    });
    expect(creations(prompt)).toBe(1);
  });

  it('holds the model default (or the dearest resolution) when none is asked, and an unpriced resolution is refused', async () => {
    const { key } = await gateway.createFundedKey({ credits: 5 });
    expect((await estimate(key, { model: 'seedance', content: [text('defaults')] })).estimatedUserCost).toBe(0.6);
    expect(
      (await estimate(key, { model: 'seedance-steps', content: [text('steps')], duration: 10 })).estimatedUserCost,
    ).toBe(1);
    // No duration and no default: the longest the model allows.
    expect((await estimate(key, { model: 'seedance-steps', content: [text('steps')] })).estimatedUserCost).toBe(1);
  });

  it.each([
    ['fake-video-fail', 'failed', 'sensitive'],
    ['fake-video-expired', 'failed', 'expired'],
    ['fake-video-cancelled', 'cancelled', 'cancelled'],
    ['fake-video-lost', 'failed', '404'],
    ['fake-video-garbage', 'failed', 'does not follow its protocol'],
    ['fake-error-400', 'failed', '400'],
  ])(
    'a task that ends %s is %s with its reason; the hold is refunded and nothing is charged',
    async (word, status, reason) => {
      const { key, accountId } = await gateway.createFundedKey({ credits: 2 });
      const task = await waitForEnd(
        key,
        (await submit(key, { model: 'seedance', content: [text(`a storm ${word}`)], resolution: '480p' })).taskId,
      );
      expect(task.status).toBe(status);
      expect(task.error).toContain(reason);
      expect(task.usage).toBeUndefined();
      expect(task.videoUrl).toBeUndefined();
      expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(2));
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
      const records = await usageRecords(gateway, key);
      expect(records[0]).toMatchObject({ modality: 'video', status, usdCost: 0 });
    },
  );

  it('retries a provider that is busy (429, 5xx) when creating, then follows the task once', async () => {
    const { key } = await gateway.createFundedKey({ credits: 2 });
    const task = await waitForEnd(
      key,
      (await submit(key, { model: 'seedance', content: [text('busy fake-error-503')], resolution: '480p' })).taskId,
    );
    // The fake fails every try: three creations, then the job fails with the provider's status.
    expect(task.status).toBe('failed');
    expect(task.error).toContain('503');
    expect(creations('busy fake-error-503')).toBe(3);
  });

  it('reuses an archived video as videoAssetId and an archived image as imageAssetId; other accounts get 404', async () => {
    const { key } = await gateway.createFundedKey({ credits: 2 });
    const made = await waitForEnd(
      key,
      (await submit(key, { model: 'sandbox-video', content: [text('source clip')], duration: 1 })).taskId,
    );
    const prompt = 'continue the clip';
    const task = await waitForEnd(
      key,
      (
        await submit(key, {
          model: 'seedance',
          content: [text(prompt), { type: 'videoAssetId', assetId: made.assetId }],
          resolution: '480p',
          duration: 2,
        })
      ).taskId,
    );
    expect(task.status, task.error).toBe('succeeded');
    const sent = ark.requests.find(
      (request) =>
        request.method === 'POST' && request.path === tasksPath && JSON.stringify(request.body).includes(prompt),
    )!.body as { content: Array<{ type: string; video_url?: { url: string }; role?: string }> };
    expect(sent.content[1]).toMatchObject({ type: 'video_url', role: 'reference_video' });
    expect(sent.content[1]!.video_url!.url).toMatch(/^data:video\/mp4;base64,AAAA/);

    const other = await gateway.createFundedKey({ credits: 2 });
    expectEnvelope(
      await create(other.key, {
        model: 'seedance',
        content: [text('steal'), { type: 'videoAssetId', assetId: made.assetId }],
      }),
      { status: 404, code: 'GW_NOT_FOUND', path: '/api/v1/video/generations' },
    );
    expectEnvelope(
      await create(key, {
        model: 'seedance',
        content: [text('wrong kind'), { type: 'imageAssetId', assetId: made.assetId }],
      }),
      { status: 400, code: 'GW_VALIDATION', path: '/api/v1/video/generations' },
    );
    // Tasks of other accounts, and unknown ids, are 404 too.
    expectEnvelope(
      await gateway.request({
        method: 'GET',
        url: `/api/v1/video/tasks/${made.taskId}`,
        headers: keyHeaders(other.key),
      }),
      { status: 404, code: 'GW_NOT_FOUND', path: `/api/v1/video/tasks/${made.taskId}` },
    );
    expectEnvelope(
      await gateway.request({ method: 'GET', url: '/api/v1/video/tasks/gen_unknown', headers: keyHeaders(key) }),
      { status: 404, code: 'GW_NOT_FOUND', path: '/api/v1/video/tasks/gen_unknown' },
    );
  });

  it('charges a video longer than asked for its delivered seconds out of free credit, never past the balance or a cap', async () => {
    const body = (prompt: string) => ({ model: 'seedance', content: [text(prompt)], duration: 2, resolution: '720p' });
    // 0.05 USD a second at 720p: 2 seconds held (0.1), 6 delivered (0.3).
    const rich = await gateway.createFundedKey({ credits: 5 });
    const paid = await waitForEnd(rich.key, (await submit(rich.key, body('long and paid fake-video-long-6'))).taskId);
    expect(paid.usage).toMatchObject({ durationSeconds: 6, usdCost: 0.3 });
    expect(paid.usage).not.toHaveProperty('unchargedUsdCost');
    expect(await balanceNanosOf(gateway, rich.accountId)).toBe(usdToNanos(5) - usdToNanos(0.3));

    // A balance of 0.25: the hold of 0.1, then only the 0.15 left free.
    const poor = await gateway.createFundedKey({ credits: 0.25 });
    const short = await waitForEnd(poor.key, (await submit(poor.key, body('long and poor fake-video-long-6'))).taskId);
    expect(short.usage).toMatchObject({ durationSeconds: 6, usdCost: 0.25, unchargedUsdCost: 0.05 });
    expect(await balanceNanosOf(gateway, poor.accountId)).toBe(0n);
    expect((await usageRecords(gateway, poor.key))[0]).toMatchObject({
      usdCost: 0.25,
      usage: { usdCost: 0.25, unchargedUsdCost: 0.05 },
    });

    // A total cap of 0.2 on the key: charged up to the cap, the balance keeps the rest.
    const capped = await gateway.createFundedKey({ credits: 5, limits: { total: 0.2 } });
    const atCap = await waitForEnd(
      capped.key,
      (await submit(capped.key, body('long and capped fake-video-long-6'))).taskId,
    );
    expect(atCap.usage).toMatchObject({ usdCost: 0.2, unchargedUsdCost: 0.1 });
    expect(await balanceNanosOf(gateway, capped.accountId)).toBe(usdToNanos(5) - usdToNanos(0.2));
    expect(await heldNanosOf(gateway, capped.accountId)).toBe(0n);
  });

  it('charges a delivery past the hold no further than limits.maxDurationOverrun times the hold', async () => {
    // 2 seconds held at 720p (0.1), 8 delivered (0.4): charged three times the hold.
    const { key, accountId } = await gateway.createFundedKey({ credits: 5 });
    const task = await waitForEnd(
      key,
      (
        await submit(key, {
          model: 'seedance',
          content: [text('too long fake-video-long-8')],
          duration: 2,
          resolution: '720p',
        })
      ).taskId,
    );
    expect(task.usage).toMatchObject({ durationSeconds: 8, usdCost: 0.3, unchargedUsdCost: 0.1 });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(5) - usdToNanos(0.3));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('charges a dearer resolution the provider claims no further than the hold, when the file has the seconds held', async () => {
    // 4 seconds held at 480p (0.08); the file measures 4 s and the provider says 1080p (0.48): the gateway measured
    // only the seconds, so nothing past the hold is charged on the provider's word.
    const { key, accountId } = await gateway.createFundedKey({ credits: 5 });
    const task = await waitForEnd(
      key,
      (
        await submit(key, {
          model: 'seedance',
          content: [text('a calm sea fake-video-claims-1080p')],
          duration: 4,
          resolution: '480p',
        })
      ).taskId,
    );
    expect(task.usage).toMatchObject({ durationSeconds: 4, usdCost: 0.08, unchargedUsdCost: 0.4 });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(5) - usdToNanos(0.08));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('settles concurrent videos that all run past their holds without passing the balance, to the nano', async () => {
    // Eight tasks held 0.1 each (0.8 of a 1.0 balance), each delivering 0.3: the account can pay 1.0 in all.
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const tasks = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        submit(key, {
          model: 'seedance',
          content: [text(`race ${index} fake-video-long-6`)],
          duration: 2,
          resolution: '720p',
        }),
      ),
    );
    const ended = await Promise.all(tasks.map((task) => waitForEnd(key, task.taskId)));
    expect(ended.map((task) => task.status)).toEqual(Array(8).fill('succeeded'));
    const charged = ended.reduce((sum, task) => sum + usdToNanos(task.usage!.usdCost), 0n);
    expect(charged).toBe(usdToNanos(1));
    for (const task of ended) expect(usdToNanos(task.usage!.usdCost)).toBeGreaterThanOrEqual(usdToNanos(0.1));
    expect(await balanceNanosOf(gateway, accountId)).toBe(0n);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('never passes the balance: a task that needs more than the balance is refused 403 and nothing is queued', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 0.1 });
    expectEnvelope(await create(key, { model: 'seedance', content: [text('too dear')], duration: 12 }), {
      status: 403,
      code: 'GW_INSUFFICIENT_BALANCE',
      path: '/api/v1/video/generations',
    });
    expect(await jobRowsOf(gateway, accountId)).toEqual([]);
  });

  describe('refuses with 400 before anything is held or stored', () => {
    const png = { type: 'imageBase64', data: tinyPngBase64, mediaType: 'image/png' };
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['no content', { model: 'seedance', content: [] }, 'GW_VALIDATION'],
      ['no model', { content: [text('x')] }, 'GW_VALIDATION'],
      [
        'an unknown part type',
        { model: 'seedance', content: [{ type: 'audioUrl', url: 'https://example.com/a.mp3' }] },
        'GW_VALIDATION',
      ],
      ['an empty text part', { model: 'seedance', content: [text(' ')] }, 'GW_VALIDATION'],
      [
        'a URL that is not http(s)',
        { model: 'seedance', content: [text('x'), { type: 'imageUrl', url: 'file:///etc/passwd' }] },
        'GW_VALIDATION',
      ],
      [
        'a role on a video part',
        {
          model: 'seedance',
          content: [text('x'), { type: 'videoUrl', url: 'https://example.com/a.mp4', role: 'firstFrame' }],
        },
        'GW_VALIDATION',
      ],
      [
        'an unknown role',
        { model: 'seedance', content: [text('x'), { ...png, role: 'middleFrame' }] },
        'GW_VALIDATION',
      ],
      [
        'two first frames',
        { model: 'seedance', content: [text('x'), { ...png, role: 'firstFrame' }, { ...png, role: 'firstFrame' }] },
        'GW_VALIDATION',
      ],
      [
        'a last frame alone',
        { model: 'seedance', content: [text('x'), { ...png, role: 'lastFrame' }] },
        'GW_VALIDATION',
      ],
      [
        'raw base64 without mediaType',
        { model: 'seedance', content: [text('x'), { type: 'imageBase64', data: tinyPngBase64 }] },
        'GW_VALIDATION',
      ],
      [
        'image bytes that are not the declared type',
        { model: 'seedance', content: [text('x'), { ...png, mediaType: 'image/jpeg' }] },
        'GW_VALIDATION',
      ],
      [
        'a video part that is an image',
        {
          model: 'seedance',
          content: [text('x'), { type: 'videoBase64', data: tinyPngBase64, mediaType: 'video/mp4' }],
        },
        'GW_VALIDATION',
      ],
      [
        'a video part of another type',
        { model: 'seedance', content: [text('x'), { type: 'videoBase64', data: 'AAAA', mediaType: 'video/x-flv' }] },
        'GW_VALIDATION',
      ],
      [
        'only a reference video',
        { model: 'seedance', content: [{ type: 'videoUrl', url: 'https://example.com/a.mp4' }] },
        'GW_VALIDATION',
      ],
      ['duration 0', { model: 'seedance', content: [text('x')], duration: 0 }, 'GW_VALIDATION'],
      ['a fractional duration', { model: 'seedance', content: [text('x')], duration: 2.5 }, 'GW_VALIDATION'],
      [
        'a duration past the model range',
        { model: 'seedance', content: [text('x')], duration: 13 },
        'GW_PARAMETER_OUT_OF_RANGE',
      ],
      [
        'a duration between the model steps',
        { model: 'seedance-steps', content: [text('x')], duration: 7 },
        'GW_PARAMETER_OUT_OF_RANGE',
      ],
      ['a resolution outside the spec', { model: 'seedance', content: [text('x')], resolution: '2k' }, 'GW_VALIDATION'],
      [
        'a resolution the model does not make',
        { model: 'sandbox-video', content: [text('x')], resolution: '1080p' },
        'GW_PARAMETER_OUT_OF_RANGE',
      ],
      [
        'a ratio the model does not make',
        { model: 'seedance', content: [text('x')], ratio: '4:3' },
        'GW_PARAMETER_OUT_OF_RANGE',
      ],
      ['an empty ratio', { model: 'seedance', content: [text('x')], ratio: '' }, 'GW_VALIDATION'],
      ['seed below -1', { model: 'seedance', content: [text('x')], seed: -2 }, 'GW_VALIDATION'],
      ['a non-boolean watermark', { model: 'seedance', content: [text('x')], watermark: 'yes' }, 'GW_VALIDATION'],
      [
        'cameraFixed on a model that does not take it',
        { model: 'sandbox-video', content: [text('x')], cameraFixed: true },
        'GW_PARAMETER_UNSUPPORTED',
      ],
      [
        'a field a strict model does not list',
        { model: 'seedance-steps', content: [text('x')], seed: 3 },
        'GW_PARAMETER_UNSUPPORTED',
      ],
      [
        'maxTokens (sandbox adapter)',
        { model: 'sandbox-video', content: [text('x')], maxTokens: 100 },
        'GW_PARAMETER_UNSUPPORTED',
      ],
      [
        'maxTokens (Seedance adapter)',
        { model: 'seedance', content: [text('x')], maxTokens: 100 },
        'GW_PARAMETER_UNSUPPORTED',
      ],
      ['maxTokens 0', { model: 'seedance', content: [text('x')], maxTokens: 0 }, 'GW_VALIDATION'],
      ['an unknown model', { model: 'no-such-video', content: [text('x')] }, 'GW_MODEL_NOT_AVAILABLE'],
      ['a model that makes no video', { model: 'sandbox-echo', content: [text('x')] }, 'GW_MODEL_NOT_AVAILABLE'],
    ];
    it.each(cases)('%s', async (_name, body, code) => {
      const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
      const before = ark.requests.length;
      for (const url of ['/api/v1/video/generations', '/api/v1/video/estimate']) {
        const envelope = expectEnvelope(
          await gateway.request({ method: 'POST', url, headers: keyHeaders(key), payload: body }),
          { status: 400, code, path: url },
        );
        if (code !== 'GW_VALIDATION' || typeof body.model !== 'string') continue;
        expect(envelope.errors.join(' ')).not.toBe('');
      }
      if (code === 'GW_PARAMETER_OUT_OF_RANGE' || code === 'GW_PARAMETER_UNSUPPORTED') {
        const envelope = expectEnvelope(await create(key, body), {
          status: 400,
          code,
          path: '/api/v1/video/generations',
        });
        expect(envelope.errors[0]).toContain(`model "${String(body.model)}"`);
      }
      expect(await jobRowsOf(gateway, accountId)).toEqual([]);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
      expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
      expect(ark.requests.length).toBe(before);
    });
  });
});

describe('cancelling a queued video task', () => {
  let gateway: TestGateway;
  let ark: FakeServer;

  beforeAll(async () => {
    ark = await startArkFake();
    // No worker runs here: every task stays queued.
    gateway = await startTestGateway({
      upstreams: [ark],
      configText: videoGatewayConfig(ark, 'jobs: { concurrency: 0 }'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('releases the hold, ends the task cancelled with a cancelled usage record, and refuses a second cancel with 409', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const created = await gateway.request({
      method: 'POST',
      url: '/api/v1/video/generations',
      headers: keyHeaders(key),
      payload: { model: 'seedance', content: [text('never sent')], resolution: '480p', duration: 4 },
    });
    const task = created.json<VideoTask>();
    expect(task.status).toBe('queued');
    expect(await heldNanosOf(gateway, accountId)).toBe(usdToNanos(0.08));
    const other = await gateway.createFundedKey({ credits: 1 });
    const cancelPath = `/api/v1/video/tasks/${task.taskId}/cancel`;
    expectEnvelope(await gateway.request({ method: 'POST', url: cancelPath, headers: keyHeaders(other.key) }), {
      status: 404,
      code: 'GW_NOT_FOUND',
      path: cancelPath,
    });

    const cancelled = await gateway.request({ method: 'POST', url: cancelPath, headers: keyHeaders(key) });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json<VideoTask>()).toMatchObject({
      taskId: task.taskId,
      status: 'cancelled',
      error: 'cancelled by the client',
    });
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect((await usageRecords(gateway, key))[0]).toMatchObject({
      id: task.generationId,
      modality: 'video',
      status: 'cancelled',
      usdCost: 0,
    });
    const again = expectEnvelope(await gateway.request({ method: 'POST', url: cancelPath, headers: keyHeaders(key) }), {
      status: 409,
      code: 'GW_CONFLICT',
      path: cancelPath,
    });
    expect(again.errors[0]).toContain('cancelled');
    const read = await gateway.request({
      method: 'GET',
      url: `/api/v1/video/tasks/${task.taskId}`,
      headers: keyHeaders(key),
    });
    expect(read.json<VideoTask>().status).toBe('cancelled');
    expect(ark.requests.filter((request) => request.path.startsWith(tasksPath))).toEqual([]);
  });
});
