import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeOpenAiKey, startOpenAiFake } from '../fakes/openai-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { heldNanosOf, usageRecords } from '../support/http-helpers.ts';
import { fakeProviderYaml, modelYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

describe('native text completions through an OpenAI-protocol upstream', () => {
  let fake: FakeServer;
  let gateway: TestGateway;

  beforeAll(async () => {
    fake = await startOpenAiFake();
    const model = (id: string, provider: string, upstream: string) => modelYaml(id, { provider, upstream });
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        fakeProviderYaml('fake', 'openai', fake),
        `  wrongkey: { protocol: openai, baseUrl: "${fake.url}/v1", apiKey: sk-wrong }`,
        '  down: { protocol: openai, baseUrl: "http://127.0.0.1:9/v1", apiKey: sk-x, timeoutMs: 2000 }',
        'models:',
        model('chat', 'fake', 'gpt-4o-mini'),
        model('limited', 'fake', 'fake-error-429'),
        model('cut', 'fake', 'fake-cut'),
        model('quiet', 'fake', 'fake-no-usage'),
        model('unreachable', 'down', 'anything'),
        model('rejected', 'wrongkey', 'gpt-4o-mini'),
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const complete = (key: string, model: string, extra: Record<string, unknown> = {}) =>
    gateway.request({
      method: 'POST',
      url: '/api/v1/text/completions',
      headers: { 'x-api-key': key },
      payload: {
        model,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'one two three four' },
        ],
        ...extra,
      },
    });
  const records = (key: string) => usageRecords(gateway, key);
  const balance = async (key: string) =>
    (await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: { 'x-api-key': key } })).json<{
      creditBalance: number;
    }>().creditBalance;

  it('rewrites the model id, sends the provider key, streams the answer and bills the reported usage', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await complete(key, 'chat', { maxTokens: 100, temperature: 0.5 });
    expect(response.statusCode).toBe(200);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${fakeOpenAiKey}`);
    expect(sent.body).toMatchObject({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 100,
      temperature: 0.5,
    });
    const frames = response.body.split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame.slice(6)) as { delta: string; usage?: object });
    expect(chunks.map((chunk) => chunk.delta).join('')).toBe('Echo: one two three four');
    // Reported usage: 2 + 4 prompt words, 5 completion words, at 1 and 2 USD per million tokens.
    expect(chunks.at(-1)!.usage).toEqual({ promptTokens: 6, completionTokens: 5, totalTokens: 11 });
    const [record] = await records(key);
    expect(record).toMatchObject({ status: 'succeeded', usage: { promptTokens: 6, completionTokens: 5 } });
    expect(Math.round(record!.usdCost * 1e9)).toBe(6 * 1000 + 5 * 2000);
  });

  it('relays an upstream error with its own status and body, and charges nothing', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await complete(key, 'limited');
    expect(response.statusCode).toBe(429);
    expect(response.json()).toEqual({
      error: {
        message: 'Rate limit reached for requests',
        type: 'rate_limit_error',
        param: null,
        code: 'rate_limit_exceeded',
      },
    });
    const rejected = await complete(key, 'rejected');
    expect(rejected.statusCode).toBe(401);
    expect(rejected.json()).toMatchObject({ error: { code: 'invalid_api_key' } });
    expect(await balance(key)).toBe(1);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect((await records(key)).map((record) => [record.status, record.usdCost])).toEqual([
      ['failed', 0],
      ['failed', 0],
    ]);
  });

  it('answers 502 in the envelope when the upstream cannot be reached, and releases the hold', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await complete(key, 'unreachable');
    expect(response.statusCode).toBe(502);
    expect(response.json()).toMatchObject({
      status: 502,
      success: false,
      errors: ['the upstream provider could not be reached'],
    });
    expect(await balance(key)).toBe(1);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('ends a stream cut mid-way with an in-stream error and no [DONE], charging what was delivered', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await complete(key, 'cut');
    expect(response.statusCode).toBe(200);
    const frames = response.body.split('\n\n').filter(Boolean);
    expect(frames).not.toContain('data: [DONE]');
    expect(JSON.parse(frames.at(-1)!.slice(6))).toEqual({ error: 'the upstream provider failed while streaming' });
    expect(frames.length).toBeGreaterThan(1);
    const [record] = await records(key);
    expect(record).toMatchObject({ status: 'failed', usage: { countedByGateway: true } });
    expect(record!.usage!.promptTokens).toBeGreaterThan(0);
    expect(record!.usage!.completionTokens).toBeGreaterThan(0);
    expect(record!.usdCost).toBeGreaterThan(0);
    expect(await balance(key)).toBeCloseTo(1 - record!.usdCost, 9);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('counts tokens itself when the upstream reports no usage, and says so in the record', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await complete(key, 'quiet');
    expect(response.statusCode).toBe(200);
    const [record] = await records(key);
    expect(record).toMatchObject({ status: 'succeeded', usage: { countedByGateway: true } });
    expect(record!.usage!.promptTokens).toBeGreaterThan(0);
    expect(record!.usage!.completionTokens).toBeGreaterThan(0);
    expect(record!.usdCost).toBeGreaterThan(0);
  });
});
