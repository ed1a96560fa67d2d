import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { MediaJobsRepository } from '../../src/storage/media-jobs-repository.ts';
import { expectEnvelope, heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import {
  balanceNanosOf,
  jobRowsOf,
  sandboxImageConfigYaml,
  tinyPngBase64,
  waitForImageJob,
  type ImageJobBody,
} from '../support/image-jobs.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The path and query of an absolute download link, to fetch it in-process. */
function pathOf(link: string): string {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
}

describe('native image generation through the sandbox', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ configText: sandboxImageConfigYaml() });
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
    const answer = response.json<{ generationId: string; status: string }>();
    expect(answer.status).toBe('queued');
    expect(answer.generationId).toMatch(/^gen_/);
    return answer.generationId;
  }

  it('runs a job to success: archived PNGs behind signed links, billed per image at the estimate', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const body = {
      model: 'sandbox-image',
      content: [{ type: 'text', text: 'a red fox' }],
      numberOfImages: 3,
      size: '512x256',
      unknownField: 'stripped',
    };
    const estimate = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/estimate',
      headers: keyHeaders(key),
      payload: body,
    });
    expect(estimate.statusCode, estimate.body).toBe(200);
    expect(estimate.json()).toEqual({
      data: { estimatedUserCost: 0.003, currency: 'USD' },
      success: true,
      status: 200,
    });

    const id = await submit(key, body);
    const [row] = await jobRowsOf(gateway, accountId);
    expect(row?.holdNanos).toBe(usdToNanos(0.003));
    const job = await waitForImageJob(gateway, { key, generationId: id });
    expect(job.status, job.error).toBe('succeeded');
    expect(job.result!.images).toHaveLength(3);
    expect(job.result!.usage).toMatchObject({ generatedImages: 3, usdCost: 0.003 });
    for (const image of job.result!.images) {
      expect(image.assetId).toMatch(/^asset_/);
      const download = await gateway.request({ method: 'GET', url: pathOf(image.downloadUrl) });
      expect(download.statusCode).toBe(200);
      expect(download.headers['content-type']).toBe('image/png');
      expect(download.rawPayload.subarray(0, 8).equals(pngSignature)).toBe(true);
    }
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.003));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);

    const usage = await gateway.request({ method: 'GET', url: '/api/compat/v1/usage', headers: keyHeaders(key) });
    const [record] = usage.json<{ results: Array<Record<string, unknown>> }>().results;
    expect(record).toMatchObject({
      id,
      modality: 'image',
      model: 'sandbox-image',
      status: 'succeeded',
      usdCost: 0.003,
    });
    expect(JSON.stringify(record)).not.toContain('unknownField');
  });

  it("answers 404 for an unknown id and for another account's job", async () => {
    const owner = await gateway.createFundedKey();
    const other = await gateway.createFundedKey();
    const id = await submit(owner.key, { model: 'sandbox-image', content: [{ type: 'text', text: 'mine' }] });
    const foreign = await gateway.request({
      method: 'GET',
      url: `/api/v1/image/generations/async/${id}`,
      headers: keyHeaders(other.key),
    });
    expectEnvelope(foreign, { status: 404, code: 'GW_NOT_FOUND', path: `/api/v1/image/generations/async/${id}` });
    const unknown = await gateway.request({
      method: 'GET',
      url: '/api/v1/image/generations/async/gen_nope',
      headers: keyHeaders(owner.key),
    });
    expectEnvelope(unknown, { status: 404, code: 'GW_NOT_FOUND', path: '/api/v1/image/generations/async/gen_nope' });
    await waitForImageJob(gateway, { key: owner.key, generationId: id });
  });

  it('signed links: a tampered signature, key or expiry answers 403, an expired link 403', async () => {
    const { key } = await gateway.createFundedKey();
    const job = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, { model: 'sandbox-image', content: [{ type: 'text', text: 'links' }] }),
    });
    const link = new URL(job.result!.images[0]!.downloadUrl);
    const signature = link.searchParams.get('signature')!;
    const tampered = new URL(link);
    tampered.searchParams.set('signature', `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`);
    expectEnvelope(await gateway.request({ method: 'GET', url: pathOf(tampered.href) }), {
      status: 403,
      code: 'GW_FORBIDDEN',
      path: link.pathname,
    });
    const longer = new URL(link);
    longer.searchParams.set('expires', String(Number(link.searchParams.get('expires')) + 3600));
    expectEnvelope(await gateway.request({ method: 'GET', url: pathOf(longer.href) }), {
      status: 403,
      code: 'GW_FORBIDDEN',
      path: link.pathname,
    });
    const otherObject = new URL(link);
    otherObject.pathname = link.pathname.replace(/0\.png$/, '1.png');
    expectEnvelope(await gateway.request({ method: 'GET', url: pathOf(otherObject.href) }), {
      status: 403,
      code: 'GW_FORBIDDEN',
      path: otherObject.pathname,
    });
    const objectKey = decodeURIComponent(link.pathname.replace('/api/v1/media/files/', ''));
    const expired = await gateway.gateway.core.store.signedLink(objectKey, new Date(Date.now() - 1000));
    const response = await gateway.request({ method: 'GET', url: expired });
    expectEnvelope(response, { status: 403, code: 'GW_FORBIDDEN', path: link.pathname });
    expect(response.json<{ errors: string[] }>().errors[0]).toMatch(/expired/);
  });

  it('reuses an archived output as imageAssetId for its owner, and answers 404 to any other account', async () => {
    const owner = await gateway.createFundedKey();
    const other = await gateway.createFundedKey();
    const first = await waitForImageJob(gateway, {
      key: owner.key,
      generationId: await submit(owner.key, { model: 'sandbox-image', content: [{ type: 'text', text: 'base' }] }),
    });
    const assetId = first.result!.images[0]!.assetId;
    const reuse = {
      model: 'sandbox-image',
      content: [
        { type: 'text', text: 'again' },
        { type: 'imageAssetId', assetId },
      ],
    };
    const second = await waitForImageJob(gateway, { key: owner.key, generationId: await submit(owner.key, reuse) });
    expect(second.status, second.error).toBe('succeeded');
    const before = await balanceNanosOf(gateway, other.accountId);
    const refused = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(other.key),
      payload: reuse,
    });
    const envelope = expectEnvelope(refused, {
      status: 404,
      code: 'GW_NOT_FOUND',
      path: '/api/v1/image/generations/async',
    });
    expect(envelope.errors[0]).toContain(assetId);
    expect(await jobRowsOf(gateway, other.accountId)).toEqual([]);
    expect(await balanceNanosOf(gateway, other.accountId)).toBe(before);
  });

  it('reads every asset a request names in one query before admission, refusing the first unknown by its field', async () => {
    const { key, accountId } = await gateway.createFundedKey();
    const made = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, { model: 'sandbox-image', content: [{ type: 'text', text: 'base' }] }),
    });
    const assetId = made.result!.images[0]!.assetId;
    const reads = vi.spyOn(MediaJobsRepository.prototype, 'findAssets');
    try {
      const named = Array.from({ length: 13 }, () => ({ type: 'imageAssetId', assetId }));
      const refused = await gateway.request({
        method: 'POST',
        url: '/api/v1/image/generations/async',
        headers: keyHeaders(key),
        payload: {
          model: 'sandbox-image',
          content: [{ type: 'text', text: 'many' }, ...named, { type: 'imageAssetId', assetId: 'asset_unknown' }],
        },
      });
      const envelope = expectEnvelope(refused, {
        status: 404,
        code: 'GW_NOT_FOUND',
        path: '/api/v1/image/generations/async',
      });
      expect(envelope.errors[0]).toBe('content[14]: asset "asset_unknown" not found');
      expect(reads).toHaveBeenCalledTimes(1);
      expect(reads.mock.calls[0]![0]).toEqual([assetId, 'asset_unknown']);

      const reused = await waitForImageJob(gateway, {
        key,
        generationId: await submit(key, {
          model: 'sandbox-image',
          content: [{ type: 'text', text: 'many' }, ...named],
        }),
      });
      expect(reused.status, reused.error).toBe('succeeded');
      expect(reads).toHaveBeenCalledTimes(2);
    } finally {
      reads.mockRestore();
    }
    expect((await jobRowsOf(gateway, accountId)).length).toBe(2);
  });

  it('decomposes one image into a base and ascending layers with boxes, billed per returned image', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const body = {
      model: 'sandbox-image-layers',
      layerDecomposition: true,
      resolution: '1K',
      content: [{ type: 'imageBase64', data: tinyPngBase64, mediaType: 'image/png' }],
    };
    const estimate = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/estimate',
      headers: keyHeaders(key),
      payload: body,
    });
    // The layer count is the model's choice: the estimate (and the hold) covers the most it can return, 17 images.
    expect(estimate.json<{ data: { estimatedUserCost: number } }>().data.estimatedUserCost).toBe(0.034);
    const job = await waitForImageJob(gateway, { key, generationId: await submit(key, body) });
    expect(job.status, job.error).toBe('succeeded');
    const [base, ...layers] = job.result!.images;
    expect(base).toMatchObject({ zIndex: 0 });
    expect(base!.boundingBox).toBeUndefined();
    expect(base!.name).toBeUndefined();
    expect(layers.length).toBeGreaterThan(0);
    const order = layers.map((layer) => layer.zIndex!);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    for (const layer of layers) {
      expect(layer.zIndex).toBeGreaterThan(0);
      expect(layer.boundingBox!.absolute).toHaveLength(4);
      expect(layer.boundingBox!.normalized).toHaveLength(4);
      for (const value of layer.boundingBox!.normalized) {
        expect(value).toBeGreaterThanOrEqual(0);
        expect(value).toBeLessThanOrEqual(1000);
      }
      expect(typeof layer.name).toBe('string');
      expect(typeof layer.description).toBe('string');
      const download = await gateway.request({ method: 'GET', url: pathOf(layer.downloadUrl) });
      expect(download.headers['content-type']).toBe('image/png');
    }
    const count = job.result!.images.length;
    expect(job.result!.usage.usdCost).toBeCloseTo(0.002 * count, 9);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.002) * BigInt(count));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('the waiting form answers the ImageResult when the job ends in time', async () => {
    const { key } = await gateway.createFundedKey();
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-image', content: [{ type: 'text', text: 'now' }], numberOfImages: 2 },
    });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<{ generationId: string } & NonNullable<ImageJobBody['result']>>();
    expect(body.generationId).toMatch(/^gen_/);
    expect(body.images).toHaveLength(2);
    expect(body.usage.usdCost).toBe(0.002);
  });

  it('expired assets are deleted by the retention sweep: their links and reuse then answer 404', async () => {
    const { key } = await gateway.createFundedKey();
    const job = await waitForImageJob(gateway, {
      key,
      generationId: await submit(key, { model: 'sandbox-image', content: [{ type: 'text', text: 'old' }] }),
    });
    const { assetId, downloadUrl } = job.result!.images[0]!;
    const { mediaAssets } = await import('../../src/storage/schema.ts');
    const { eq } = await import('drizzle-orm');
    await gateway.gateway.core.storage.db
      .update(mediaAssets)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(mediaAssets.id, assetId));
    expect(await gateway.gateway.core.retention.sweep()).toBeGreaterThanOrEqual(1);
    expectEnvelope(await gateway.request({ method: 'GET', url: pathOf(downloadUrl) }), {
      status: 404,
      code: 'GW_NOT_FOUND',
      path: new URL(downloadUrl).pathname,
    });
    const reuse = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(key),
      payload: {
        model: 'sandbox-image',
        content: [
          { type: 'text', text: 'x' },
          { type: 'imageAssetId', assetId },
        ],
      },
    });
    expectEnvelope(reuse, { status: 404, code: 'GW_NOT_FOUND', path: '/api/v1/image/generations/async' });
  });
});

describe('a job waits in the queue while no worker runs', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      configText: sandboxImageConfigYaml('jobs: { concurrency: 0, syncWaitMs: 200 }'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('stays queued (polling never moves it), holds exactly its estimate, and the waiting form answers 202', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const body = { model: 'sandbox-image', content: [{ type: 'text', text: 'later' }], numberOfImages: 4 };
    const estimate = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/estimate',
      headers: keyHeaders(key),
      payload: body,
    });
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(key),
      payload: body,
    });
    const { generationId } = response.json<{ generationId: string }>();
    for (let poll = 0; poll < 3; poll++) {
      const job = await gateway.request({
        method: 'GET',
        url: `/api/v1/image/generations/async/${generationId}`,
        headers: keyHeaders(key),
      });
      expect(job.json()).toEqual({ generationId, status: 'queued' });
    }
    expect(await heldNanosOf(gateway, accountId)).toBe(
      usdToNanos(estimate.json<{ data: { estimatedUserCost: number } }>().data.estimatedUserCost),
    );
    const waited = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations',
      headers: keyHeaders(key),
      payload: body,
    });
    expect(waited.statusCode).toBe(202);
    expect(waited.json()).toMatchObject({ status: 'queued' });
    // The queue's depth, in the readiness report and the metrics alike.
    expect((await gateway.request({ method: 'GET', url: '/readyz' })).json()).toMatchObject({
      workers: { jobs: { state: 'stopped', byState: { queued: 2, processing: 0 } } },
    });
    expect((await gateway.request({ method: 'GET', url: '/metrics' })).body).toMatch(
      /^gateway_media_jobs\{state="queued"\} 2$/m,
    );
  });
});
