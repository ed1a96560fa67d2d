import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer } from '../fakes/fake-server.ts';
import { fakeGeminiKey } from '../fakes/gemini-fake.ts';
import { heldNanosOf, keyHeaders, usageRecords } from '../support/http-helpers.ts';
import { fakeProviderYaml, modelYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * A Gemini upstream whose answer is valid JSON of its protocol but calls a function with arguments nested
 * 20,000 deep: parsing it works, writing it back as JSON overflows the stack. The gateway must neither answer
 * 500 nor leave the hold behind.
 */
const depth = 20_000;
const answer = `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"lookup","args":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":5}}`;

describe('an upstream answer too deep to write back', () => {
  let fake: FakeServer;
  let gateway: TestGateway;

  beforeAll(async () => {
    fake = await startFakeServer((request, response) => {
      if (request.headers['x-goog-api-key'] !== fakeGeminiKey) return void response.writeHead(401).end();
      const streaming = request.path.includes(':streamGenerateContent');
      response.writeHead(200, { 'content-type': streaming ? 'text/event-stream' : 'application/json' });
      response.end(streaming ? `data: ${answer}\r\n\r\n` : answer);
    });
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        fakeProviderYaml('gemini', 'gemini', fake),
        'models:',
        modelYaml('deep', { provider: 'gemini', upstream: 'gemini-2.5-flash' }),
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('is a 502 (or an in-stream error) when it must be translated, and a relayed answer still settles; nothing stays held', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const translated = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: keyHeaders(key),
      payload: { model: 'deep', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(translated.statusCode).toBe(502);
    // Streamed, the call's name was already out: the stream ends with the protocol's in-stream error.
    const streamed = await gateway.request({
      method: 'POST',
      url: '/api/v1/text/completions',
      headers: keyHeaders(key),
      payload: { model: 'deep', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(streamed.statusCode).toBe(200);
    expect(streamed.body).toContain('"error"');
    expect(streamed.body).not.toContain('[DONE]');
    const relayed = await gateway.request({
      method: 'POST',
      url: '/api/gamma/v1beta/models/deep:generateContent',
      headers: keyHeaders(key),
      payload: { contents: 'hi' },
    });
    expect(relayed.statusCode).toBe(200);
    const relayedStream = await gateway.request({
      method: 'POST',
      url: '/api/gamma/v1beta/models/deep:streamGenerateContent?alt=sse',
      headers: keyHeaders(key),
      payload: { contents: 'hi' },
    });
    expect(relayedStream.statusCode).toBe(200);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    const records = await usageRecords(gateway, key);
    expect(records.map((record) => record.status).sort()).toEqual(['failed', 'failed', 'succeeded', 'succeeded']);
    expect(records.every((record) => record.usdCost <= 1)).toBe(true);
  });
});
