import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { isoVideoFacts } from '../../src/media/media-duration.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeRouterKey, startRouterVideoFake } from '../fakes/router-video-fake.ts';
import { expectEnvelope, heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import { freePort } from '../support/free-port.ts';
import { balanceNanosOf, jobRowsOf } from '../support/image-jobs.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { alphaVideoModelsYaml } from '../support/video-models.ts';

interface AlphaVideoJob {
  id: string;
  polling_url: string;
  status: string;
  generation_id?: string;
  unsigned_urls?: string[];
  usage?: { cost: number; is_byok: boolean };
  error?: string;
}

describe('alpha videos: the routing provider video API over video tasks', () => {
  let gateway: TestGateway;
  let router: FakeServer;
  let address: string;

  beforeAll(async () => {
    router = await startRouterVideoFake();
    // Links are made on the configured HOST:PORT, the address this test then listens on.
    const port = await freePort();
    gateway = await startTestGateway({
      upstreams: [router],
      env: { PORT: String(port) },
      configText: [
        'providers:',
        `  router: { protocol: openai, baseUrl: "${router.url}/api/v1", apiKey: ${fakeRouterKey} }`,
        '  sandbox: { protocol: sandbox }',
        'models:',
        alphaVideoModelsYaml,
        'jobs: { taskPollMs: 20, idlePollMs: 50 }',
      ].join('\n'),
    });
    address = await gateway.app.listen({ port, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${address}/api/alpha/v1`, maxRetries: 0 });
  // Over the listening socket, as a client calls the gateway.
  const poll = async (key: string, id: string) =>
    (await (await fetch(`${address}/api/alpha/v1/videos/${id}`, { headers: keyHeaders(key) })).json()) as AlphaVideoJob;
  async function waitForEnd(key: string, id: string, seen?: Set<string>): Promise<AlphaVideoJob> {
    for (let i = 0; i < 500; i++) {
      const job = await poll(key, id);
      seen?.add(job.status);
      if (['completed', 'failed', 'cancelled', 'expired'].includes(job.status)) return job;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`video ${id} did not end`);
  }
  const creates = () => router.requests.filter((request) => request.method === 'POST');

  it('runs the openai SDK flow (multipart create, retrieve, content download) against a routed model', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 2 });
    const sdk = client(key);
    const created = (await sdk.videos.create({
      model: 'veo' as never,
      prompt: 'a heron taking off',
      seconds: '8',
      size: '1792x1024',
      input_reference: { image_url: 'https://example.com/heron.png' },
    })) as unknown as AlphaVideoJob;
    expect(created).toMatchObject({
      status: 'pending',
      polling_url: `${address}/api/alpha/v1/videos/${created.id}`,
      generation_id: created.id,
    });
    // Held: 8 seconds at the 1080p price that the size implies.
    expect(await heldNanosOf(gateway, accountId)).toBe(usdToNanos(1.6));
    const seen = new Set<string>();
    let job = (await sdk.videos.retrieve(created.id)) as unknown as AlphaVideoJob;
    seen.add(job.status);
    job = await waitForEnd(key, created.id, seen);
    expect(job.status, job.error).toBe('completed');
    expect(seen.has('in_progress')).toBe(true);
    expect(job.unsigned_urls).toEqual([`${address}/api/alpha/v1/videos/${created.id}/content?index=0`]);
    // The fake's clip is as long as asked: 8 s at 1080p.
    expect(job.usage).toEqual({ cost: 1.6, is_byok: false });

    const content = await sdk.videos.downloadContent(created.id);
    const bytes = Buffer.from(await content.arrayBuffer());
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect((await isoVideoFacts(bytes))?.seconds).toBe(8);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(2) - usdToNanos(1.6));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);

    const sent = creates().at(-1)!;
    expect(sent.path).toBe('/api/v1/videos');
    expect(sent.body).toEqual({
      model: 'google/veo-3.1',
      prompt: 'a heron taking off',
      input_references: [{ type: 'image_url', image_url: { url: 'https://example.com/heron.png' } }],
      duration: 8,
      resolution: '1080p',
      aspect_ratio: '16:9',
    });
    // The content was read from the provider with its key, once.
    expect(router.requests.filter((request) => request.path.endsWith('/content?index=0'))).toHaveLength(1);
  });

  it('takes the JSON body raw, serves the content with ranges, and refuses other indexes and unfinished videos', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const created = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/videos',
      headers: keyHeaders(key),
      // The sandbox's trigger word keeps the task running a second, so the early read always finds it unfinished.
      payload: { model: 'sandbox-video', prompt: 'a raw clip sandbox-slow-1', seconds: 2, size: '720x1280' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<AlphaVideoJob>().id;
    const early = await gateway.request({
      method: 'GET',
      url: `/api/alpha/v1/videos/${id}/content`,
      headers: keyHeaders(key),
    });
    expectEnvelope(early, { status: 409, code: 'GW_CONFLICT', path: `/api/alpha/v1/videos/${id}/content` });
    const job = await waitForEnd(key, id);
    expect(job).toMatchObject({ status: 'completed', usage: { cost: 0.002 } });
    const whole = await gateway.request({
      method: 'GET',
      url: `/api/alpha/v1/videos/${id}/content?index=0`,
      headers: keyHeaders(key),
    });
    expect(whole.statusCode).toBe(200);
    expect((await isoVideoFacts(whole.rawPayload))?.seconds).toBe(2);
    const part = await gateway.request({
      method: 'GET',
      url: `/api/alpha/v1/videos/${id}/content`,
      headers: { ...keyHeaders(key), range: 'bytes=-16' },
    });
    expect(part.statusCode).toBe(206);
    expect(part.rawPayload.equals(whole.rawPayload.subarray(whole.rawPayload.length - 16))).toBe(true);
    expectEnvelope(
      await gateway.request({
        method: 'GET',
        url: `/api/alpha/v1/videos/${id}/content?index=1`,
        headers: keyHeaders(key),
      }),
      { status: 404, code: 'GW_NOT_FOUND', path: `/api/alpha/v1/videos/${id}/content` },
    );
    const outside = await gateway.request({
      method: 'GET',
      url: `/api/alpha/v1/videos/${id}/content`,
      headers: { ...keyHeaders(key), range: 'bytes=999999-' },
    });
    expectEnvelope(outside, {
      status: 416,
      code: 'GW_RANGE_NOT_SATISFIABLE',
      path: `/api/alpha/v1/videos/${id}/content`,
    });
    // The file's size, as RFC 9110 has a 416 name it.
    expect(outside.headers['content-range']).toBe(`bytes */${whole.rawPayload.length}`);
    const other = await gateway.createFundedKey({ credits: 1 });
    expectEnvelope(
      await gateway.request({
        method: 'GET',
        url: `/api/alpha/v1/videos/${id}/content`,
        headers: keyHeaders(other.key),
      }),
      { status: 404, code: 'GW_NOT_FOUND', path: `/api/alpha/v1/videos/${id}/content` },
    );
    expectEnvelope(
      await gateway.request({ method: 'GET', url: `/api/alpha/v1/videos/${id}`, headers: keyHeaders(other.key) }),
      { status: 404, code: 'GW_NOT_FOUND', path: `/api/alpha/v1/videos/${id}` },
    );
  });

  it('reports a provider failure as failed with its message and charges nothing', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const created = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/videos',
      headers: keyHeaders(key),
      payload: { model: 'veo', prompt: 'doomed fake-video-fail', seconds: '4', size: '1280x720' },
    });
    const job = await waitForEnd(key, created.json<AlphaVideoJob>().id);
    expect(job).toMatchObject({ status: 'failed', error: 'The provider could not make this video' });
    expect(job.unsigned_urls).toBeUndefined();
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  // Each refused body is claimed on the surface's decoding and the video plan in
  // test/unit/request-rules.test.ts; here, one per refusing step, answered in the envelope with nothing
  // held, stored or routed.
  it.each([
    ['no prompt', { model: 'veo' }, 'GW_VALIDATION'],
    ['seconds outside the model range', { model: 'veo', prompt: 'x', seconds: 12 }, 'GW_PARAMETER_OUT_OF_RANGE'],
    ['a file_id', { model: 'veo', prompt: 'x', input_reference: { file_id: 'file-1' } }, 'GW_PARAMETER_UNSUPPORTED'],
    ['a model that makes no video', { model: 'no-such-model', prompt: 'x' }, 'GW_MODEL_NOT_AVAILABLE'],
  ])('refuses %s with 400 before routing', async (_name, body, code) => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const before = creates().length;
    const envelope = expectEnvelope(
      await gateway.request({ method: 'POST', url: '/api/alpha/v1/videos', headers: keyHeaders(key), payload: body }),
      { status: 400, code, path: '/api/alpha/v1/videos' },
    );
    expect(envelope.errors[0]!.length).toBeGreaterThan(0);
    expect(creates().length).toBe(before);
    expect(await jobRowsOf(gateway, accountId)).toEqual([]);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  // The route takes JSON and the SDKs' multipart form: a refusal of any other type names both.
  it.each([
    ['application/x-www-form-urlencoded', 'model=veo&prompt=x'],
    ['text/plain', 'model=veo prompt=x'],
  ])('refuses a %s body with 415 naming every type it takes, holding and sending nothing', async (type, payload) => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const before = creates().length;
    const envelope = expectEnvelope(
      await gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/videos',
        headers: { ...keyHeaders(key), 'content-type': type },
        payload,
      }),
      { status: 415, code: 'GW_UNSUPPORTED_MEDIA_TYPE', path: '/api/alpha/v1/videos' },
    );
    expect(envelope.errors).toEqual([
      'unsupported Content-Type: send the body as application/json or multipart/form-data',
    ]);
    expect(creates().length).toBe(before);
    expect(await jobRowsOf(gateway, accountId)).toEqual([]);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('refuses an uploaded input_reference file from the SDK with 400', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const upload = await OpenAI.toFile(Buffer.from('not really an image'), 'ref.png', { type: 'image/png' });
    await expect(
      client(key).videos.create({ model: 'veo' as never, prompt: 'x', input_reference: upload }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('refuses a form field given twice with 400 naming it, and goes on serving (the refusal once escaped the parser)', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const form = new FormData();
    form.append('model', 'veo');
    form.append('prompt', 'a');
    form.append('prompt', 'b');
    const response = await fetch(`${address}/api/alpha/v1/videos`, {
      method: 'POST',
      headers: keyHeaders(key),
      body: form,
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('multipart field \\"prompt\\" is given twice');
    const after = await fetch(`${address}/api/alpha/v1/videos/vid_unknown`, { headers: keyHeaders(key) });
    expect(after.status).toBe(404);
  });
});
