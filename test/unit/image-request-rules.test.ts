import { afterAll, describe, expect, it } from 'vitest';
import { imagePriceSnapshot } from '../../src/billing/image-pricing.ts';
import { Catalog } from '../../src/catalog/catalog.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { GatewayError } from '../../src/domain/errors.ts';
import { checkImageRequest } from '../../src/gateway/image-request-check.ts';
import { mediaRows } from '../../src/gateway/media-rows.ts';
import { createArkAdapter } from '../../src/providers/ark/ark-adapter.ts';
import { createOpenAiAdapter } from '../../src/providers/openai/openai-adapter.ts';
import { sandboxAdapter } from '../../src/providers/sandbox/sandbox-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { decodeImageBody, ImageGenerationBody } from '../../src/surfaces/native/image-request-codec.ts';
import { checkedBody } from '../support/body-check.ts';
import { pngBase64 } from '../support/media-fixtures.ts';

/**
 * Each request breaks one rule of the spec's image table, of layer decomposition or of the model's constraints,
 * and is refused naming what broke, by the steps every native image route takes before anything is held: the
 * body's schema, its decoding, the model's resolution, its image rows (`mediaRows`), its image prices and the
 * request's check against its best row (`ImageJobRecipe.plan`). That the three routes answer these refusals as
 * a 400 envelope, holding, storing and sending nothing, is claimed over HTTP in image-validation.test.ts.
 */
const config = parseConfig(
  `
providers:
  openai: { protocol: openai, baseUrl: https://openai.example/v1, apiKey: k }
  ark: { protocol: ark, baseUrl: https://ark.example/api/v3, apiKey: k }
  sandbox: { protocol: sandbox }
models:
  - { id: img-openai, outputModalities: [image], pricing: { perImageByQuality: { low: 0.01, medium: 0.04, high: 0.17 } }, providers: [{ provider: openai, model: gpt-image-1 }] }
  - { id: img-ark, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-4-0-250828 }] }
  - { id: img-layers, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-5-0-260128, capabilities: { image: { params: { layerDecomposition: { type: bool } } } } }] }
  - { id: img-unpriced, outputModalities: [image], pricing: { inputPerMTok: 1 }, providers: [{ provider: sandbox, model: image }] }
  - id: img-gated
    outputModalities: [image]
    pricing: { perImage: 0.001 }
    providers: [{ provider: sandbox, model: image, capabilities: { image: { params: { size: { type: enum, values: [1024x1024] }, numberOfImages: { type: int, min: 1, max: 4 } } } } }]
  - { id: sandbox-echo, pricing: { inputPerMTok: 1, outputPerMTok: 1 }, providers: [{ provider: sandbox, model: echo }] }
`,
  'image-rules.yaml',
  {},
);
const catalog = new Catalog(config);
const http = new UpstreamHttp();
afterAll(() => http.close());
const sources = {
  adapters: new Map([sandboxAdapter, createOpenAiAdapter(http), createArkAdapter(http)].map((a) => [a.protocol, a])),
  providers: config.providers,
};

/** The request's refusal by the first step that refuses it: its code and message. */
async function refusalOf(body: Record<string, unknown>): Promise<{ code: string; status: number; message: string }> {
  const checked = checkedBody(ImageGenerationBody, body);
  if (checked.errors) return { code: 'GW_VALIDATION', status: 400, message: checked.errors.join(' ') };
  try {
    const input = decodeImageBody(checked.body);
    const model = catalog.resolve(input.modelId);
    const [best] = mediaRows(sources, model, 'images');
    imagePriceSnapshot(model);
    await checkImageRequest(model, input, {
      row: best!.row,
      adapter: best!.adapter,
      references: {
        findAsset: () => Promise.reject(new Error('no asset is named by these requests')),
        checkUrl: () => Promise.resolve(),
      },
    });
  } catch (error) {
    if (error instanceof GatewayError) return { code: error.code, status: error.status, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

async function expectRefused(body: Record<string, unknown>, code: string, fragment: string) {
  const refusal = await refusalOf(body);
  expect(refusal).toMatchObject({ code, status: 400 });
  expect(refusal.message).toContain(fragment);
}

const text = (value = 'a lighthouse') => ({ type: 'text', text: value });
const png = { type: 'imageBase64', data: pngBase64, mediaType: 'image/png' };
const jpegHeader = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]).toString('base64');

describe('a native image request that breaks a rule is refused naming it', () => {
  it('lets a request that breaks none through', async () => {
    await expect(refusalOf({ model: 'img-ark', content: [text(), png] })).rejects.toThrow('expected a refusal');
  });

  it('no model', async () => {
    await expectRefused({ content: [text()] }, 'GW_VALIDATION', 'model');
  });

  it('empty content', async () => {
    await expectRefused({ model: 'img-ark', content: [] }, 'GW_VALIDATION', 'content');
  });

  it('unknown part type', async () => {
    await expectRefused(
      { model: 'img-ark', content: [{ type: 'audioUrl', url: 'https://example.com/a.wav' }] },
      'GW_VALIDATION',
      'content',
    );
  });

  it('text part without text', async () => {
    await expectRefused({ model: 'img-ark', content: [{ type: 'text' }] }, 'GW_VALIDATION', 'needs "text"');
  });

  it('blank text part', async () => {
    await expectRefused({ model: 'img-ark', content: [{ type: 'text', text: '  ' }] }, 'GW_VALIDATION', 'needs "text"');
  });

  it('imageUrl that is not http(s)', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text(), { type: 'imageUrl', url: 'file:///etc/passwd' }] },
      'GW_VALIDATION',
      'http(s)',
    );
  });

  it('raw base64 without mediaType', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text(), { type: 'imageBase64', data: pngBase64 }] },
      'GW_VALIDATION',
      'mediaType',
    );
  });

  it('bytes that are no image', async () => {
    await expectRefused(
      {
        model: 'img-ark',
        content: [
          text(),
          { type: 'imageBase64', data: Buffer.from('hello world').toString('base64'), mediaType: 'image/png' },
        ],
      },
      'GW_VALIDATION',
      'not an image',
    );
  });

  it('bytes of another type than declared', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text(), { type: 'imageBase64', data: pngBase64, mediaType: 'image/jpeg' }] },
      'GW_VALIDATION',
      '"image/png"',
    );
  });

  it('a data URL of a type not accepted', async () => {
    await expectRefused(
      {
        model: 'img-ark',
        content: [text(), { type: 'imageBase64', data: `data:image/svg+xml;base64,${pngBase64}` }],
      },
      'GW_VALIDATION',
      'not accepted',
    );
  });

  it('invalid base64', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text(), { type: 'imageBase64', data: '!!!!', mediaType: 'image/png' }] },
      'GW_VALIDATION',
      'base64',
    );
  });

  it('jpeg header declared as png', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text(), { type: 'imageBase64', data: jpegHeader, mediaType: 'image/png' }] },
      'GW_VALIDATION',
      '"image/jpeg"',
    );
  });

  it('size without x', async () => {
    await expectRefused({ model: 'img-ark', content: [text()], size: '1024' }, 'GW_VALIDATION', 'size');
  });

  it('size of zero', async () => {
    await expectRefused({ model: 'img-ark', content: [text()], size: '0x1024' }, 'GW_VALIDATION', 'size');
  });

  it('numberOfImages 0', async () => {
    await expectRefused({ model: 'img-ark', content: [text()], numberOfImages: 0 }, 'GW_VALIDATION', 'numberOfImages');
  });

  it('numberOfImages 16', async () => {
    await expectRefused({ model: 'img-ark', content: [text()], numberOfImages: 16 }, 'GW_VALIDATION', 'numberOfImages');
  });

  it('numberOfImages not an integer', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text()], numberOfImages: 1.5 },
      'GW_VALIDATION',
      'numberOfImages',
    );
  });

  it('numberOfImages plus references over 15', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text(), png, png], numberOfImages: 14 },
      'GW_VALIDATION',
      'exceed 15',
    );
  });

  it('guidanceScale below 1', async () => {
    await expectRefused({ model: 'img-ark', content: [text()], guidanceScale: 0.5 }, 'GW_VALIDATION', 'guidanceScale');
  });

  it('guidanceScale above 10', async () => {
    await expectRefused({ model: 'img-ark', content: [text()], guidanceScale: 11 }, 'GW_VALIDATION', 'guidanceScale');
  });

  it('an outputFormat no family makes', async () => {
    await expectRefused({ model: 'img-ark', content: [text()], outputFormat: 'gif' }, 'GW_VALIDATION', 'outputFormat');
  });

  it('webp from a family that makes png and jpeg', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text()], outputFormat: 'webp' },
      'GW_PARAMETER_OUT_OF_RANGE',
      'model "img-ark"',
    );
  });

  it('quality outside the list', async () => {
    await expectRefused({ model: 'img-openai', content: [text()], quality: 'ultra' }, 'GW_VALIDATION', 'quality');
  });

  it('quality on a family without it', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text()], quality: 'high' },
      'GW_PARAMETER_UNSUPPORTED',
      'model "img-ark" does not support parameter "quality"',
    );
  });

  it('transparent background as jpeg', async () => {
    await expectRefused(
      { model: 'img-openai', content: [text()], background: 'transparent', outputFormat: 'jpeg' },
      'GW_VALIDATION',
      'transparent',
    );
  });

  it('background outside the list', async () => {
    await expectRefused({ model: 'img-openai', content: [text()], background: 'clear' }, 'GW_VALIDATION', 'background');
  });

  it('outputCompression above 100', async () => {
    await expectRefused(
      { model: 'img-openai', content: [text()], outputCompression: 101, outputFormat: 'webp' },
      'GW_VALIDATION',
      'outputCompression',
    );
  });

  it('outputCompression of a png', async () => {
    await expectRefused(
      { model: 'img-openai', content: [text()], outputCompression: 50 },
      'GW_VALIDATION',
      'outputCompression',
    );
  });

  it('outputCompression on a family without it', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text()], outputCompression: 50, outputFormat: 'jpeg' },
      'GW_PARAMETER_UNSUPPORTED',
      'model "img-ark"',
    );
  });

  it('watermark that is not a boolean', async () => {
    await expectRefused({ model: 'img-ark', content: [text()], watermark: 'yes' }, 'GW_VALIDATION', 'watermark');
  });

  it('watermark on a family without it', async () => {
    await expectRefused(
      { model: 'img-openai', content: [text()], watermark: true },
      'GW_PARAMETER_UNSUPPORTED',
      'model "img-openai"',
    );
  });

  it('optimizePromptOptions.mode outside the list', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text()], optimizePromptOptions: { mode: 'slow' } },
      'GW_VALIDATION',
      'mode',
    );
  });

  it('optimizePromptOptions on a family without it', async () => {
    await expectRefused(
      { model: 'img-openai', content: [text()], optimizePromptOptions: { mode: 'fast' } },
      'GW_PARAMETER_UNSUPPORTED',
      'model "img-openai"',
    );
  });

  it('maxTokens 0', async () => {
    await expectRefused({ model: 'img-ark', content: [text()], maxTokens: 0 }, 'GW_VALIDATION', 'maxTokens');
  });

  it('an unknown model', async () => {
    await expectRefused({ model: 'no-such-model', content: [text()] }, 'GW_MODEL_NOT_AVAILABLE', 'no-such-model');
  });

  it('a model that makes no images', async () => {
    await expectRefused(
      { model: 'sandbox-echo', content: [text()] },
      'GW_MODEL_NOT_AVAILABLE',
      'does not generate images',
    );
  });

  it('a model without image pricing', async () => {
    await expectRefused({ model: 'img-unpriced', content: [text()] }, 'GW_MODEL_NOT_PRICED', 'img-unpriced');
  });

  it("a size outside the model's list", async () => {
    await expectRefused(
      { model: 'img-gated', content: [text()], size: '512x512' },
      'GW_PARAMETER_OUT_OF_RANGE',
      'model "img-gated"',
    );
  });

  it("numberOfImages above the model's bound", async () => {
    await expectRefused(
      { model: 'img-gated', content: [text()], numberOfImages: 5 },
      'GW_PARAMETER_OUT_OF_RANGE',
      'model "img-gated"',
    );
  });

  it('no text part', async () => {
    await expectRefused({ model: 'img-ark', content: [png] }, 'GW_VALIDATION', 'text part');
  });

  it('layers on a model without them', async () => {
    await expectRefused(
      { model: 'img-ark', layerDecomposition: true, content: [png] },
      'GW_PARAMETER_UNSUPPORTED',
      'model "img-ark" does not support parameter "layerDecomposition"',
    );
  });

  it('layers of two images', async () => {
    await expectRefused(
      { model: 'img-layers', layerDecomposition: true, content: [png, png] },
      'GW_VALIDATION',
      'exactly one image',
    );
  });

  it('layers without an image', async () => {
    await expectRefused(
      { model: 'img-layers', layerDecomposition: true, content: [text()] },
      'GW_VALIDATION',
      'exactly one image',
    );
  });

  it('layers with size', async () => {
    await expectRefused(
      { model: 'img-layers', layerDecomposition: true, content: [png], size: '1024x1024' },
      'GW_VALIDATION',
      'resolution',
    );
  });

  it('layers with two images asked', async () => {
    await expectRefused(
      { model: 'img-layers', layerDecomposition: true, content: [png], numberOfImages: 2 },
      'GW_VALIDATION',
      'numberOfImages',
    );
  });

  it('a resolution outside the list', async () => {
    await expectRefused(
      { model: 'img-layers', layerDecomposition: true, content: [png], resolution: '4K' },
      'GW_VALIDATION',
      'resolution',
    );
  });

  it('resolution without layers', async () => {
    await expectRefused(
      { model: 'img-ark', content: [text()], resolution: '2K' },
      'GW_VALIDATION',
      'layerDecomposition',
    );
  });
});
