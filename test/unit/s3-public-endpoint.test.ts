import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/domain/secret.ts';
import { S3ObjectStore } from '../../src/storage/s3-object-store.ts';

const base = {
  bucket: 'media',
  region: 'us-east-1',
  endpoint: 'http://minio:9000',
  accessKeyId: 'key',
  secretAccessKey: new Secret('secret'),
  forcePathStyle: true,
  prefix: '',
};

describe('S3 download links', () => {
  it('are presigned for media.s3.publicEndpoint when the gateway reaches the bucket elsewhere', async () => {
    const store = new S3ObjectStore({ ...base, publicEndpoint: 'http://localhost:9000' });
    const link = new URL(await store.signedLink('images/gen_1/0.png', new Date(Date.now() + 60_000)));
    expect(`${link.origin}${link.pathname}`).toBe('http://localhost:9000/media/images/gen_1/0.png');
    expect(link.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    await store.close();
  });

  it('are presigned for the endpoint itself without one', async () => {
    const store = new S3ObjectStore(base);
    expect(await store.signedLink('images/gen_1/0.png', new Date(Date.now() + 60_000))).toMatch(
      /^http:\/\/minio:9000\/media\/images\/gen_1\/0\.png\?/,
    );
    await store.close();
  });
});
