import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../fakes/fake-server.ts';
import { expectEnvelope, heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import { balanceNanosOf, jobRowsOf, startImageFamilyGateway, type ImageFamilyGateway } from '../support/image-jobs.ts';

const text = (value = 'a lighthouse') => ({ type: 'text', text: value });

type Case = [name: string, body: Record<string, unknown>, code: string, fragment: string];

/**
 * One request for each step that refuses (the body's schema, its decoding, the family's fields, the model's
 * resolution, its prices, its constraints): each rule of the spec's image table, of layer decomposition and of
 * the model's constraints is claimed by itself in test/unit/request-rules.test.ts; here, that every route
 * answers such a refusal as a 400 envelope with nothing held, stored or sent.
 */
const cases: Case[] = [
  ['no model', { content: [text()] }, 'GW_VALIDATION', 'model'],
  [
    'invalid base64',
    { model: 'img-ark', content: [text(), { type: 'imageBase64', data: '!!!!', mediaType: 'image/png' }] },
    'GW_VALIDATION',
    'base64',
  ],
  [
    'quality on a family without it',
    { model: 'img-ark', content: [text()], quality: 'high' },
    'GW_PARAMETER_UNSUPPORTED',
    'model "img-ark" does not support parameter "quality"',
  ],
  ['an unknown model', { model: 'no-such-model', content: [text()] }, 'GW_MODEL_NOT_AVAILABLE', 'no-such-model'],
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
      '  - { id: img-ark-lax, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-4-0-250828, capabilities: { strictParams: false } }] }',
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

  it('names a field a strictParams: false row goes without in x-gateway-dropped-parameters, on both submitting routes', async () => {
    const { key } = await gateway.createFundedKey({ credits: 5 });
    for (const route of ['/api/v1/image/generations/async', '/api/v1/image/generations']) {
      const response = await gateway.request({
        method: 'POST',
        url: route,
        headers: keyHeaders(key),
        payload: { model: 'img-ark-lax', content: [text('a lax kite')], quality: 'high', outputCompression: 50 },
      });
      expect(response.statusCode, response.body).toBeLessThan(300);
      expect(response.headers['x-gateway-dropped-parameters']).toBe('quality,outputCompression');
    }
    const sent = () => ark.requests.filter((request) => JSON.stringify(request.body ?? null).includes('a lax kite'));
    await expect.poll(() => sent().length).toBe(2);
    for (const { body } of sent()) expect(Object.keys(body as object)).not.toContain('output_compression');
  });

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

  /** The errors of an image job refused by the ledger, with its status and code. */
  async function refusedJob(key: string, status: number, numberOfImages = 1): Promise<string[]> {
    const refused = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(key),
      payload: { model: 'img-ark', content: [text()], numberOfImages },
    });
    return expectEnvelope(refused, {
      status,
      code: status === 403 ? 'GW_INSUFFICIENT_BALANCE' : 'GW_SPEND_CAP_REACHED',
      path: '/api/v1/image/generations/async',
    }).errors;
  }

  it('refuses a job past the balance (403) and past a cap (429), holding nothing', async () => {
    const poor = await gateway.createFundedKey({ credits: 0.02 });
    // As a text call's refusal does (docs/money.md): what the job needs, and how much is free.
    expect(await refusedJob(poor.key, 403)).toEqual([
      'insufficient credit balance: this request needs 0.03 USD of available credits; 0.02 USD is available',
    ]);
    const capped = await gateway.createFundedKey({ credits: 10, limits: { daily: 0.05 } });
    // Nothing spent yet, but the 0.06 USD hold does not fit under the cap: the limit is not "reached", and the
    // message says what the job needs and what is free.
    expect(await refusedJob(capped.key, 429, 2)).toEqual([
      expect.stringMatching(
        /^the API key's daily spend limit does not leave the 0\.06 USD this request needs: it starts afresh in \d+ seconds; 0\.05 USD is available$/,
      ),
    ]);
    for (const { accountId } of [poor, capped]) {
      expect(await jobRowsOf(gateway, accountId)).toEqual([]);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    }
  });

  it('writes the amounts of a refusal in decimals, however small', async () => {
    const { key } = await gateway.createFundedKey({ credits: 0.000000005 });
    expect(await refusedJob(key, 403)).toEqual([
      'insufficient credit balance: this request needs 0.03 USD of available credits; 0.000000005 USD is available',
    ]);
  });
});
