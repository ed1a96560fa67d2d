import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope, keyHeaders } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * Providers `keyed` and `unkeyed` take their keys from the environment; the test activates only `keyed`.
 * `sandbox` is always active.
 */
const configText = `
providers:
  keyed:
    protocol: openai
    baseUrl: https://keyed.example.com/v1
    apiKey: \${CATALOG_TEST_KEYED_KEY}
  unkeyed:
    protocol: anthropic
    baseUrl: https://unkeyed.example.com/v1
    apiKey: \${CATALOG_TEST_UNKEYED_KEY}
  sandbox:
    protocol: sandbox
models:
  - id: plain-text
    name: Plain text
    inputModalities: [text]
    outputModalities: [text]
    providers:
      - { provider: sandbox, model: echo }
  - id: vendor/vision-1.5
    name: Vision with a slash and a dot
    revision: 3
    inputModalities: [text, image]
    outputModalities: [text]
    providers:
      - provider: unkeyed
        model: loser-inactive
        priority: 0
        capabilities:
          text: { supportedParameters: [maxTokens] }
          strictParams: true
      - provider: sandbox
        model: echo
        priority: 5
        capabilities:
          text: { supportedParameters: [temperature] }
      - provider: keyed
        model: winner
        priority: 2
        capabilities:
          text: { supportedParameters: [maxTokens, temperature, topP] }
          params:
            temperature: { type: range, min: 0, max: 1.5 }
          inputs: { image: { maxCount: 4 } }
  - id: omni
    inputModalities: [text, image, file, video, audio]
    outputModalities: [text, audio]
    providers:
      - { provider: keyed, model: omni-upstream }
  - id: embedder
    name: Embedder
    inputModalities: [text]
    outputModalities: [embedding]
    providers:
      - provider: sandbox
        model: embedding
        capabilities:
          params:
            dimensions: { type: int, min: 1, max: 64 }
  - id: painter
    name: Painter
    inputModalities: [text, image]
    outputModalities: [image]
    providers:
      - provider: sandbox
        model: image
        capabilities:
          image:
            params:
              size: { type: enum, values: [small, large], default: small }
  - id: only-unkeyed
    name: Served only by the provider without a key
    inputModalities: [text]
    outputModalities: [text]
    providers:
      - { provider: unkeyed, model: nope }
  - id: switched-off
    name: Switched off in the configuration
    isActive: false
    inputModalities: [text]
    outputModalities: [text]
    providers:
      - { provider: sandbox, model: echo }
`;

interface ModelBody {
  modelId: string;
  name?: string;
  providerIds: string[];
  inputModalities: string[];
  outputModalities: string[];
  isActive: boolean;
  revision: number;
  capabilities?: Record<string, unknown>;
}

const activeIds = ['embedder', 'omni', 'painter', 'plain-text', 'vendor/vision-1.5'];

describe('native model catalog', () => {
  let gateway: TestGateway;
  let key: string;

  const get = (url: string) => gateway.request({ method: 'GET', url, headers: keyHeaders(key) });
  const listIds = async (query: string) => {
    const response = await get(`/api/v1/ai/models${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return response
      .json<ModelBody[]>()
      .map((model) => model.modelId)
      .sort();
  };

  beforeAll(async () => {
    gateway = await startTestGateway({ configText, env: { CATALOG_TEST_KEYED_KEY: 'sk-test-keyed' } });
    key = (await gateway.createFundedKey({ credits: 1 })).key;
  });
  afterAll(async () => gateway?.close());

  describe('GET /api/v1/ai/models', () => {
    it('lists exactly the active models: not those whose only provider has no key, not those switched off', async () => {
      expect(await listIds('')).toEqual(activeIds);
    });

    it('returns spec Model objects, all active, with no provider secrets or upstream model ids', async () => {
      const response = await get('/api/v1/ai/models');
      const models = response.json<ModelBody[]>();
      expect(Array.isArray(models)).toBe(true);
      for (const model of models) {
        expect(model.isActive).toBe(true);
        expect(typeof model.revision).toBe('number');
        expect(model.providerIds.length).toBeGreaterThan(0);
        expect(model.providerIds).not.toContain('unkeyed');
      }
      expect(response.body).not.toContain('sk-test-keyed');
      expect(response.body).not.toContain('keyed.example.com');
      expect(response.body).not.toContain('omni-upstream');
    });

    it('list items carry the same fields as the single-model endpoint', async () => {
      const listed = (await get('/api/v1/ai/models')).json<ModelBody[]>();
      for (const model of listed) {
        const single = await get(`/api/v1/ai/models/${model.modelId}`);
        expect(single.statusCode).toBe(200);
        expect(single.json()).toEqual(model);
      }
    });

    it('needs a credential', async () => {
      expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/ai/models' }), {
        status: 401,
        code: 'GW_UNAUTHENTICATED',
        path: '/api/v1/ai/models',
      });
    });

    describe('modality filters (all-match)', () => {
      it.each([
        ['?inputModalities=image', ['omni', 'painter', 'vendor/vision-1.5']],
        ['?inputModalities=text', activeIds],
        ['?inputModalities=image,audio', ['omni']],
        ['?inputModalities=image&inputModalities=audio', ['omni']],
        ['?inputModalities=image,%20audio', ['omni']],
        ['?inputModalities=file', ['omni']],
        ['?outputModalities=embedding', ['embedder']],
        ['?outputModalities=image', ['painter']],
        ['?outputModalities=text', ['omni', 'plain-text', 'vendor/vision-1.5']],
        ['?outputModalities=text,audio', ['omni']],
        ['?outputModalities=text&outputModalities=audio', ['omni']],
        ['?outputModalities=text,embedding', []],
        ['?inputModalities=image&outputModalities=text', ['omni', 'vendor/vision-1.5']],
        ['?inputModalities=image&outputModalities=image', ['painter']],
        ['?inputModalities=video&outputModalities=embedding', []],
      ])('%s', async (query, expected) => {
        expect(await listIds(query)).toEqual([...expected].sort());
      });

      it.each([
        ['inputModalities=smell', 'inputModalities'],
        ['inputModalities=embedding', 'inputModalities'],
        ['inputModalities=text,smell', 'inputModalities'],
        ['outputModalities=smell', 'outputModalities'],
        ['outputModalities=text&outputModalities=vectors', 'outputModalities'],
      ])('an unknown modality (%s) answers 400 naming the parameter', async (query, field) => {
        const response = await get(`/api/v1/ai/models?${query}`);
        const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/ai/models' });
        expect(body.errors.join(' ')).toContain(field);
      });
    });
  });

  describe('GET /api/v1/ai/models/:modelId', () => {
    it('returns the spec Model with the capabilities of the priority-winning active row', async () => {
      const response = await get('/api/v1/ai/models/vendor/vision-1.5');
      expect(response.statusCode, response.body).toBe(200);
      const model = response.json<ModelBody>();
      expect(model).toEqual({
        modelId: 'vendor/vision-1.5',
        name: 'Vision with a slash and a dot',
        providerIds: expect.arrayContaining(['keyed', 'sandbox']) as unknown,
        inputModalities: ['text', 'image'],
        outputModalities: ['text'],
        isActive: true,
        revision: 3,
        capabilities: {
          text: { supportedParameters: ['maxTokens', 'temperature', 'topP'] },
          params: { temperature: { type: 'range', min: 0, max: 1.5 } },
          inputs: { image: { maxCount: 4 } },
        },
      });
      expect([...model.providerIds].sort()).toEqual(['keyed', 'sandbox']);
    });

    it('the id may be sent with its slash percent-encoded', async () => {
      const response = await get('/api/v1/ai/models/vendor%2Fvision-1.5');
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json<ModelBody>().modelId).toBe('vendor/vision-1.5');
    });

    it('a model active only thanks to the environment key is served', async () => {
      const response = await get('/api/v1/ai/models/omni');
      expect(response.statusCode).toBe(200);
      const model = response.json<ModelBody>();
      expect(model.modelId).toBe('omni');
      expect(model.providerIds).toEqual(['keyed']);
      expect(model.inputModalities).toEqual(['text', 'image', 'file', 'video', 'audio']);
      expect(model.outputModalities).toEqual(['text', 'audio']);
      expect(model.revision).toBe(1);
      expect(model).not.toHaveProperty('name');
      expect(model).not.toHaveProperty('capabilities');
    });

    it('keeps nested image params of the winning row', async () => {
      const model = (await get('/api/v1/ai/models/painter')).json<ModelBody>();
      expect(model.capabilities).toEqual({
        image: { params: { size: { type: 'enum', values: ['small', 'large'], default: 'small' } } },
      });
      expect(model.outputModalities).toEqual(['image']);
    });

    it('a model with no capabilities configured omits the field (unconstrained)', async () => {
      const model = (await get('/api/v1/ai/models/plain-text')).json<ModelBody>();
      expect(model).toEqual({
        modelId: 'plain-text',
        name: 'Plain text',
        providerIds: ['sandbox'],
        inputModalities: ['text'],
        outputModalities: ['text'],
        isActive: true,
        revision: 1,
      });
    });

    it.each(['no-such-model', 'only-unkeyed', 'switched-off', 'vendor', 'vendor/vision', 'vendor/vision-1.5/extra'])(
      '%s answers 404',
      async (modelId) => {
        const response = await get(`/api/v1/ai/models/${modelId}`);
        const body = expectEnvelope(response, {
          status: 404,
          code: 'GW_NOT_FOUND',
          path: `/api/v1/ai/models/${modelId}`,
        });
        expect(body.errors.join(' ')).toContain(modelId);
      },
    );

    it('needs a credential', async () => {
      expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/ai/models/plain-text' }), {
        status: 401,
        code: 'GW_UNAUTHENTICATED',
        path: '/api/v1/ai/models/plain-text',
      });
    });
  });
});
