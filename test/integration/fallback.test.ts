import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { heldNanosOf } from '../support/http-helpers.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

describe('fallback between provider rows', () => {
  let fake: FakeServer;
  let gateway: TestGateway;

  beforeAll(async () => {
    fake = await startOpenAiFake();
    const rows = (...entries: string[]) =>
      entries.map((entry, index) => `      - { ${entry}, priority: ${index + 1} }`).join('\n');
    const model = (id: string, ...entries: string[]) =>
      `  - id: ${id}\n    pricing: { inputPerMTok: 1, outputPerMTok: 2 }\n    providers:\n${rows(...entries)}\n`;
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        fakeProviderYaml('fake', 'openai', fake),
        '  down: { protocol: openai, baseUrl: "http://127.0.0.1:9/v1", apiKey: sk-x, timeoutMs: 2000 }',
        '  sandbox: { protocol: sandbox }',
        'models:',
        model('overloaded-then-sandbox', 'provider: fake, model: fake-error-503', 'provider: sandbox, model: echo'),
        model('limited-then-fake', 'provider: fake, model: fake-error-429', 'provider: fake, model: gpt-4o-mini'),
        model('down-then-fake', 'provider: down, model: x', 'provider: fake, model: gpt-4o-mini'),
        model('rejected-then-sandbox', 'provider: fake, model: fake-error-400', 'provider: sandbox, model: echo'),
        model('all-down', 'provider: down, model: x', 'provider: fake, model: fake-error-500'),
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const chat = (key: string, model: string, extra: Record<string, unknown> = {}) =>
    gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': key },
      payload: { model, messages: [{ role: 'user', content: 'fall back' }], ...extra },
    });
  const records = async (key: string) =>
    (await gateway.request({ method: 'GET', url: '/api/compat/v1/usage', headers: { 'x-api-key': key } })).json<{
      total: number;
      results: Array<{ status: string }>;
    }>();

  it('moves to the next row on 5xx, 429 and an unreachable upstream, settling once', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const overloaded = await chat(key, 'overloaded-then-sandbox');
    expect(overloaded.statusCode).toBe(200);
    expect(overloaded.json()).toMatchObject({ choices: [{ message: { content: 'fall back' } }] });
    const limited = await chat(key, 'limited-then-fake', { stream: true });
    expect(limited.statusCode).toBe(200);
    expect(limited.body).toContain('"content":"Echo:"');
    expect(limited.body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect((await chat(key, 'down-then-fake')).json()).toMatchObject({
      choices: [{ message: { content: 'Echo: fall back' } }],
    });
    const usage = await records(key);
    expect(usage.total).toBe(3);
    expect(usage.results.map((record) => record.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });

  it('does not fall back on a client error, nor when the client asks it not to', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const rejected = await chat(key, 'rejected-then-sandbox');
    expect(rejected.statusCode).toBe(400);
    expect(rejected.json()).toMatchObject({ error: { message: 'The fake failed with 400' } });
    const pinned = await chat(key, 'overloaded-then-sandbox', { provider: { allow_fallbacks: false } });
    expect(pinned.statusCode).toBe(503);
    expect(fake.requests.at(-1)!.body).toMatchObject({ provider: { allow_fallbacks: false } });
    const usage = await records(key);
    expect(usage.results.map((record) => record.status)).toEqual(['failed', 'failed']);
  });

  it("relays the last row's error when every row fails, its 500 kept, with the provider's body", async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await chat(key, 'all-down');
    expect(response.statusCode).toBe(500);
    expect(response.headers['x-upstream-status']).toBe('500');
    expect(response.json()).toMatchObject({ error: { type: 'server_error' } });
    expect(
      (await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: { 'x-api-key': key } })).json(),
    ).toEqual({ creditBalance: 1 });
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });
});
