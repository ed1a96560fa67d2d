import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeGeminiKey, startGeminiFake } from '../fakes/gemini-fake.ts';
import { heldNanosOf, usageRecords } from '../support/http-helpers.ts';
import { fakeProviderYaml, modelYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

describe('gamma generateContent with the official Gemini SDK', () => {
  let fake: FakeServer;
  let gateway: TestGateway;
  let address: string;

  beforeAll(async () => {
    fake = await startGeminiFake();
    const model = (id: string, upstream: string, provider = 'gemini') =>
      modelYaml(id, { provider, upstream, prices: { input: 0.3, output: 2.5 } });
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        fakeProviderYaml('gemini', 'gemini', fake),
        '  sandbox: { protocol: sandbox }',
        'models:',
        model('gemini-test', 'gemini-2.5-flash'),
        model('thinking', 'fake-thinking'),
        model('exhausted', 'fake-error-429'),
        model('cut', 'fake-cut'),
        model('echo', 'echo', 'sandbox'),
      ].join('\n'),
    });
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const records = (key: string) => usageRecords(gateway, key);
  // Only the base URL and the key differ from a call to Google.
  const client = (apiKey: string) =>
    new GoogleGenAI({ apiKey, httpOptions: { baseUrl: `${address}/api/gamma`, retryOptions: { attempts: 1 } } });
  const nanos = (usd: number) => Math.round(usd * 1e9);

  it('lists models with provider-prefixed ids and the protocol list the SDK reads', async () => {
    const { key } = await gateway.createFundedKey();
    const listed = await gateway.request({
      method: 'GET',
      url: '/api/gamma/v1beta/models',
      headers: { 'x-goog-api-key': key },
    });
    expect(listed.json<{ data: Array<{ id: string }> }>().data.map((item) => item.id)).toContain('gemini/gemini-test');
    const names: string[] = [];
    for await (const model of await client(key).models.list()) names.push(model.name ?? '');
    expect(names).toContain('models/gemini-test');
  });

  it('passes generateContent through with the model rewritten in the path, and bills stream and non-stream alike', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await client(key).models.generateContent({
      model: 'gemini-test',
      contents: 'alpha beta gamma',
      config: { temperature: 0.3 },
    });
    expect(response.text).toBe('Echo: alpha beta gamma');
    expect(response.usageMetadata).toMatchObject({ promptTokenCount: 3, candidatesTokenCount: 4 });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(fakeGeminiKey);
    expect(sent.body).toMatchObject({
      contents: [{ role: 'user', parts: [{ text: 'alpha beta gamma' }] }],
      generationConfig: { temperature: 0.3 },
    });

    let text = '';
    for await (const chunk of await client(key).models.generateContentStream({
      model: 'gemini-test',
      contents: 'alpha beta gamma',
    }))
      text += chunk.text ?? '';
    expect(text).toBe('Echo: alpha beta gamma');
    expect(fake.requests.at(-1)!.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    const [streamed, whole] = await records(key);
    expect(streamed).toMatchObject({ status: 'succeeded', usage: { promptTokens: 3, completionTokens: 4 } });
    expect(streamed!.usdCost).toBe(whole!.usdCost);
    expect(nanos(whole!.usdCost)).toBe(3 * 300 + 4 * 2500);
  });

  it('relays the JSON-array stream (no alt) byte for byte but for the model it names, and bills it', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const payload = { contents: [{ role: 'user', parts: [{ text: 'one two' }] }] };
    const viaGateway = await gateway.request({
      method: 'POST',
      url: '/api/gamma/v1beta/models/gemini-test:streamGenerateContent',
      headers: { 'x-goog-api-key': key },
      payload,
    });
    const direct = await fetch(`${fake.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': fakeGeminiKey },
      body: JSON.stringify(payload),
    });
    expect(viaGateway.body).toBe(
      (await direct.text()).replaceAll('"modelVersion":"gemini-2.5-flash"', '"modelVersion":"gemini-test"'),
    );
    expect(JSON.parse(viaGateway.body)).toHaveLength(3);
    expect(await records(key)).toMatchObject([
      { status: 'succeeded', usage: { promptTokens: 2, completionTokens: 3 } },
    ]);
  });

  it('bills thinking tokens as output', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    await client(key).models.generateContent({ model: 'thinking', contents: 'hi' });
    expect(await records(key)).toMatchObject([{ usage: { promptTokens: 1, completionTokens: 2 + 7 } }]);
  });

  it('relays an upstream error with its own status and body', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await gateway.request({
      method: 'POST',
      url: '/api/gamma/v1beta/models/exhausted:generateContent',
      headers: { 'x-goog-api-key': key },
      payload: { contents: 'hi' },
    });
    expect(response.statusCode).toBe(429);
    expect(response.json()).toEqual({
      error: { code: 429, message: 'The fake failed with 429', status: 'RESOURCE_EXHAUSTED' },
    });
    await expect(client(key).models.generateContent({ model: 'exhausted', contents: 'hi' })).rejects.toMatchObject({
      status: 429,
    });
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('ends a cut stream without a finish and records it as failed', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await gateway.request({
      method: 'POST',
      url: '/api/gamma/v1beta/models/cut:streamGenerateContent?alt=sse',
      headers: { 'x-goog-api-key': key },
      payload: { contents: 'one two three' },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.body).not.toContain('finishReason');
    expect((await records(key)).map((record) => record.status)).toEqual(['failed']);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('translates for other protocols both ways', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await client(key).models.generateContent({
      model: 'echo',
      contents: 'alpha beta gamma',
      config: { systemInstruction: 'be brief' },
    });
    expect(response.text).toBe('alpha beta gamma');
    expect(response.candidates?.[0]?.finishReason).toBe('STOP');
    let text = '';
    for await (const chunk of await client(key).models.generateContentStream({
      model: 'echo',
      contents: 'alpha beta gamma',
      config: { maxOutputTokens: 2 },
    }))
      text += chunk.text ?? '';
    expect(text).toBe('alpha beta');
    const array = await gateway.request({
      method: 'POST',
      url: '/api/gamma/v1beta/models/echo:streamGenerateContent',
      headers: { 'x-goog-api-key': key },
      payload: { contents: 'one two' },
    });
    expect((JSON.parse(array.body) as unknown[]).length).toBeGreaterThan(1);

    const openai = new OpenAI({ apiKey: key, baseURL: `${address}/api/alpha/v1`, maxRetries: 0 });
    const completion = await openai.chat.completions.create({
      model: 'gemini-test',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'alpha beta gamma' },
      ],
    });
    expect(completion.choices[0]!.message.content).toBe('Echo: alpha beta gamma');
    expect(fake.requests.at(-1)!.body).toMatchObject({
      systemInstruction: { parts: [{ text: 'be brief' }] },
      contents: [{ role: 'user', parts: [{ text: 'alpha beta gamma' }] }],
    });
  });

  it('takes an empty safetySettings (as LangChain always sends) to any model, and refuses settings it cannot carry', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const call = (safetySettings: unknown[]) =>
      gateway.request({
        method: 'POST',
        url: '/api/gamma/v1beta/models/echo:generateContent',
        headers: { 'x-goog-api-key': key },
        payload: { contents: 'alpha beta', safetySettings },
      });
    const empty = await call([]);
    expect(empty.statusCode).toBe(200);
    expect(empty.json<{ candidates: Array<{ content: { parts: Array<{ text: string }> } }> }>()).toMatchObject({
      candidates: [{ content: { parts: [{ text: 'alpha beta' }] } }],
    });
    const settings = await call([{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }]);
    expect(settings.statusCode).toBe(400);
    expect(settings.json<{ errors: string[] }>().errors.join(' ')).toContain('safetySettings');
  });

  it('refuses content that breaks the protocol with a 400 naming the field, and keeps fields it does not read', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const call = (payload: object) =>
      gateway.request({
        method: 'POST',
        url: '/api/gamma/v1beta/models/gemini-test:generateContent',
        headers: { 'x-goog-api-key': key },
        payload,
      });
    // Each refused field is claimed on the schema in test/unit/request-body-schemas.test.ts; here, the Google
    // error body of one.
    const refusals: Array<[object, string]> = [
      [
        { contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png' } }] }] },
        "body.contents.0.parts.0.inlineData must have required property 'data'",
      ],
    ];
    for (const [payload, message] of refusals) {
      const refused = await call(payload);
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
    }
    const kept = await call({
      contents: [{ role: 'user', parts: [{ text: 'alpha', videoMetadata: { fps: 1 } }] }],
      generationConfig: { mediaResolution: 'MEDIA_RESOLUTION_LOW', thinkingConfig: { includeThoughts: false } },
      labels: { team: 'a' },
    });
    expect(kept.statusCode).toBe(200);
    expect(fake.requests.at(-1)?.body).toMatchObject({
      contents: [{ parts: [{ text: 'alpha', videoMetadata: { fps: 1 } }] }],
      generationConfig: { mediaResolution: 'MEDIA_RESOLUTION_LOW', thinkingConfig: { includeThoughts: false } },
      labels: { team: 'a' },
    });
  });

  it('accepts x-goog-api-key on the gamma surface only', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    expect(
      (await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: { 'x-goog-api-key': key } }))
        .statusCode,
    ).toBe(401);
    expect(
      (
        await gateway.request({
          method: 'POST',
          url: '/api/gamma/v1beta/models/echo:embedText',
          headers: { 'x-goog-api-key': key },
          payload: { contents: 'x' },
        })
      ).statusCode,
    ).toBe(404);
  });
});
