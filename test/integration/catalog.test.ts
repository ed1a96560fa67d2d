import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope, keyHeaders } from '../support/http-helpers.ts';
import { nativeCatalogYaml } from '../support/native-catalog.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

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
    gateway = await startTestGateway({
      configText: nativeCatalogYaml,
      env: { CATALOG_TEST_KEYED_KEY: 'sk-test-keyed' },
    });
    key = (await gateway.createFundedKey({ credits: 1 })).key;
  });
  afterAll(async () => gateway?.close());

  describe('GET /api/v1/ai/models', () => {
    it('lists exactly the active models: not those whose only provider has no key, not those switched off', async () => {
      expect(await listIds('')).toEqual(activeIds);
    });

    it('list items carry the same fields as the single-model endpoint, and no provider secret', async () => {
      const response = await get('/api/v1/ai/models');
      for (const secret of ['sk-test-keyed', 'keyed.example.com', 'omni-upstream'])
        expect(response.body).not.toContain(secret);
      const listed = response.json<ModelBody[]>();
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
      // The filters' semantics and each refused modality are claimed in test/unit/model-catalog-views.test.ts;
      // here, the query string's own forms (a parameter repeated, a space escaped) and the 400 of one refusal.
      it.each([
        ['?inputModalities=image&inputModalities=audio', ['omni']],
        ['?inputModalities=image,%20audio', ['omni']],
        ['?inputModalities=image&outputModalities=text', ['omni', 'vendor/vision-1.5']],
      ])('%s', async (query, expected) => {
        expect(await listIds(query)).toEqual([...expected].sort());
      });

      it.each([['outputModalities=text&outputModalities=vectors', 'outputModalities']])(
        'an unknown modality (%s) answers 400 naming the parameter',
        async (query, field) => {
          const response = await get(`/api/v1/ai/models?${query}`);
          const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/ai/models' });
          expect(body.errors.join(' ')).toContain(field);
        },
      );
    });
  });

  describe('GET /api/v1/ai/models/:modelId', () => {
    it('returns the spec Model with the capabilities of the priority-winning active row', async () => {
      const response = await get('/api/v1/ai/models/vendor/vision-1.5');
      expect(response.statusCode, response.body).toBe(200);
      const model = response.json<ModelBody>();
      expect(model).toMatchObject({
        modelId: 'vendor/vision-1.5',
        revision: 3,
        capabilities: { text: { supportedParameters: ['maxTokens', 'temperature', 'topP'] } },
      });
      expect([...model.providerIds].sort()).toEqual(['keyed', 'sandbox']);
    });

    it('the id may be sent with its slash percent-encoded', async () => {
      const response = await get('/api/v1/ai/models/vendor%2Fvision-1.5');
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json<ModelBody>().modelId).toBe('vendor/vision-1.5');
    });

    // The spec Model of each kind of model, and which ids are found, are claimed in test/unit/model-catalog-views.test.ts.
    it.each(['switched-off', 'vendor/vision-1.5/extra'])('%s answers 404', async (modelId) => {
      const response = await get(`/api/v1/ai/models/${modelId}`);
      const body = expectEnvelope(response, {
        status: 404,
        code: 'GW_NOT_FOUND',
        path: `/api/v1/ai/models/${modelId}`,
      });
      expect(body.errors.join(' ')).toContain(modelId);
    });

    it('needs a credential', async () => {
      expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/ai/models/plain-text' }), {
        status: 401,
        code: 'GW_UNAUTHENTICATED',
        path: '/api/v1/ai/models/plain-text',
      });
    });
  });
});
