import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { usageRecords, type UsageRecordBody } from '../support/http-helpers.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

describe('a client that disconnects mid-stream', () => {
  let fake: FakeServer;
  let gateway: TestGateway;
  let address: string;
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    fake = await startOpenAiFake();
    gateway = await startTestGateway({
      upstreams: [fake],
      logLines,
      configText: [
        'providers:',
        fakeProviderYaml('fake', 'openai', fake),
        '  sandbox: { protocol: sandbox }',
        'models:',
        '  - id: slow',
        '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
        '    providers: [{ provider: fake, model: fake-slow }]',
        '  - id: slow-start',
        '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
        '    providers: [{ provider: fake, model: fake-slow-start }]',
      ].join('\n'),
    });
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const records = (key: string) => usageRecords(gateway, key);

  async function leaveAfterFirstChunk(key: string, path: string, body: object): Promise<void> {
    const controller = new AbortController();
    const response = await request(`${address}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    expect(response.statusCode).toBe(200);
    for await (const _chunk of response.body) break;
    controller.abort();
  }

  async function settledRecord(key: string): Promise<UsageRecordBody> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const [record] = await records(key);
      if (record) return record;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the generation was never settled');
  }

  const words = 'one two three four five six';
  // "Echo:" and six words: 7 completion tokens, 6 prompt tokens, at 1 and 2 USD per million.
  const fullCost = 6 * 1000 + 7 * 2000;

  for (const [surface, path, body] of [
    [
      'alpha relay',
      '/api/alpha/v1/chat/completions',
      { model: 'slow', messages: [{ role: 'user', content: words }], stream: true },
    ],
    ['native translation', '/api/v1/text/completions', { model: 'slow', messages: [{ role: 'user', content: words }] }],
  ] as const) {
    it(`is billed in full, as aborted, after the upstream finished (${surface})`, async () => {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      await leaveAfterFirstChunk(key, path, body);
      // The upstream takes about 1.4 s more to finish; the gateway keeps reading it.
      const record = await settledRecord(key);
      expect(record).toMatchObject({ status: 'aborted', usage: { promptTokens: 6, completionTokens: 7 } });
      expect(Math.round(record.usdCost * 1e9)).toBe(fullCost);
      const balance = (
        await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: { 'x-api-key': key } })
      ).json<{ creditBalance: number }>();
      expect(Math.round(balance.creditBalance * 1e9)).toBe(1e9 - fullCost);
      // The answer never finished, so its request line cannot carry the record: the record is logged once, on
      // a line of its own, within the line's grace of a second.
      const linesOf = () =>
        logLines.filter(
          (line) => (line.generation as { generationId?: string } | undefined)?.generationId === record.id,
        );
      await vi.waitFor(() => expect(linesOf()).toHaveLength(1), { timeout: 3_000, interval: 50 });
      expect(linesOf()[0]).toMatchObject({
        msg: 'generation recorded',
        event: 'generation',
        generation: { status: 'aborted', model: 'slow' },
      });
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect(linesOf()).toHaveLength(1);
    });
  }

  for (const [surface, path, body] of [
    [
      'alpha, streamed',
      '/api/alpha/v1/chat/completions',
      { model: 'slow-start', messages: [{ role: 'user', content: words }], stream: true },
    ],
    [
      'alpha, not streamed',
      '/api/alpha/v1/chat/completions',
      { model: 'slow-start', messages: [{ role: 'user', content: words }], stream: false },
    ],
    [
      'gamma JSON-array stream, translated',
      '/api/gamma/v1beta/models/slow-start:streamGenerateContent',
      { contents: words },
    ],
  ] as const) {
    it(`is billed in full when it leaves before the upstream's first byte (${surface})`, async () => {
      const { key } = await gateway.createFundedKey({ credits: 1 });
      const controller = new AbortController();
      const pending = request(`${address}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify(body),
        signal: controller.signal,
      }).catch((error: unknown) => error);
      setTimeout(() => controller.abort(), 100);
      await pending;
      const record = await settledRecord(key);
      expect(record).toMatchObject({ status: 'aborted', usage: { promptTokens: 6, completionTokens: 7 } });
      expect(Math.round(record.usdCost * 1e9)).toBe(fullCost);
      expect(gateway.gateway.core.work.size).toBe(0);
    });
  }
});
