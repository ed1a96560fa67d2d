import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/catalog.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { createArkAdapter } from '../../src/providers/ark/ark-adapter.ts';
import { sandboxAdapter } from '../../src/providers/sandbox/sandbox-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { decodeVideoBody, VideoGenerationBody } from '../../src/surfaces/native/video-request-codec.ts';
import { checkedBody } from '../support/body-check.ts';
import { pngBase64 } from '../support/media-fixtures.ts';
import { type Refusal, videoPlanRefusal } from '../support/video-plan.ts';
import { sandboxVideoModel, seedanceModel } from '../support/video-models.ts';

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
    await expectRefused({ model: 'seedance', content: [text('x'), { ...png, role: 'middleFrame' }] }, 'GW_VALIDATION');
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
