import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/domain/secret.ts';
import { S3ObjectStore } from '../../src/storage/s3-object-store.ts';
import { keyHeaders } from '../support/http-helpers.ts';
import { sandboxImageConfigYaml, waitForImageJob } from '../support/image-jobs.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const credentials = { accessKeyId: 'S3RVER', secretAccessKey: new Secret('S3RVER') };

/** A local S3-compatible server (s3rver, from npm) on loopback, with the bucket `media`. */
describe('the S3 object store against a local S3 server', () => {
  let server: S3rver;
  let endpoint: string;
  let directory: string;

  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'gw-s3-'));
    server = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory,
      configureBuckets: [{ name: 'media', configs: [] }],
    });
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await server?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const store = (prefix = '') =>
    new S3ObjectStore({ bucket: 'media', region: 'us-east-1', endpoint, ...credentials, forcePathStyle: true, prefix });

  it('puts, gets, overwrites and deletes objects; a missing key reads as undefined', async () => {
    const s3 = store();
    await s3.check();
    await s3.put('images/a/0.png', Buffer.from('first'), 'image/png');
    expect(await s3.get('images/a/0.png')).toEqual({ bytes: Buffer.from('first'), contentType: 'image/png' });
    await s3.put('images/a/0.png', Buffer.from('second'), 'image/jpeg');
    expect(await s3.get('images/a/0.png')).toEqual({ bytes: Buffer.from('second'), contentType: 'image/jpeg' });
    await s3.delete('images/a/0.png');
    expect(await s3.get('images/a/0.png')).toBeUndefined();
    await s3.delete('images/a/0.png');
    await expect(s3.put('../escape', Buffer.from('x'), 'text/plain')).rejects.toThrow(/invalid object key/);
    await s3.close();
  });

  it('keeps objects under its prefix', async () => {
    const prefixed = store('tenant-1/');
    await prefixed.put('images/b/0.png', Buffer.from('mine'), 'image/png');
    expect(await store().get('tenant-1/images/b/0.png')).toMatchObject({ bytes: Buffer.from('mine') });
    expect(await store().get('images/b/0.png')).toBeUndefined();
  });

  // One page of a listing: s3rver cannot answer a truncated one (its continuation token needs a cipher OpenSSL 3
  // refuses), so the listing's later pages are not exercised here.
  it("deletes a folder's objects, and none outside it or its prefix", async () => {
    const prefixed = store('tenant-2/');
    const names = Array.from({ length: 3 }, (_, index) => `images/gen_d/${index}.png`);
    await Promise.all(names.map((name) => prefixed.put(name, Buffer.from(name), 'image/png')));
    await prefixed.put('images/gen_dd/0.png', Buffer.from('beside'), 'image/png');
    await store().put('images/gen_d/0.png', Buffer.from('unprefixed'), 'image/png');
    await prefixed.deleteFolder('images/gen_d/');
    for (const name of names) expect(await prefixed.get(name)).toBeUndefined();
    expect(await prefixed.get('images/gen_dd/0.png')).toMatchObject({ bytes: Buffer.from('beside') });
    expect(await store().get('images/gen_d/0.png')).toMatchObject({ bytes: Buffer.from('unprefixed') });
    await prefixed.deleteFolder('images/gen_d/');
    await expect(prefixed.deleteFolder('images/gen_dd')).rejects.toThrow(/invalid object folder/);
    await prefixed.close();
  });

  // s3rver does not verify query signatures, so refusing a tampered or expired link is the real S3's part; what
  // the gateway owns is asking for a SigV4 presigned GET that expires when the link should.
  it('presigned links download without credentials and carry their expiry', async () => {
    const s3 = store();
    await s3.put('images/c/0.png', Buffer.from('linked'), 'image/png');
    const link = new URL(await s3.signedLink('images/c/0.png', new Date(Date.now() + 90_000)));
    expect(link.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(Number(link.searchParams.get('X-Amz-Expires'))).toBeGreaterThanOrEqual(89);
    expect(Number(link.searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(90);
    expect(link.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    const answer = await fetch(link);
    expect(answer.status).toBe(200);
    expect(Buffer.from(await answer.arrayBuffer()).toString()).toBe('linked');
    // Saved as a file under the name the filesystem store's downloads give it, with the type stored by put.
    expect(link.searchParams.get('response-content-disposition')).toBe('attachment; filename=c-0.png');
    expect(answer.headers.get('content-disposition')).toBe('attachment; filename=c-0.png');
    expect(answer.headers.get('content-type')).toBe('image/png');
    // S3 presigns at most a week: a longer retention still gets a link S3 accepts.
    const far = new URL(await s3.signedLink('images/c/0.png', new Date(Date.now() + 30 * 86_400_000)));
    expect(Number(far.searchParams.get('X-Amz-Expires'))).toBe(7 * 86_400);
  });

  describe('a gateway archiving into the bucket', () => {
    let gateway: TestGateway;

    beforeAll(async () => {
      gateway = await startTestGateway({
        configText: sandboxImageConfigYaml(
          `media: { store: s3, s3: { bucket: media, endpoint: "${endpoint}", accessKeyId: S3RVER, secretAccessKey: S3RVER, forcePathStyle: true, prefix: gateway/ } }`,
        ),
      });
    });
    afterAll(async () => {
      await gateway?.close();
    });

    it('archives job outputs in the bucket and answers presigned download links', async () => {
      const { key } = await gateway.createFundedKey();
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/image/generations/async',
        headers: keyHeaders(key),
        payload: { model: 'sandbox-image', content: [{ type: 'text', text: 'into the bucket' }] },
      });
      const job = await waitForImageJob(gateway, {
        key,
        generationId: response.json<{ generationId: string }>().generationId,
      });
      expect(job.status, job.error).toBe('succeeded');
      const link = job.result!.images[0]!.downloadUrl;
      expect(link.startsWith(`${endpoint}/media/gateway/images/`)).toBe(true);
      expect(link).toContain('X-Amz-Signature=');
      const download = await fetch(link);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe('image/png');
    });
  });
});
