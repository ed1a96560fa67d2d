import { afterAll, describe, expect, it } from 'vitest';
import { imagePriceSnapshot } from '../../src/billing/image-pricing.ts';
import { Catalog } from '../../src/catalog/catalog.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { GatewayError } from '../../src/domain/errors.ts';
import { checkImageRequest, ReferenceUrls } from '../../src/gateway/image-request-check.ts';
import { mediaRows, referenceRows } from '../../src/gateway/media-rows.ts';
import { createArkAdapter } from '../../src/providers/ark/ark-adapter.ts';
import { createOpenAiAdapter } from '../../src/providers/openai/openai-adapter.ts';
import { sandboxAdapter } from '../../src/providers/sandbox/sandbox-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { ImageGenerationBody, decodeImageBody } from '../../src/surfaces/native/image-request-codec.ts';
import { bodyErrors, checkedBody } from '../support/body-check.ts';
import { isoVideoFile, pdfFile, pngBase64, wavFile } from '../support/media-fixtures.ts';
import { VideoGenerationBody, decodeVideoBody } from '../../src/surfaces/native/video-request-codec.ts';
import { type Refusal, videoPlanRefusal } from '../support/video-plan.ts';
import { alphaVideoModelsYaml, sandboxVideoModel, seedanceModel } from '../support/video-models.ts';
import { decodeAlphaVideo } from '../../src/surfaces/alpha/videos-codec.ts';
import { audioSecondPriceSnapshot } from '../../src/billing/duration-pricing.ts';
import { refuseMixedReferences } from '../../src/gateway/speech-generation.ts';
import { createSpeechAdapter } from '../../src/providers/speech/speech-adapter.ts';
import { ReferenceAudioBody, TextToSpeechBody } from '../../src/surfaces/native/audio-codec.ts';
import { refusal } from '../support/refusal.ts';
import { requirePricing } from '../../src/billing/pricing.ts';
import type { EmbeddingInput } from '../../src/domain/embedding.ts';
import { gateDimensions } from '../../src/gateway/embedding-generation.ts';
import { acceptedParts, checkEmbeddingShape, prepareEmbeddingInputs } from '../../src/gateway/embedding-inputs.ts';
import { embeddingEncoding } from '../../src/gateway/embedding-list.ts';
import { servingRows } from '../../src/gateway/serving-rows.ts';
import { BetaEmbeddingsRequest } from '../../src/protocols/anthropic/messages.ts';
import { BatchEmbedContentsRequest, EmbedContentRequest } from '../../src/protocols/gemini/embed-content.ts';
import { EmbeddingsRequest } from '../../src/protocols/openai/embeddings.ts';
import { createGeminiAdapter } from '../../src/providers/gemini/gemini-adapter.ts';
import { decodeEmbeddingInput } from '../../src/surfaces/alpha/embeddings-codec.ts';
import { decodeBetaEmbeddingInput } from '../../src/surfaces/beta/embeddings-codec.ts';
import { decodeBatchEmbedContents, decodeEmbedContent } from '../../src/surfaces/gamma/embed-content-codec.ts';
import { alphaEmbedding, betaEmbedding, embeddingModelsYaml, gammaEmbedding } from '../support/embedding-models.ts';

/**
 * The rules of the media and embeddings requests, checked by the steps each route takes before anything is held
 * (body schema, decoding, the model's rows and prices, the request checks), one describe per route family.
 */
describe('native image requests', () => {
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
          assets: async (named) => {
            if (named.length > 0) throw new Error('no asset is named by these requests');
            return new Map();
          },
          urls: new ReferenceUrls(),
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
      await expectRefused(
        { model: 'img-ark', content: [{ type: 'text', text: '  ' }] },
        'GW_VALIDATION',
        'needs "text"',
      );
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
      await expectRefused(
        { model: 'img-ark', content: [text()], numberOfImages: 0 },
        'GW_VALIDATION',
        'numberOfImages',
      );
    });

    it('numberOfImages 16', async () => {
      await expectRefused(
        { model: 'img-ark', content: [text()], numberOfImages: 16 },
        'GW_VALIDATION',
        'numberOfImages',
      );
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
      await expectRefused(
        { model: 'img-ark', content: [text()], guidanceScale: 0.5 },
        'GW_VALIDATION',
        'guidanceScale',
      );
    });

    it('guidanceScale above 10', async () => {
      await expectRefused({ model: 'img-ark', content: [text()], guidanceScale: 11 }, 'GW_VALIDATION', 'guidanceScale');
    });

    it('an outputFormat no family makes', async () => {
      await expectRefused(
        { model: 'img-ark', content: [text()], outputFormat: 'gif' },
        'GW_VALIDATION',
        'outputFormat',
      );
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
      await expectRefused(
        { model: 'img-openai', content: [text()], background: 'clear' },
        'GW_VALIDATION',
        'background',
      );
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
});

describe('native video requests', () => {
  /**
   * Each request breaks one rule of the spec's video table or of the model's constraints, and is refused by the
   * steps both native video routes take before anything is held: the body's schema, its decoding, the model's
   * resolution and video rows, its prices, the request's check against its best row, the adapter's own check and
   * the price of the resolution (`VideoJobRecipe.plan`). That the routes answer these as a 400 envelope with
   * nothing held, stored or sent is claimed over HTTP (on both databases) in video.test.ts.
   */
  const config = parseConfig(
    [
      'providers:',
      '  ark: { protocol: ark, baseUrl: https://ark.example/api/v3, apiKey: k }',
      '  sandbox: { protocol: sandbox }',
      'models:',
      seedanceModel,
      sandboxVideoModel,
      '  - { id: sandbox-echo, outputModalities: [text], pricing: { inputPerMTok: 0.1, outputPerMTok: 0.2 }, providers: [{ provider: sandbox, model: echo }] }',
    ].join('\n'),
    'video-rules.yaml',
    {},
  );
  const catalog = new Catalog(config);
  const http = new UpstreamHttp();
  afterAll(() => http.close());
  const sources = {
    adapters: new Map([sandboxAdapter, createArkAdapter(http)].map((adapter) => [adapter.protocol, adapter])),
    providers: config.providers,
  };

  /** The request's refusal by the first step that refuses it: the route's body schema, then the plan's steps. */
  async function refusalOf(body: Record<string, unknown>): Promise<Refusal> {
    const checked = checkedBody(VideoGenerationBody, body);
    if (checked.errors) return { code: 'GW_VALIDATION', status: 400, message: checked.errors.join(' ') };
    return videoPlanRefusal({ catalog, sources }, () => decodeVideoBody(checked.body));
  }

  /** Refused with `code` and a 400; the model's own refusals name the model. */
  async function expectRefused(body: Record<string, unknown>, code: string) {
    const refusal = await refusalOf(body);
    expect(refusal).toMatchObject({ code, status: 400 });
    expect(refusal.message).not.toBe('');
    if (code === 'GW_PARAMETER_OUT_OF_RANGE' || code === 'GW_PARAMETER_UNSUPPORTED')
      expect(refusal.message).toContain(`model "${String(body.model)}"`);
  }

  const text = (value: string) => ({ type: 'text', text: value });
  const png = { type: 'imageBase64', data: pngBase64, mediaType: 'image/png' };

  describe('a native video request that breaks a rule is refused with a 400 before anything is held', () => {
    it('lets one within every rule through', async () => {
      await expect(
        refusalOf({ model: 'seedance', content: [text('x'), { ...png, role: 'firstFrame' }], duration: 5 }),
      ).rejects.toThrow('expected a refusal');
    });

    it('no content', async () => {
      await expectRefused({ model: 'seedance', content: [] }, 'GW_VALIDATION');
    });

    it('no model', async () => {
      await expectRefused({ content: [text('x')] }, 'GW_VALIDATION');
    });

    it('an unknown part type', async () => {
      await expectRefused(
        { model: 'seedance', content: [{ type: 'audioUrl', url: 'https://example.com/a.mp3' }] },
        'GW_VALIDATION',
      );
    });

    it('an empty text part', async () => {
      await expectRefused({ model: 'seedance', content: [text(' ')] }, 'GW_VALIDATION');
    });

    it('a URL that is not http(s)', async () => {
      await expectRefused(
        { model: 'seedance', content: [text('x'), { type: 'imageUrl', url: 'file:///etc/passwd' }] },
        'GW_VALIDATION',
      );
    });

    it('a role on a video part', async () => {
      await expectRefused(
        {
          model: 'seedance',
          content: [text('x'), { type: 'videoUrl', url: 'https://example.com/a.mp4', role: 'firstFrame' }],
        },
        'GW_VALIDATION',
      );
    });

    it('an unknown role', async () => {
      await expectRefused(
        { model: 'seedance', content: [text('x'), { ...png, role: 'middleFrame' }] },
        'GW_VALIDATION',
      );
    });

    it('two first frames', async () => {
      await expectRefused(
        { model: 'seedance', content: [text('x'), { ...png, role: 'firstFrame' }, { ...png, role: 'firstFrame' }] },
        'GW_VALIDATION',
      );
    });

    it('a last frame alone', async () => {
      await expectRefused({ model: 'seedance', content: [text('x'), { ...png, role: 'lastFrame' }] }, 'GW_VALIDATION');
    });

    it('raw base64 without mediaType', async () => {
      await expectRefused(
        { model: 'seedance', content: [text('x'), { type: 'imageBase64', data: pngBase64 }] },
        'GW_VALIDATION',
      );
    });

    it('image bytes that are not the declared type', async () => {
      await expectRefused(
        { model: 'seedance', content: [text('x'), { ...png, mediaType: 'image/jpeg' }] },
        'GW_VALIDATION',
      );
    });

    it('a video part that is an image', async () => {
      await expectRefused(
        {
          model: 'seedance',
          content: [text('x'), { type: 'videoBase64', data: pngBase64, mediaType: 'video/mp4' }],
        },
        'GW_VALIDATION',
      );
    });

    it('a video part of another type', async () => {
      await expectRefused(
        { model: 'seedance', content: [text('x'), { type: 'videoBase64', data: 'AAAA', mediaType: 'video/x-flv' }] },
        'GW_VALIDATION',
      );
    });

    it('only a reference video', async () => {
      await expectRefused(
        { model: 'seedance', content: [{ type: 'videoUrl', url: 'https://example.com/a.mp4' }] },
        'GW_VALIDATION',
      );
    });

    it('duration 0', async () => {
      await expectRefused({ model: 'seedance', content: [text('x')], duration: 0 }, 'GW_VALIDATION');
    });

    it('a fractional duration', async () => {
      await expectRefused({ model: 'seedance', content: [text('x')], duration: 2.5 }, 'GW_VALIDATION');
    });

    it('a duration past the model range', async () => {
      await expectRefused({ model: 'seedance', content: [text('x')], duration: 13 }, 'GW_PARAMETER_OUT_OF_RANGE');
    });

    it('a duration between the model steps', async () => {
      await expectRefused({ model: 'seedance-steps', content: [text('x')], duration: 7 }, 'GW_PARAMETER_OUT_OF_RANGE');
    });

    it('a resolution outside the spec', async () => {
      await expectRefused({ model: 'seedance', content: [text('x')], resolution: '2k' }, 'GW_VALIDATION');
    });

    it('a resolution the model does not make', async () => {
      await expectRefused(
        { model: 'sandbox-video', content: [text('x')], resolution: '1080p' },
        'GW_PARAMETER_OUT_OF_RANGE',
      );
    });

    it('a ratio the model does not make', async () => {
      await expectRefused({ model: 'seedance', content: [text('x')], ratio: '4:3' }, 'GW_PARAMETER_OUT_OF_RANGE');
    });

    it('an empty ratio', async () => {
      await expectRefused({ model: 'seedance', content: [text('x')], ratio: '' }, 'GW_VALIDATION');
    });

    it('seed below -1', async () => {
      await expectRefused({ model: 'seedance', content: [text('x')], seed: -2 }, 'GW_VALIDATION');
    });

    it('a non-boolean watermark', async () => {
      await expectRefused({ model: 'seedance', content: [text('x')], watermark: 'yes' }, 'GW_VALIDATION');
    });

    it('cameraFixed on a model that does not take it', async () => {
      await expectRefused(
        { model: 'sandbox-video', content: [text('x')], cameraFixed: true },
        'GW_PARAMETER_UNSUPPORTED',
      );
    });

    it('a field a strict model does not list', async () => {
      await expectRefused({ model: 'seedance-steps', content: [text('x')], seed: 3 }, 'GW_PARAMETER_UNSUPPORTED');
    });

    it('maxTokens (sandbox adapter)', async () => {
      await expectRefused({ model: 'sandbox-video', content: [text('x')], maxTokens: 100 }, 'GW_PARAMETER_UNSUPPORTED');
    });

    it('maxTokens (Seedance adapter)', async () => {
      await expectRefused({ model: 'seedance', content: [text('x')], maxTokens: 100 }, 'GW_PARAMETER_UNSUPPORTED');
    });

    it('maxTokens 0', async () => {
      await expectRefused({ model: 'seedance', content: [text('x')], maxTokens: 0 }, 'GW_VALIDATION');
    });

    it('an unknown model', async () => {
      await expectRefused({ model: 'no-such-video', content: [text('x')] }, 'GW_MODEL_NOT_AVAILABLE');
    });

    it('a model that makes no video', async () => {
      await expectRefused({ model: 'sandbox-echo', content: [text('x')] }, 'GW_MODEL_NOT_AVAILABLE');
    });
  });
});

describe('alpha video requests', () => {
  /**
   * `POST /api/alpha/v1/videos` bodies that break a rule of the spec's list or of the model, refused with a 400
   * before anything is routed: by the surface's decoding (decodeAlphaVideo) or the video plan's steps. That the
   * route answers these in the envelope, holding, storing and sending nothing, is claimed over HTTP in
   * alpha-videos.test.ts.
   */
  const config = parseConfig(
    [
      'providers:',
      '  router: { protocol: openai, baseUrl: https://router.example/api/v1, apiKey: k }',
      '  sandbox: { protocol: sandbox }',
      'models:',
      alphaVideoModelsYaml,
    ].join('\n'),
    'alpha-video-rules.yaml',
    {},
  );
  const catalog = new Catalog(config);
  const http = new UpstreamHttp();
  afterAll(() => http.close());
  const sources = {
    adapters: new Map([sandboxAdapter, createOpenAiAdapter(http)].map((adapter) => [adapter.protocol, adapter])),
    providers: config.providers,
  };

  const refusalOf = (body: Record<string, unknown>): Promise<Refusal> =>
    videoPlanRefusal({ catalog, sources }, () => decodeAlphaVideo(body));

  async function expectRefused(body: Record<string, unknown>, code: string) {
    const refusal = await refusalOf(body);
    expect(refusal).toMatchObject({ code, status: 400 });
    expect(refusal.message.length).toBeGreaterThan(0);
  }

  describe('an alpha video body that breaks a rule is refused before routing', () => {
    it('lets one within every rule through', async () => {
      await expect(
        refusalOf({
          model: 'veo',
          prompt: 'x',
          seconds: '8',
          size: '1280x720',
          input_reference: { image_url: 'https://example.com/a.png' },
        }),
      ).rejects.toThrow('expected a refusal');
    });

    it('no prompt', async () => {
      await expectRefused({ model: 'veo' }, 'GW_VALIDATION');
    });

    it('an empty prompt', async () => {
      await expectRefused({ model: 'veo', prompt: '' }, 'GW_VALIDATION');
    });

    it('a prompt of 32,001 characters', async () => {
      await expectRefused({ model: 'veo', prompt: 'x'.repeat(32_001) }, 'GW_VALIDATION');
    });

    it('no model', async () => {
      await expectRefused({ prompt: 'x' }, 'GW_VALIDATION');
    });

    it('an unsupported field', async () => {
      await expectRefused({ model: 'veo', prompt: 'x', quality: 'high' }, 'GW_VALIDATION');
    });

    it('a size outside the four', async () => {
      await expectRefused({ model: 'veo', prompt: 'x', size: '1920x1080' }, 'GW_VALIDATION');
    });

    it('seconds that are not whole', async () => {
      await expectRefused({ model: 'veo', prompt: 'x', seconds: '4.5' }, 'GW_VALIDATION');
    });

    it('seconds outside the model range', async () => {
      await expectRefused({ model: 'veo', prompt: 'x', seconds: 12 }, 'GW_PARAMETER_OUT_OF_RANGE');
    });

    it('an input_reference with both fields', async () => {
      await expectRefused(
        { model: 'veo', prompt: 'x', input_reference: { image_url: 'https://example.com/a.png', file_id: 'file-1' } },
        'GW_VALIDATION',
      );
    });

    it('an empty input_reference', async () => {
      await expectRefused({ model: 'veo', prompt: 'x', input_reference: {} }, 'GW_VALIDATION');
    });

    it('a file_id', async () => {
      await expectRefused(
        { model: 'veo', prompt: 'x', input_reference: { file_id: 'file-1' } },
        'GW_PARAMETER_UNSUPPORTED',
      );
    });

    it('an image_url that is not http(s)', async () => {
      await expectRefused(
        { model: 'veo', prompt: 'x', input_reference: { image_url: 'ftp://example.com/a.png' } },
        'GW_VALIDATION',
      );
    });

    it('a model that makes no video', async () => {
      await expectRefused({ model: 'no-such-model', prompt: 'x' }, 'GW_MODEL_NOT_AVAILABLE');
    });
  });
});

describe('native audio requests', () => {
  /**
   * The native audio routes' requests that break a rule of the spec's audio table, refused naming the field by
   * the routes' body schemas, and a generation with reference refused by its model's rows, prices and the rule on
   * references. That both routes and their estimates answer these as a 400 envelope holding, storing and sending
   * nothing is claimed over HTTP (on both databases) in audio.test.ts, with the refusals that need the voice
   * catalog.
   */
  const voiceType = 'zh_female_cancan_mars_bigtts';

  describe('a text-to-speech body that breaks a rule is refused naming the field', () => {
    it('lets one within every rule through', () => {
      expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', format: 'pcm', sampleRate: 8000 })).toEqual([]);
    });

    it('no voiceType', () => {
      expect(bodyErrors(TextToSpeechBody, { text: 'hi' })).toEqual(["body must have required property 'voiceType'"]);
    });

    it('empty text', () => {
      expect(bodyErrors(TextToSpeechBody, { voiceType, text: '' })).toEqual([
        'body.text must NOT have fewer than 1 characters',
      ]);
    });

    it('1,001 characters', () => {
      expect(bodyErrors(TextToSpeechBody, { voiceType, text: '字'.repeat(1001) })).toEqual([
        'body.text must NOT have more than 1000 characters',
      ]);
    });

    it('wav', () => {
      expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', format: 'wav' })).toEqual([
        'body.format must be one of: mp3, ogg_opus, pcm',
      ]);
    });

    it('an unlisted sample rate', () => {
      expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', sampleRate: 11025 })).toEqual([
        'body.sampleRate must be one of: 8000, 16000, 22050, 24000, 32000, 44100, 48000',
      ]);
    });

    it('speechRate 101', () => {
      expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', speechRate: 101 })).toEqual([
        'body.speechRate must be <= 100',
      ]);
    });

    it('loudnessRate -51', () => {
      expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', loudnessRate: -51 })).toEqual([
        'body.loudnessRate must be >= -50',
      ]);
    });

    it('pitch 13', () => {
      expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', pitch: 13 })).toEqual(['body.pitch must be <= 12']);
    });

    it('silenceDuration 30001', () => {
      expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', silenceDuration: 30_001 })).toEqual([
        'body.silenceDuration must be <= 30000',
      ]);
    });

    it('an unknown explicitLanguage', () => {
      expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', explicitLanguage: 'xx' })).toEqual([
        'body.explicitLanguage must be one of: zh, zh-cn, en, ja, es, es-mx, id, pt-br, ko, it, de, fr',
      ]);
    });

    it('two contextTexts', () => {
      expect(
        bodyErrors(TextToSpeechBody, {
          voiceType: 'en_female_anna_uranus_bigtts',
          text: 'hi',
          contextTexts: ['a', 'b'],
        }),
      ).toEqual(['body.contextTexts must NOT have more than 1 items']);
    });
  });

  const config = parseConfig(
    [
      'providers:',
      '  speech: { protocol: speech, baseUrl: https://speech.example, apiKey: k }',
      'models:',
      '  - { id: seed-audio-1.0-multilingual, inputModalities: [text, audio, image], outputModalities: [audio], pricing: { perAudioSecond: 0.01 }, providers: [{ provider: speech, model: seed-audio-1.0 }] }',
      '  - { id: seed-tts-2.0, outputModalities: [audio], pricing: { perMCharacters: 80 }, providers: [{ provider: speech, model: seed-tts-2.0 }] }',
      '  - { id: unpriced-audio, inputModalities: [text, audio], outputModalities: [audio], providers: [{ provider: speech, model: seed-audio-1.0 }] }',
    ].join('\n'),
    'audio-rules.yaml',
    {},
  );
  const catalog = new Catalog(config);
  const http = new UpstreamHttp();
  afterAll(() => http.close());
  const sources = { adapters: new Map([['speech' as const, createSpeechAdapter(http)]]), providers: config.providers };
  const model = 'seed-audio-1.0-multilingual';

  /** The model's refusal of a generation with reference: resolved, its reference rows, its per-second prices. */
  const modelRefusal = (modelId: string) =>
    refusal(() => {
      const resolved = catalog.resolve(modelId);
      referenceRows(sources, resolved);
      audioSecondPriceSnapshot(resolved);
    });

  describe('a generation with reference that breaks a rule is refused', () => {
    it('lets one within every rule through', () => {
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', references: [{ speaker: 'a' }] })).toEqual([]);
      expect(() => modelRefusal(model)).toThrow('expected a refusal');
    });

    it('an unknown model', () => {
      expect(modelRefusal('nope')).toMatchObject({ code: 'GW_MODEL_NOT_AVAILABLE', status: 400 });
      expect(modelRefusal('nope').message).toContain('model "nope"');
    });

    it('a text-to-speech model', () => {
      expect(modelRefusal('seed-tts-2.0')).toMatchObject({ code: 'GW_MODEL_NOT_AVAILABLE', status: 400 });
      expect(modelRefusal('seed-tts-2.0').message).toContain('model "seed-tts-2.0"');
    });

    it('an unpriced model', () => {
      expect(modelRefusal('unpriced-audio')).toMatchObject({ code: 'GW_MODEL_NOT_PRICED', status: 400 });
      expect(modelRefusal('unpriced-audio').message).toContain('model "unpriced-audio"');
    });

    it('an image reference mixed with an audio one', () => {
      const references: Array<Record<string, string>> = [
        { imageUrl: 'https://example.com/a.png' },
        { audioUrl: 'https://example.com/a.mp3' },
      ];
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', references })).toEqual([]);
      const error = refusal(() => refuseMixedReferences(references));
      expect(error).toMatchObject({ code: 'GW_VALIDATION', status: 400 });
      expect(error.message).toContain('"references"');
    });

    it('no model', () => {
      expect(bodyErrors(ReferenceAudioBody, { textPrompt: 'x' })).toEqual(["body must have required property 'model'"]);
    });

    it('no textPrompt', () => {
      expect(bodyErrors(ReferenceAudioBody, { model })).toEqual(["body must have required property 'textPrompt'"]);
    });

    it('an empty textPrompt', () => {
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: '' })).toEqual([
        'body.textPrompt must NOT have fewer than 1 characters',
      ]);
    });

    it('a textPrompt of 3,001 characters', () => {
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: '字'.repeat(3001) })).toEqual([
        'body.textPrompt must NOT have more than 3000 characters',
      ]);
    });

    it('four references', () => {
      expect(
        bodyErrors(ReferenceAudioBody, {
          model,
          textPrompt: 'x',
          references: [{ speaker: 'a' }, { speaker: 'b' }, { speaker: 'c' }, { speaker: 'd' }],
        }),
      ).toEqual(['body.references must NOT have more than 3 items']);
    });

    it('a reference that is not an object', () => {
      expect(
        bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', references: ['zh_male_m191_uranus_bigtts'] }),
      ).toEqual(['body.references.0 must be object']);
    });

    it('a reference field that is not text', () => {
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', references: [{ speaker: 7 }] })).toEqual([
        'body.references.0.speaker must be string',
      ]);
    });

    it('an unknown format', () => {
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', format: 'flac' })).toEqual([
        'body.format must be one of: mp3, wav, ogg_opus, pcm',
      ]);
    });

    it('a sample rate text-to-speech takes but this product does not', () => {
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', sampleRate: 22050 })).toEqual([
        'body.sampleRate must be one of: 8000, 16000, 24000, 32000, 44100, 48000',
      ]);
    });

    it('speechRate 101', () => {
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', speechRate: 101 })).toEqual([
        'body.speechRate must be <= 100',
      ]);
    });

    it('loudnessRate -51', () => {
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', loudnessRate: -51 })).toEqual([
        'body.loudnessRate must be >= -50',
      ]);
    });

    it('pitchRate 13', () => {
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', pitchRate: 13 })).toEqual([
        'body.pitchRate must be <= 12',
      ]);
    });

    it('a fractional speechRate', () => {
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', speechRate: 1.5 })).toEqual([
        'body.speechRate must be integer',
      ]);
    });

    it('enableSubtitle that is not a boolean', () => {
      expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', enableSubtitle: 'yes' })).toEqual([
        'body.enableSubtitle must be boolean',
      ]);
    });
  });
});

describe('embeddings requests', () => {
  /**
   * Every limit and refused combination of an embeddings request on the alpha, beta and gamma surfaces, refused
   * naming what broke by the steps a request takes before any hold, record or upstream call: its route's body
   * schema and encoding, its surface's decoding, the model's resolution and pricing, its rows' part types and
   * dimensions (`EmbeddingRecipe.plan`), and its media's bytes (`prepareEmbeddingInputs`). That the routes
   * answer these as a 400 envelope with nothing held, recorded or sent, and the refusals that need a URL
   * fetched, are claimed over HTTP in embeddings.test.ts.
   */
  const config = parseConfig(
    `
  providers:
    openai: { protocol: openai, baseUrl: https://openai.example/v1, apiKey: k }
    gemini: { protocol: gemini, baseUrl: https://gemini.example/v1beta, apiKey: k }
    ark: { protocol: ark, baseUrl: https://ark.example/api/v3, apiKey: k }
  models:
  ${embeddingModelsYaml}`,
    'embedding-rules.yaml',
    {},
  );
  const catalog = new Catalog(config);
  const http = new UpstreamHttp();
  afterAll(() => http.close());
  const sources = {
    adapters: new Map(
      [createOpenAiAdapter(http), createGeminiAdapter(http), createArkAdapter(http)].map((a) => [a.protocol, a]),
    ),
    providers: config.providers,
  };

  /** An embeddings request as its route's surface decodes it: the model, the inputs, and the size asked. */
  interface Decoded {
    modelId: string;
    inputs: EmbeddingInput[];
    dimensions: number | undefined;
    dimensionsField?: string;
  }

  /** The route's body check and its surface's decoding; a string is the schema's refusal. */
  function decoded(url: string, payload: object): Decoded | string {
    const gamma = /^\/api\/gamma\/v1beta\/models\/([^:]+):(embedContent|batchEmbedContents)$/.exec(url);
    if (gamma) {
      const modelId = gamma[1] ?? '';
      const action = gamma[2];
      const dimensionsField = 'outputDimensionality';
      if (action === 'embedContent') {
        const checked = checkedBody(EmbedContentRequest, payload);
        if (checked.errors) return checked.errors.join(' ');
        return { modelId, dimensionsField, ...decodeEmbedContent(checked.body, modelId) };
      }
      const checked = checkedBody(BatchEmbedContentsRequest, payload);
      if (checked.errors) return checked.errors.join(' ');
      return { modelId, dimensionsField, ...decodeBatchEmbedContents(checked.body, modelId) };
    }
    if (url === '/api/alpha/v1/embeddings') {
      const checked = checkedBody(EmbeddingsRequest, payload);
      if (checked.errors) return checked.errors.join(' ');
      embeddingEncoding(checked.body.encoding_format);
      const { model, input, dimensions } = checked.body;
      return { modelId: model, inputs: decodeEmbeddingInput(input), dimensions };
    }
    if (url !== '/api/beta/v1/embeddings') throw new Error(`no embeddings route ${url}`);
    const checked = checkedBody(BetaEmbeddingsRequest, payload);
    if (checked.errors) return checked.errors.join(' ');
    embeddingEncoding(checked.body.encoding_format);
    const { model, input, dimensions } = checked.body;
    return { modelId: model, inputs: decodeBetaEmbeddingInput(input), dimensions };
  }

  /** The message of the 400 a request is refused with, by the first step that refuses it. */
  async function refusalOf([url, payload]: readonly [string, object]): Promise<string> {
    try {
      const request = decoded(url, payload);
      if (typeof request === 'string') return request;
      const model = catalog.resolve(request.modelId);
      requirePricing(model);
      const [winner] = servingRows(sources, model, 'embeddings');
      if (!winner) throw new Error(`model "${model.modelId}" has no embeddings row here`);
      const row = {
        accepted: acceptedParts(winner.row.capabilities, model.inputModalities, winner.adapter.parts),
        carries: winner.adapter.parts,
      };
      gateDimensions(model.modelId, winner.row.capabilities, request);
      checkEmbeddingShape(model.modelId, request.inputs, row.accepted);
      await prepareEmbeddingInputs(request.inputs, row, {
        fetchMedia: () => Promise.reject(new Error('these requests are refused before any URL is fetched')),
        maxBytes: 65_536,
      });
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      expect(error.status).toBe(400);
      return error.message;
    }
    throw new Error('expected a refusal');
  }

  const base64 = (bytes: Buffer) => bytes.toString('base64');
  const wav = (seconds: number) => ({ type: 'audioBase64', data: base64(wavFile(seconds)), mediaType: 'audio/wav' });
  const video = (seconds: number, mediaType = 'video/mp4') => ({
    type: 'videoBase64',
    data: base64(isoVideoFile(seconds)),
    mediaType,
  });
  const image = { type: 'imageBase64', data: pngBase64, mediaType: 'image/png' };
  const [beta, alpha, gamma] = [betaEmbedding, alphaEmbedding, gammaEmbedding];
  const text = { parts: [{ text: 'x' }] };

  describe('an embeddings request that breaks a limit is refused naming it', () => {
    it('lets one within every limit through', async () => {
      await expect(refusalOf(beta('gemini-embed-2', image, wav(1), video(1)))).rejects.toThrow('expected a refusal');
    });

    it('seven images', async () => {
      expect(await refusalOf(beta('gemini-embed-2', ...Array.from({ length: 7 }, () => image)))).toMatch(
        /at most 6 images/,
      );
    });

    it('seven images across inputs', async () => {
      expect(
        await refusalOf([
          '/api/beta/v1/embeddings',
          { model: 'gemini-embed-2', input: Array.from({ length: 7 }, () => ({ content: [image] })) },
        ]),
      ).toMatch(/at most 6 images/);
    });

    it('two audio parts', async () => {
      expect(await refusalOf(beta('gemini-embed-2', wav(1), wav(1)))).toMatch(/at most 1 audio part/);
    });

    it('audio that is not WAV', async () => {
      expect(await refusalOf(beta('gemini-embed-2', { ...wav(1), mediaType: 'audio/mpeg' }))).toMatch(
        /audio must be audio\/wav/,
      );
    });

    it('audio over 180 s', async () => {
      expect(await refusalOf(beta('gemini-embed-2', wav(181)))).toMatch(/lasts 181\.0 s; at most 180 s/);
    });

    it('audio over 180 s whose data chunk says it holds 8 bytes', async () => {
      const understated = { ...wav(1), data: base64(wavFile(181, 1_000, 8)) };
      expect(await refusalOf(beta('gemini-embed-2', understated))).toMatch(/lasts 181\.0 s; at most 180 s/);
    });

    it('audio whose bytes are not WAV', async () => {
      expect(
        await refusalOf(beta('gemini-embed-2', { ...wav(1), data: base64(Buffer.from('not a wav file at all')) })),
      ).toMatch(/not a readable WAV/);
    });

    it('audio by URL to a model without audio', async () => {
      expect(
        await refusalOf(beta('vision-embed', { type: 'audioUrl', url: 'https://media.example/speech.wav' })),
      ).toMatch(/model "vision-embed" does not accept "audioUrl" input parts/);
    });

    it('two video parts', async () => {
      expect(await refusalOf(beta('gemini-embed-2', video(1), video(1)))).toMatch(/at most 1 video part/);
    });

    it('video over 120 s', async () => {
      expect(await refusalOf(beta('gemini-embed-2', video(121)))).toMatch(/lasts 121\.0 s; at most 120 s/);
    });

    it('video over 120 s whose movie header says 1 s', async () => {
      const understated = { ...video(1), data: base64(isoVideoFile(130, 'isom', 1)) };
      expect(await refusalOf(beta('gemini-embed-2', understated))).toMatch(/lasts 130\.0 s; at most 120 s/);
    });

    it('video that is not MP4 or MOV', async () => {
      expect(await refusalOf(beta('gemini-embed-2', video(1, 'video/webm')))).toMatch(/video must be MP4 or MOV/);
    });

    it('video whose bytes are not MP4', async () => {
      expect(await refusalOf(beta('gemini-embed-2', { ...video(1), data: base64(pdfFile) }))).toMatch(
        /not a readable MP4 or MOV/,
      );
    });

    it('a file that is not a PDF', async () => {
      expect(await refusalOf(beta('gemini-embed-2', { type: 'fileBase64', data: base64(wavFile(1)) }))).toMatch(
        /not a PDF/,
      );
    });

    it('invalid base64', async () => {
      expect(await refusalOf(beta('gemini-embed-2', { ...image, data: '***' }))).toMatch(/not valid base64/);
    });

    it('raw base64 without a media type', async () => {
      expect(await refusalOf(beta('gemini-embed-2', { type: 'imageBase64', data: pngBase64 }))).toMatch(
        /mediaType is required/,
      );
    });

    it('audio to a text-only model', async () => {
      expect(await refusalOf(beta('text-embed', wav(1)))).toMatch(
        /model "text-embed" does not accept "audioBase64" input parts/,
      );
    });

    it('an image to a text-only model', async () => {
      expect(await refusalOf(beta('gemini-embed-1', image))).toMatch(
        /model "gemini-embed-1" does not accept "imageBase64" input parts/,
      );
    });

    it('video to the image model', async () => {
      expect(await refusalOf(beta('vision-embed', video(1)))).toMatch(
        /model "vision-embed" does not accept "videoBase64" input parts/,
      );
    });

    it('a PDF to the image model', async () => {
      expect(await refusalOf(beta('vision-embed', { type: 'fileBase64', data: base64(pdfFile) }))).toMatch(
        /model "vision-embed" does not accept "fileBase64" input parts/,
      );
    });

    it('an unknown part type', async () => {
      expect(await refusalOf(beta('gemini-embed-2', { type: 'hologram', data: 'x' }))).toMatch(/type must be one of/);
    });

    it('an unknown encoding on beta', async () => {
      expect(
        await refusalOf(['/api/beta/v1/embeddings', { model: 'text-embed', input: ['x'], encoding_format: 'int8' }]),
      ).toMatch(/send "float" or "base64"/);
    });

    it('129 inputs on alpha', async () => {
      expect(await refusalOf(alpha({ input: Array.from({ length: 129 }, (_, index) => `text ${index}`) }))).toMatch(
        /at most 128 inputs/,
      );
    });

    it('multimodal input on alpha', async () => {
      expect(await refusalOf(alpha({ input: [{ content: [image] }] }))).toMatch(
        /multimodal input is not accepted on this surface/,
      );
    });

    it('token arrays on alpha', async () => {
      expect(await refusalOf(alpha({ input: [[1, 2, 3]] }))).toMatch(/must be a string/);
    });

    it('an empty string', async () => {
      expect(await refusalOf(alpha({ input: ['ok', ''] }))).toMatch(/input 1 has an empty text/);
    });

    it('an unknown encoding on alpha', async () => {
      expect(await refusalOf(alpha({ input: 'x', encoding_format: 'binary' }))).toMatch(/send "float" or "base64"/);
    });

    it('dimensions for a fixed-size model', async () => {
      expect(
        await refusalOf(['/api/alpha/v1/embeddings', { model: 'gemini-embed-1', input: 'x', dimensions: 64 }]),
      ).toMatch(/does not support parameter "dimensions"/);
    });

    it('dimensions out of range', async () => {
      expect(await refusalOf(alpha({ input: 'x', dimensions: 4000 }))).toMatch(
        /parameter "dimensions" of model "text-embed"/,
      );
    });

    it('a text model', async () => {
      expect(await refusalOf(['/api/alpha/v1/embeddings', { model: 'no-such-model', input: 'x' }])).toMatch(
        /not available/,
      );
    });

    it('outputDimensionality for a fixed-size model on gamma', async () => {
      expect(
        await refusalOf(gamma('gemini-embed-1', 'embedContent', { content: text, outputDimensionality: 64 })),
      ).toMatch(/model "gemini-embed-1" does not support parameter "outputDimensionality"/);
    });

    it('outputDimensionality out of range on gamma', async () => {
      expect(
        await refusalOf(
          gamma('gemini-embed-2', 'batchEmbedContents', { requests: [{ content: text, outputDimensionality: 64 }] }),
        ),
      ).toMatch(/parameter "outputDimensionality" of model "gemini-embed-2" must be an integer from 128 to 3072/);
    });

    it('taskType on gamma', async () => {
      expect(
        await refusalOf(gamma('gemini-embed-1', 'embedContent', { content: text, taskType: 'RETRIEVAL_QUERY' })),
      ).toMatch(/taskType is not supported/);
    });

    it('title in gamma config', async () => {
      expect(
        await refusalOf(gamma('gemini-embed-1', 'embedContent', { contents: text, config: { title: 'doc' } })),
      ).toMatch(/title is not supported/);
    });

    it('taskType in a gamma batch', async () => {
      expect(
        await refusalOf(
          gamma('gemini-embed-1', 'batchEmbedContents', { requests: [{ content: text, taskType: 'CLUSTERING' }] }),
        ),
      ).toMatch(/requests\.0\.taskType is not supported/);
    });

    it('a gamma batch of mixed sizes', async () => {
      expect(
        await refusalOf(
          gamma('gemini-embed-2', 'batchEmbedContents', {
            requests: [
              { content: text, outputDimensionality: 256 },
              { content: text, outputDimensionality: 512 },
            ],
          }),
        ),
      ).toMatch(/same outputDimensionality/);
    });

    it('a gamma batch naming another model', async () => {
      expect(
        await refusalOf(
          gamma('gemini-embed-1', 'batchEmbedContents', { requests: [{ model: 'models/text-embed', content: text }] }),
        ),
      ).toMatch(/differs from the model in the path/);
    });

    it('a gamma inline part of another kind', async () => {
      expect(
        await refusalOf(
          gamma('gemini-embed-2', 'embedContent', {
            content: { parts: [{ inlineData: { mimeType: 'text/csv', data: 'YQ==' } }] },
          }),
        ),
      ).toMatch(/not an image, audio, video or PDF type/);
    });

    it('a gamma embed without content', async () => {
      expect(await refusalOf(gamma('gemini-embed-1', 'embedContent', {}))).toMatch(
        /exactly one of content and contents/,
      );
    });
  });
});
