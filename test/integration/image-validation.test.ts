import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../fakes/fake-server.ts';
import { expectEnvelope, heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import {
  balanceNanosOf,
  jobRowsOf,
  startImageFamilyGateway,
  tinyPngBase64,
  type ImageFamilyGateway,
} from '../support/image-jobs.ts';

const text = (value = 'a lighthouse') => ({ type: 'text', text: value });
const png = { type: 'imageBase64', data: tinyPngBase64, mediaType: 'image/png' };
const jpegHeader = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]).toString('base64');

type Case = [name: string, body: Record<string, unknown>, code: string, fragment: string];

/** Each request breaks one rule of the spec's image table, of layer decomposition or of the model's constraints. */
const cases: Case[] = [
  ['no model', { content: [text()] }, 'GW_VALIDATION', 'model'],
  ['empty content', { model: 'img-ark', content: [] }, 'GW_VALIDATION', 'content'],
  [
    'unknown part type',
    { model: 'img-ark', content: [{ type: 'audioUrl', url: 'https://example.com/a.wav' }] },
    'GW_VALIDATION',
    'content',
  ],
  ['text part without text', { model: 'img-ark', content: [{ type: 'text' }] }, 'GW_VALIDATION', 'needs "text"'],
  ['blank text part', { model: 'img-ark', content: [{ type: 'text', text: '  ' }] }, 'GW_VALIDATION', 'needs "text"'],
  [
    'imageUrl that is not http(s)',
    { model: 'img-ark', content: [text(), { type: 'imageUrl', url: 'file:///etc/passwd' }] },
    'GW_VALIDATION',
    'http(s)',
  ],
  [
    'raw base64 without mediaType',
    { model: 'img-ark', content: [text(), { type: 'imageBase64', data: tinyPngBase64 }] },
    'GW_VALIDATION',
    'mediaType',
  ],
  [
    'bytes that are no image',
    {
      model: 'img-ark',
      content: [
        text(),
        { type: 'imageBase64', data: Buffer.from('hello world').toString('base64'), mediaType: 'image/png' },
      ],
    },
    'GW_VALIDATION',
    'not an image',
  ],
  [
    'bytes of another type than declared',
    { model: 'img-ark', content: [text(), { type: 'imageBase64', data: tinyPngBase64, mediaType: 'image/jpeg' }] },
    'GW_VALIDATION',
    '"image/png"',
  ],
  [
    'a data URL of a type not accepted',
    {
      model: 'img-ark',
      content: [text(), { type: 'imageBase64', data: `data:image/svg+xml;base64,${tinyPngBase64}` }],
    },
    'GW_VALIDATION',
    'not accepted',
  ],
  [
    'invalid base64',
    { model: 'img-ark', content: [text(), { type: 'imageBase64', data: '!!!!', mediaType: 'image/png' }] },
    'GW_VALIDATION',
    'base64',
  ],
  [
    'jpeg header declared as png',
    { model: 'img-ark', content: [text(), { type: 'imageBase64', data: jpegHeader, mediaType: 'image/png' }] },
    'GW_VALIDATION',
    '"image/jpeg"',
  ],
  ['size without x', { model: 'img-ark', content: [text()], size: '1024' }, 'GW_VALIDATION', 'size'],
  ['size of zero', { model: 'img-ark', content: [text()], size: '0x1024' }, 'GW_VALIDATION', 'size'],
  ['numberOfImages 0', { model: 'img-ark', content: [text()], numberOfImages: 0 }, 'GW_VALIDATION', 'numberOfImages'],
  ['numberOfImages 16', { model: 'img-ark', content: [text()], numberOfImages: 16 }, 'GW_VALIDATION', 'numberOfImages'],
  [
    'numberOfImages not an integer',
    { model: 'img-ark', content: [text()], numberOfImages: 1.5 },
    'GW_VALIDATION',
    'numberOfImages',
  ],
  [
    'numberOfImages plus references over 15',
    { model: 'img-ark', content: [text(), png, png], numberOfImages: 14 },
    'GW_VALIDATION',
    'exceed 15',
  ],
  [
    'guidanceScale below 1',
    { model: 'img-ark', content: [text()], guidanceScale: 0.5 },
    'GW_VALIDATION',
    'guidanceScale',
  ],
  [
    'guidanceScale above 10',
    { model: 'img-ark', content: [text()], guidanceScale: 11 },
    'GW_VALIDATION',
    'guidanceScale',
  ],
  [
    'an outputFormat no family makes',
    { model: 'img-ark', content: [text()], outputFormat: 'gif' },
    'GW_VALIDATION',
    'outputFormat',
  ],
  [
    'webp from a family that makes png and jpeg',
    { model: 'img-ark', content: [text()], outputFormat: 'webp' },
    'GW_PARAMETER_OUT_OF_RANGE',
    'model "img-ark"',
  ],
  [
    'quality outside the list',
    { model: 'img-openai', content: [text()], quality: 'ultra' },
    'GW_VALIDATION',
    'quality',
  ],
  [
    'quality on a family without it',
    { model: 'img-ark', content: [text()], quality: 'high' },
    'GW_PARAMETER_UNSUPPORTED',
    'model "img-ark" does not support parameter "quality"',
  ],
  [
    'transparent background as jpeg',
    { model: 'img-openai', content: [text()], background: 'transparent', outputFormat: 'jpeg' },
    'GW_VALIDATION',
    'transparent',
  ],
  [
    'background outside the list',
    { model: 'img-openai', content: [text()], background: 'clear' },
    'GW_VALIDATION',
    'background',
  ],
  [
    'outputCompression above 100',
    { model: 'img-openai', content: [text()], outputCompression: 101, outputFormat: 'webp' },
    'GW_VALIDATION',
    'outputCompression',
  ],
  [
    'outputCompression of a png',
    { model: 'img-openai', content: [text()], outputCompression: 50 },
    'GW_VALIDATION',
    'outputCompression',
  ],
  [
    'outputCompression on a family without it',
    { model: 'img-ark', content: [text()], outputCompression: 50, outputFormat: 'jpeg' },
    'GW_PARAMETER_UNSUPPORTED',
    'model "img-ark"',
  ],
  [
    'watermark that is not a boolean',
    { model: 'img-ark', content: [text()], watermark: 'yes' },
    'GW_VALIDATION',
    'watermark',
  ],
  [
    'watermark on a family without it',
    { model: 'img-openai', content: [text()], watermark: true },
    'GW_PARAMETER_UNSUPPORTED',
    'model "img-openai"',
  ],
  [
    'optimizePromptOptions.mode outside the list',
    { model: 'img-ark', content: [text()], optimizePromptOptions: { mode: 'slow' } },
    'GW_VALIDATION',
    'mode',
  ],
  [
    'optimizePromptOptions on a family without it',
    { model: 'img-openai', content: [text()], optimizePromptOptions: { mode: 'fast' } },
    'GW_PARAMETER_UNSUPPORTED',
    'model "img-openai"',
  ],
  ['maxTokens 0', { model: 'img-ark', content: [text()], maxTokens: 0 }, 'GW_VALIDATION', 'maxTokens'],
  ['an unknown model', { model: 'no-such-model', content: [text()] }, 'GW_MODEL_NOT_AVAILABLE', 'no-such-model'],
  [
    'a model that makes no images',
    { model: 'sandbox-echo', content: [text()] },
    'GW_MODEL_NOT_AVAILABLE',
    'does not generate images',
  ],
  [
    'a model without image pricing',
    { model: 'img-unpriced', content: [text()] },
    'GW_MODEL_NOT_PRICED',
    'img-unpriced',
  ],
  [
    "a size outside the model's list",
    { model: 'img-gated', content: [text()], size: '512x512' },
    'GW_PARAMETER_OUT_OF_RANGE',
    'model "img-gated"',
  ],
  [
    "numberOfImages above the model's bound",
    { model: 'img-gated', content: [text()], numberOfImages: 5 },
    'GW_PARAMETER_OUT_OF_RANGE',
    'model "img-gated"',
  ],
  ['no text part', { model: 'img-ark', content: [png] }, 'GW_VALIDATION', 'text part'],
  [
    'layers on a model without them',
    { model: 'img-ark', layerDecomposition: true, content: [png] },
    'GW_PARAMETER_UNSUPPORTED',
    'model "img-ark" does not support parameter "layerDecomposition"',
  ],
  [
    'layers of two images',
    { model: 'img-layers', layerDecomposition: true, content: [png, png] },
    'GW_VALIDATION',
    'exactly one image',
  ],
  [
    'layers without an image',
    { model: 'img-layers', layerDecomposition: true, content: [text()] },
    'GW_VALIDATION',
    'exactly one image',
  ],
  [
    'layers with size',
    { model: 'img-layers', layerDecomposition: true, content: [png], size: '1024x1024' },
    'GW_VALIDATION',
    'resolution',
  ],
  [
    'layers with two images asked',
    { model: 'img-layers', layerDecomposition: true, content: [png], numberOfImages: 2 },
    'GW_VALIDATION',
    'numberOfImages',
  ],
  [
    'a resolution outside the list',
    { model: 'img-layers', layerDecomposition: true, content: [png], resolution: '4K' },
    'GW_VALIDATION',
    'resolution',
  ],
  [
    'resolution without layers',
    { model: 'img-ark', content: [text()], resolution: '2K' },
    'GW_VALIDATION',
    'layerDecomposition',
  ],
];

describe('native image requests that break a rule answer 400 with nothing held, stored or sent', () => {
  let gateway: ImageFamilyGateway;
  let openai: FakeServer;
  let ark: FakeServer;

  beforeAll(async () => {
    gateway = await startImageFamilyGateway([
      '  - { id: img-openai, outputModalities: [image], pricing: { perImageByQuality: { low: 0.01, medium: 0.04, high: 0.17 } }, providers: [{ provider: openai, model: gpt-image-1 }] }',
      '  - { id: img-ark, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-4-0-250828 }] }',
      '  - { id: img-layers, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-5-0-260128, capabilities: { image: { params: { layerDecomposition: { type: bool } } } } }] }',
      '  - { id: img-unpriced, outputModalities: [image], pricing: { inputPerMTok: 1 }, providers: [{ provider: sandbox, model: image }] }',
      '  - id: img-gated',
      '    outputModalities: [image]',
      '    pricing: { perImage: 0.001 }',
      '    providers: [{ provider: sandbox, model: image, capabilities: { image: { params: { size: { type: enum, values: [1024x1024] }, numberOfImages: { type: int, min: 1, max: 4 } } } } }]',
      '  - { id: sandbox-echo, pricing: { inputPerMTok: 1, outputPerMTok: 1 }, providers: [{ provider: sandbox, model: echo }] }',
    ]);
    ({ openai, ark } = gateway);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  for (const route of ['/api/v1/image/generations/async', '/api/v1/image/estimate', '/api/v1/image/generations']) {
    // biome-ignore lint/complexity/useMaxParams: it.each spreads each case's columns
    it.each(cases)(`${route}: %s`, async (_name, body, code, fragment) => {
      const { key, accountId } = await gateway.createFundedKey({ credits: 5 });
      const sent = openai.requests.length + ark.requests.length;
      const response = await gateway.request({ method: 'POST', url: route, headers: keyHeaders(key), payload: body });
      const envelope = expectEnvelope(response, { status: 400, code, path: route });
      expect(envelope.errors.join(' ')).toContain(fragment);
      expect(await jobRowsOf(gateway, accountId)).toEqual([]);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
      expect(await balanceNanosOf(gateway, accountId)).toBe(5_000_000_000n);
      expect(openai.requests.length + ark.requests.length).toBe(sent);
    });
  }

  it('an unknown asset answers 404 and holds nothing', async () => {
    const { key, accountId } = await gateway.createFundedKey();
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(key),
      payload: { model: 'img-ark', content: [text(), { type: 'imageAssetId', assetId: 'asset_missing' }] },
    });
    expectEnvelope(response, { status: 404, code: 'GW_NOT_FOUND', path: '/api/v1/image/generations/async' });
    expect(await jobRowsOf(gateway, accountId)).toEqual([]);
  });

  it('refuses a job past the balance (403) and past a cap (429), holding nothing', async () => {
    const poor = await gateway.createFundedKey({ credits: 0.02 });
    const refused = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(poor.key),
      payload: { model: 'img-ark', content: [text()] },
    });
    expectEnvelope(refused, { status: 403, code: 'GW_INSUFFICIENT_BALANCE', path: '/api/v1/image/generations/async' });
    const capped = await gateway.createFundedKey({ credits: 10, limits: { daily: 0.05 } });
    const over = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(capped.key),
      payload: { model: 'img-ark', content: [text()], numberOfImages: 2 },
    });
    expectEnvelope(over, { status: 429, code: 'GW_SPEND_CAP_REACHED', path: '/api/v1/image/generations/async' });
    for (const { accountId } of [poor, capped]) {
      expect(await jobRowsOf(gateway, accountId)).toEqual([]);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    }
  });
});
