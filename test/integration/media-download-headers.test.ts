/**
 * Every download of archived media (signed links, and the alpha video content route) says `nosniff` and offers
 * the file as an attachment under a safe name, so a browser opening the link neither guesses another type nor
 * renders it on the gateway's origin.
 */
import { parse as parseContentDisposition } from 'content-disposition';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyHeaders } from '../support/http-helpers.ts';
import { sandboxImageConfigYaml, waitForImageJob } from '../support/image-jobs.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const pathOf = (link: string) => {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
};

function expectSafeDownload(response: LightMyRequestResponse, status: number, filename: RegExp): void {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  const disposition = parseContentDisposition(String(response.headers['content-disposition']));
  expect(disposition.type).toBe('attachment');
  expect(disposition.parameters.filename).toMatch(filename);
  expect(disposition.parameters.filename).toMatch(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/);
}

describe('download headers of archived media', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      configText: sandboxImageConfigYaml(
        '  - { id: sandbox-video, outputModalities: [video], pricing: { perVideoSecond: 0.001 }, providers: [{ provider: sandbox, model: video }] }\njobs: { idlePollMs: 50 }',
      ),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('sends nosniff and an attachment disposition on signed links: GET, HEAD and ranges', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const submitted = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-image', content: [{ type: 'text', text: 'a kite' }] },
    });
    expect(submitted.statusCode, submitted.body).toBe(202);
    const { generationId } = submitted.json<{ generationId: string }>();
    const job = await waitForImageJob(gateway, { key, generationId });
    const link = pathOf(job.result!.images[0]!.downloadUrl);
    const name = new RegExp(`^${generationId}-0\\.png$`);
    expectSafeDownload(await gateway.request({ method: 'GET', url: link }), 200, name);
    expectSafeDownload(await gateway.request({ method: 'HEAD', url: link }), 200, name);
    expectSafeDownload(await gateway.request({ method: 'GET', url: link, headers: { range: 'bytes=0-3' } }), 206, name);
  });

  it('sends them on the alpha video content download too', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const created = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/videos',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-video', prompt: 'a kite', seconds: 1, size: '720x1280' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const { id } = created.json<{ id: string }>();
    for (let i = 0; i < 400; i++) {
      const job = (
        await gateway.request({ method: 'GET', url: `/api/alpha/v1/videos/${id}`, headers: keyHeaders(key) })
      ).json<{ status: string }>();
      if (job.status === 'completed') break;
      expect(['queued', 'in_progress', 'pending']).toContain(job.status);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const name = new RegExp(`^${id}-video\\.mp4$`, 'i');
    expectSafeDownload(
      await gateway.request({ method: 'GET', url: `/api/alpha/v1/videos/${id}/content`, headers: keyHeaders(key) }),
      200,
      name,
    );
    expectSafeDownload(
      await gateway.request({
        method: 'GET',
        url: `/api/alpha/v1/videos/${id}/content`,
        headers: { ...keyHeaders(key), range: 'bytes=-16' },
      }),
      206,
      name,
    );
  });
});
