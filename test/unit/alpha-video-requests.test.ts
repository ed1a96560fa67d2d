import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/catalog.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { createOpenAiAdapter } from '../../src/providers/openai/openai-adapter.ts';
import { sandboxAdapter } from '../../src/providers/sandbox/sandbox-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { decodeAlphaVideo } from '../../src/surfaces/alpha/videos-codec.ts';
import { alphaVideoModelsYaml } from '../support/video-models.ts';
import { type Refusal, videoPlanRefusal } from '../support/video-plan.ts';

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
