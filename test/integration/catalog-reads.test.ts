import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageRecords } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * The catalog reads and token counts the official SDKs make on the compatibility surfaces, against the
 * shipped configuration (its sandbox models: text, embeddings, image, video and speech).
 */
describe('catalog reads and token counts on the alpha, beta and gamma surfaces', () => {
  let gateway: TestGateway;
  let address: string;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
    key = (await gateway.createFundedKey({ credits: 1 })).key;
  });
  afterAll(async () => gateway?.close());

  const get = (url: string, apiKey = key) => gateway.request({ method: 'GET', url, headers: { 'x-api-key': apiKey } });
  const post = (url: string, payload: object, headers: Record<string, string> = { 'x-api-key': key }) =>
    gateway.request({ method: 'POST', url, payload, headers });
  const balance = async () => (await get('/api/compat/v1/balance')).json<{ creditBalance: number }>().creditBalance;

  describe('alpha', () => {
    const openai = () => new OpenAI({ apiKey: key, baseURL: `${address}/api/alpha/v1`, maxRetries: 0 });

    it('retrieves one model as an OpenAI model object, and answers 404 in its error shape for an unknown id', async () => {
      const model = await openai().models.retrieve('sandbox-echo');
      expect(model).toMatchObject({ id: 'sandbox-echo', object: 'model', owned_by: 'gateway' });
      expect(model).toMatchObject({ chatPricing: { inputPerMTok: 0.1, outputPerMTok: 0.2, currency: 'USD' } });
      const missing = await openai()
        .models.retrieve('no-such-model')
        .catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
      expect((missing as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
        message: 'model "no-such-model" not found',
      });
    });

    it('lists each model with the pricing object of what it makes, holding the prices it is billed by', async () => {
      const items = (await get('/api/alpha/v1/models')).json<{ data: Array<Record<string, unknown>> }>().data;
      const item = (id: string) => items.find((model) => model.id === id)!;
      const kinds = (id: string) => Object.keys(item(id)).filter((field) => field.endsWith('Pricing'));
      expect(kinds('sandbox-image')).toEqual(['imagePricing']);
      expect(item('sandbox-image').imagePricing).toEqual({ perImage: 0.001, currency: 'USD' });
      expect(kinds('sandbox-video')).toEqual(['videoPricing']);
      expect(item('sandbox-video').videoPricing).toEqual({
        perVideoSecondByResolution: { '480p': 0.001, '720p': 0.002 },
        currency: 'USD',
      });
      expect(kinds('seed-tts-1.0')).toEqual(['audioPricing']);
      expect(item('seed-tts-1.0').audioPricing).toEqual({ perMCharacters: 60, currency: 'USD' });
      expect(kinds('seed-audio-1.0-multilingual')).toEqual(['audioPricing']);
      expect(item('seed-audio-1.0-multilingual').audioPricing).toEqual({ perAudioSecond: 0.004, currency: 'USD' });
      expect(item('sandbox-embedding').embeddingPricing).toEqual({ inputPerMTok: 0.01, currency: 'USD' });
      expect(kinds('sandbox-echo')).toEqual(['chatPricing']);
    });
  });

  describe('beta', () => {
    const anthropic = () => new Anthropic({ apiKey: key, baseURL: `${address}/api/beta`, maxRetries: 0 });

    it("lists and retrieves models in Anthropic's shape, a 404 in its error shape", async () => {
      const listed = (await get('/api/beta/v1/models')).json<{
        data: Array<{ id: string }>;
        has_more: boolean;
        first_id: string;
        last_id: string;
      }>();
      expect(listed.has_more).toBe(false);
      expect(listed.first_id).toBe(listed.data[0]!.id);
      expect(listed.last_id).toBe(listed.data.at(-1)!.id);
      const model = await anthropic().models.retrieve('sandbox-echo');
      expect(model).toMatchObject({
        type: 'model',
        id: 'sandbox-echo',
        display_name: expect.stringMatching(/^Sandbox echo/),
      });
      expect(typeof model.created_at).toBe('string');
      const missing = await get('/api/beta/v1/models/no-such-model');
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    });

    it("counts a prompt's tokens as the gateway bills them, charging nothing", async () => {
      const { key: own } = await gateway.createFundedKey({ credits: 1 });
      const client = new Anthropic({ apiKey: own, baseURL: `${address}/api/beta`, maxRetries: 0 });
      const prompt = { system: 'Be brief.', messages: [{ role: 'user' as const, content: 'alpha beta gamma delta' }] };
      const counted = await client.messages.countTokens({ model: 'sandbox-echo', ...prompt });
      // The sandbox reports the tokens the gateway counts, so the count is what the call is billed by.
      const message = await client.messages.create({ model: 'sandbox-echo', max_tokens: 20, ...prompt });
      expect(counted.input_tokens).toBe(message.usage.input_tokens);
      expect(counted.input_tokens).toBeGreaterThan(0);
      expect(await usageRecords(gateway, own)).toHaveLength(1);
    });

    it('refuses a count for a model that makes no text, an unknown model, and a call without a credential', async () => {
      const before = await balance();
      const messages = [{ role: 'user', content: 'hi' }];
      const media = await post('/api/beta/v1/messages/count_tokens', { model: 'sandbox-image', messages });
      expect(media.statusCode).toBe(400);
      const unknown = await post('/api/beta/v1/messages/count_tokens', { model: 'nope', messages });
      expect(unknown.statusCode).toBe(400);
      const anonymous = await post('/api/beta/v1/messages/count_tokens', { model: 'sandbox-echo', messages }, {});
      expect(anonymous.statusCode).toBe(401);
      expect(await balance()).toBe(before);
    });
  });

  describe('gamma', () => {
    const genai = () =>
      new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: `${address}/api/gamma` }, vertexai: false });

    it("retrieves one model in Gemini's shape, a 404 in its error shape", async () => {
      const model = await genai().models.get({ model: 'sandbox-echo' });
      expect(model).toMatchObject({
        name: 'models/sandbox-echo',
        supportedActions: ['generateContent', 'streamGenerateContent', 'countTokens'],
        outputTokenLimit: 4096,
      });
      const missing = await get('/api/gamma/v1beta/models/no-such-model');
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
    });

    it('lists the generation methods each model answers: text, embeddings, none for media', async () => {
      const listed = (await get('/api/gamma/v1beta/models')).json<{
        models: Array<{ name: string; supportedGenerationMethods: string[] }>;
      }>().models;
      const methods = (id: string) => listed.find((model) => model.name === `models/${id}`)!.supportedGenerationMethods;
      expect(methods('sandbox-echo')).toEqual(['generateContent', 'streamGenerateContent', 'countTokens']);
      expect(methods('sandbox-embedding')).toEqual(['embedContent', 'batchEmbedContents']);
      expect(methods('sandbox-image')).toEqual([]);
      expect(methods('sandbox-video')).toEqual([]);
      expect(methods('seed-tts-1.0')).toEqual([]);
    });

    it("counts a prompt's tokens with the SDK and in the older request form, charging nothing", async () => {
      const before = await balance();
      const counted = await genai().models.countTokens({ model: 'sandbox-echo', contents: 'alpha beta gamma delta' });
      const beta = await post('/api/beta/v1/messages/count_tokens', {
        model: 'sandbox-echo',
        messages: [{ role: 'user', content: 'alpha beta gamma delta' }],
      });
      expect(counted.totalTokens).toBe(beta.json<{ input_tokens: number }>().input_tokens);
      const wrapped = await post('/api/gamma/v1beta/models/sandbox-echo:countTokens', {
        generateContentRequest: { contents: [{ role: 'user', parts: [{ text: 'alpha beta gamma delta' }] }] },
      });
      expect(wrapped.json()).toEqual({ totalTokens: counted.totalTokens });
      const media = await post('/api/gamma/v1beta/models/sandbox-video:countTokens', { contents: 'hi' });
      expect(media.statusCode).toBe(400);
      const empty = await post('/api/gamma/v1beta/models/sandbox-echo:countTokens', {});
      expect(empty.statusCode).toBe(400);
      expect(await balance()).toBe(before);
    });
  });

  it('counts nothing for a key without credit or past a cap: counting is work, admitted as a generation is', async () => {
    const broke = await gateway.createFundedKey({ credits: 0 });
    const capped = await gateway.createFundedKey({ credits: 1, limits: { total: 0 } });
    const messages = [{ role: 'user', content: 'alpha beta gamma delta' }];
    const counts = [
      { url: '/api/beta/v1/messages/count_tokens', payload: { model: 'sandbox-echo', messages } },
      { url: '/api/gamma/v1beta/models/sandbox-echo:countTokens', payload: { contents: 'alpha beta gamma delta' } },
    ];
    for (const { url, payload } of counts) {
      const refused = await post(url, payload, { 'x-api-key': broke.key });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.headers['x-gateway-error-code']).toBe('GW_INSUFFICIENT_BALANCE');
      expect(refused.body).toContain('the account has no available credits');
      const atCap = await post(url, payload, { 'x-api-key': capped.key });
      expect(atCap.statusCode, atCap.body).toBe(429);
      expect(atCap.headers['x-gateway-error-code']).toBe('GW_SPEND_CAP_REACHED');
    }
  });
});
