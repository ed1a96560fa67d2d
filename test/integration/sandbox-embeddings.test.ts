import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/domain/tokenizer.ts';
import { sandboxClip } from '../../src/providers/sandbox/sandbox-video.ts';
import { heldNanosOf, shippedConfigWith, usageRecords } from '../support/http-helpers.ts';
import { isoVideoFile, pdfFile, pngBase64, wavFile } from '../support/media-fixtures.ts';
import { startMediaHost } from '../support/media-host.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * The shipped catalog's `sandbox-embedding-multimodal` through the beta embeddings extension: every part
 * type, vectors that depend on the content's bytes only, and the media billed at the catalog's prices.
 */
const png = Buffer.from(pngBase64, 'base64');
const speech = wavFile(2, 100);
const media = await startMediaHost({ '/photo.png': { contentType: 'image/png', body: png } });

interface EmbeddingsBody {
  data: Array<{ index: number; embedding: number[] }>;
}

describe('sandbox multimodal embeddings', () => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    gateway = await startTestGateway({
      configText: shippedConfigWith({ remoteMedia: 'remoteMedia: { allowPrivateAddresses: true, timeoutMs: 5000 }' }),
    });
    ({ key, accountId } = await gateway.createFundedKey({ credits: 1 }));
  });
  afterAll(async () => {
    await gateway?.close();
    await media.close();
  });

  const embed = async (input: unknown[], dimensions = 16) => {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/beta/v1/embeddings',
      headers: { 'x-api-key': key },
      payload: { model: 'sandbox-embedding-multimodal', input, dimensions },
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<EmbeddingsBody>().data.map((item) => item.embedding);
  };

  it('embeds text, image, audio, PDF and video parts into unit vectors, billing each medium', async () => {
    const content = [
      { type: 'text', text: 'a lighthouse' },
      { type: 'imageBase64', data: pngBase64, mediaType: 'image/png' },
      { type: 'audioBase64', data: speech.toString('base64'), mediaType: 'audio/wav' },
      { type: 'fileBase64', data: pdfFile.toString('base64') },
    ];
    const video = [{ type: 'videoBase64', data: isoVideoFile(3).toString('base64'), mediaType: 'video/mp4' }];
    const vectors = await embed([{ content }, { content: video }]);
    expect(vectors).toHaveLength(2);
    for (const vector of vectors) {
      expect(vector).toHaveLength(16);
      expect(Math.hypot(...vector)).toBeCloseTo(1, 9);
    }
    expect(vectors[0]).not.toEqual(vectors[1]);
    // 0.01 USD per million text tokens, 0.00001 per image, per audio second, 0.0001 per PDF and per video second.
    const usd = (countTextTokens('a lighthouse') * 0.01) / 1e6 + 0.00001 + 2 * 0.00001 + 0.0001 + 3 * 0.0001;
    const [record] = await usageRecords(gateway, key);
    expect(record).toMatchObject({ status: 'succeeded' });
    expect(record!.usdCost).toBeCloseTo(usd, 12);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('bills video and audio for what the files hold, not for the shorter lengths their headers state', async () => {
    const { key: payer } = await gateway.createFundedKey({ credits: 1 });
    // The sandbox's real 10 s MP4, its movie header edited to say 1 ms (a version-0 mvhd keeps its duration 16
    // bytes into its payload): its track, its samples and every frame are untouched, so it still plays 10 s.
    const clip = sandboxClip('a boat', 10, '16:9');
    clip.writeUInt32BE(1, clip.indexOf('mvhd', 0, 'latin1') + 4 + 16);
    // 100 s of WAV (100 samples a second) whose data chunk says it holds 8 bytes.
    const audio = wavFile(100, 100, 8);
    const response = await gateway.request({
      method: 'POST',
      url: '/api/beta/v1/embeddings',
      headers: { 'x-api-key': payer },
      payload: {
        model: 'sandbox-embedding-multimodal',
        dimensions: 4,
        input: [
          { content: [{ type: 'videoBase64', data: clip.toString('base64'), mediaType: 'video/mp4' }] },
          { content: [{ type: 'audioBase64', data: audio.toString('base64'), mediaType: 'audio/wav' }] },
        ],
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    const [record] = await usageRecords(gateway, payer);
    expect(record).toMatchObject({ status: 'succeeded', usage: { videoSeconds: 10, audioSeconds: 100 } });
    // 10 s of video at 0.0001 USD and 100 s of audio at 0.00001.
    expect(record!.usdCost).toBeCloseTo(10 * 0.0001 + 100 * 0.00001, 12);
  });

  it('derives a vector from the bytes: raw base64, a data URL and a URL of the same image agree', async () => {
    const [raw, dataUrl, byUrl, other] = await embed([
      { content: [{ type: 'imageBase64', data: pngBase64, mediaType: 'image/png' }] },
      { content: [{ type: 'imageBase64', data: `data:image/png;base64,${pngBase64}` }] },
      { content: [{ type: 'imageUrl', url: `${media.url}/photo.png` }] },
      {
        content: [
          {
            type: 'imageBase64',
            data: Buffer.concat([png, Buffer.from([0])]).toString('base64'),
            mediaType: 'image/png',
          },
        ],
      },
    ]);
    expect(dataUrl).toEqual(raw);
    expect(byUrl).toEqual(raw);
    expect(other).not.toEqual(raw);
    expect(await embed([{ content: [{ type: 'imageBase64', data: pngBase64, mediaType: 'image/png' }] }])).toEqual([
      raw,
    ]);
  });

  it('keeps the text-only sandbox model to text parts', async () => {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/beta/v1/embeddings',
      headers: { 'x-api-key': key },
      payload: {
        model: 'sandbox-embedding',
        input: [{ content: [{ type: 'imageBase64', data: pngBase64, mediaType: 'image/png' }] }],
      },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ errors: string[] }>().errors).toEqual([
      'model "sandbox-embedding" does not accept "imageBase64" input parts',
    ]);
  });
});
