import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startRunawayUpstream, type RunawayUpstream } from '../fakes/runaway-upstream.ts';
import { usageRecords, type UsageRecordBody } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/** The output limit every request sends; an upstream that honours it writes at most this many words. */
const maxTokens = 5;
/** At 1000 USD per million output tokens and free input, the hold is the output limit's cost: 0.005 USD. */
const holdUsd = maxTokens * 0.001;
/** Far longer than any test here waits: an upstream still read after a client left is read until it. */
const providerTimeoutMs = 120_000;

type Upstream = 'openai' | 'anthropic' | 'gemini';
const upstreams: Upstream[] = ['openai', 'anthropic', 'gemini'];

interface Surface {
  name: string;
  /** The upstream protocol this surface relays as it comes; any other is translated. */
  relays: Upstream | undefined;
  path: (model: string) => string;
  body: (model: string) => object;
  /** The client's whole answer ends as this surface ends an answer cut by the output limit. */
  expectLengthFinish: (text: string) => void;
  /** The words of output the answer delivered, where its events repeat them (a Response's closing events do). */
  deliveredWords?: (text: string) => number;
}

const prompt = [{ role: 'user', content: 'go' }];

/** Words of output in an answer's text (the runaway upstream writes one word per event). */
const deliveredWords = (text: string) => text.match(/word /g)?.length ?? 0;

/** Every `data:` line of an event stream is whole JSON (or the `[DONE]` terminator): no half event was sent. */
function dataOf(text: string): unknown[] {
  return text
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)) as unknown);
}

const streamingSurfaces: Surface[] = [
  {
    name: 'alpha chat completions',
    relays: 'openai',
    path: () => '/api/alpha/v1/chat/completions',
    body: (model) => ({ model, messages: prompt, max_tokens: maxTokens, stream: true }),
    expectLengthFinish: (text) => {
      const chunks = dataOf(text) as Array<{ choices?: unknown[]; usage?: unknown }>;
      expect(chunks.filter((chunk) => (chunk.choices ?? []).length > 0).at(-1)).toMatchObject({
        choices: [{ finish_reason: 'length' }],
      });
      // A translated answer tells its usage after it (the gateway's count: output-limit-usage.test.ts).
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    },
  },
  {
    name: 'alpha responses',
    relays: 'openai',
    path: () => '/api/alpha/v1/responses',
    body: (model) => ({ model, input: 'go', max_output_tokens: maxTokens, stream: true }),
    expectLengthFinish: (text) => {
      expect(dataOf(text).at(-1)).toMatchObject({
        type: 'response.incomplete',
        response: {
          status: 'incomplete',
          incomplete_details: { reason: 'max_output_tokens' },
          // The text delivered before the cut, as the Response's message.
          output: [{ type: 'message', content: [{ type: 'output_text', text: expect.stringMatching(/^(word )+$/) }] }],
        },
      });
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    },
    deliveredWords: (text) =>
      dataOf(text).reduce<number>(
        (words, event) =>
          words +
          (typeof event === 'object' && event !== null && 'type' in event && event.type === 'response.output_text.delta'
            ? deliveredWords(JSON.stringify(event))
            : 0),
        0,
      ),
  },
  {
    name: 'beta messages',
    relays: 'anthropic',
    path: () => '/api/beta/v1/messages',
    body: (model) => ({ model, messages: prompt, max_tokens: maxTokens, stream: true }),
    expectLengthFinish: (text) => {
      const events = dataOf(text);
      expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'max_tokens' } });
      expect(events.at(-1)).toMatchObject({ type: 'message_stop' });
    },
  },
  {
    name: 'gamma streamGenerateContent (SSE)',
    relays: 'gemini',
    path: (model) => `/api/gamma/v1beta/models/${model}:streamGenerateContent?alt=sse`,
    body: () => ({ contents: 'go', generationConfig: { maxOutputTokens: maxTokens } }),
    expectLengthFinish: (text) => {
      expect(dataOf(text).at(-1)).toMatchObject({ candidates: [{ finishReason: 'MAX_TOKENS' }] });
    },
  },
  {
    name: 'gamma streamGenerateContent (JSON array)',
    relays: 'gemini',
    path: (model) => `/api/gamma/v1beta/models/${model}:streamGenerateContent`,
    body: () => ({ contents: 'go', generationConfig: { maxOutputTokens: maxTokens } }),
    expectLengthFinish: (text) => {
      const chunks = JSON.parse(text) as unknown[];
      expect(chunks.at(-1)).toMatchObject({ candidates: [{ finishReason: 'MAX_TOKENS' }] });
    },
  },
  {
    name: 'native text completions',
    relays: undefined,
    path: () => '/api/v1/text/completions',
    body: (model) => ({ model, messages: prompt, maxTokens }),
    expectLengthFinish: (text) => {
      expect(dataOf(text).at(-1)).toMatchObject({ finishReason: 'length' });
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    },
  },
];

const wholeSurfaces: Surface[] = [
  {
    name: 'alpha chat completions',
    relays: 'openai',
    path: () => '/api/alpha/v1/chat/completions',
    body: (model) => ({ model, messages: prompt, max_tokens: maxTokens }),
    expectLengthFinish: (text) => expect(JSON.parse(text)).toMatchObject({ choices: [{ finish_reason: 'length' }] }),
  },
  {
    name: 'alpha responses',
    relays: 'openai',
    path: () => '/api/alpha/v1/responses',
    body: (model) => ({ model, input: 'go', max_output_tokens: maxTokens }),
    expectLengthFinish: (text) =>
      expect(JSON.parse(text)).toMatchObject({
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
      }),
  },
  {
    name: 'beta messages',
    relays: 'anthropic',
    path: () => '/api/beta/v1/messages',
    body: (model) => ({ model, messages: prompt, max_tokens: maxTokens }),
    expectLengthFinish: (text) => expect(JSON.parse(text)).toMatchObject({ stop_reason: 'max_tokens' }),
  },
  {
    name: 'gamma generateContent',
    relays: 'gemini',
    path: (model) => `/api/gamma/v1beta/models/${model}:generateContent`,
    body: () => ({ contents: 'go', generationConfig: { maxOutputTokens: maxTokens } }),
    expectLengthFinish: (text) =>
      expect(JSON.parse(text)).toMatchObject({ candidates: [{ finishReason: 'MAX_TOKENS' }] }),
  },
];

describe('the held output limit, against an upstream that ignores it', () => {
  let upstream: RunawayUpstream;
  let gateway: TestGateway;
  let address: string;

  beforeAll(async () => {
    upstream = await startRunawayUpstream();
    const provider = (name: Upstream, basePath: string) =>
      `  ${name}: { protocol: ${name}, baseUrl: "${upstream.url}${basePath}", apiKey: runaway-key, timeoutMs: ${providerTimeoutMs} }`;
    const model = (id: string, provider: string, upstreamModel: string) =>
      `  - id: ${id}\n    pricing: { inputPerMTok: 0, outputPerMTok: 1000 }\n    providers: [{ provider: ${provider}, model: ${upstreamModel} }]`;
    gateway = await startTestGateway({
      upstreams: [upstream],
      configText: [
        'providers:',
        provider('openai', '/v1'),
        provider('anthropic', '/v1'),
        provider('gemini', '/v1beta'),
        '  sandbox: { protocol: sandbox }',
        'models:',
        model('via-openai', 'openai', 'runaway-chat'),
        model('via-anthropic', 'anthropic', 'runaway-messages'),
        model('via-gemini', 'gemini', 'runaway-content'),
        model('via-sandbox', 'sandbox', 'echo'),
      ].join('\n'),
    });
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function post(key: string, path: string, { body, signal }: { body: object; signal?: AbortSignal }) {
    return request(`${address}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
      signal,
    });
  }

  async function onlyRecord(key: string): Promise<UsageRecordBody> {
    let records: UsageRecordBody[] = [];
    await vi.waitFor(
      async () => {
        records = await usageRecords(gateway, key);
        expect(records).toHaveLength(1);
      },
      { timeout: 10_000, interval: 50 },
    );
    return records[0]!;
  }

  /** The upstream exchange the request made was closed by the gateway before the upstream ended it. */
  async function expectUpstreamClosed(exchanges: number): Promise<void> {
    await vi.waitFor(() => expect(upstream.exchanges[exchanges]?.closedEarly).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
  }

  const charged = (record: UsageRecordBody) => Math.round(record.usdCost * 1e9);
  const holdNanos = Math.round(holdUsd * 1e9);

  for (const surface of streamingSurfaces) {
    for (const protocol of upstreams) {
      const how = surface.relays === protocol ? 'relayed' : 'translated';
      const model = `via-${protocol}`;

      it(`${surface.name} -> ${protocol} (${how}): the stream ends as a length finish within the limit, the upstream is closed, the charge is at most the hold`, async () => {
        const { key } = await gateway.createFundedKey({ credits: 1 });
        const before = upstream.exchanges.length;
        const response = await post(key, surface.path(model), { body: surface.body(model) });
        expect(response.statusCode).toBe(200);
        const text = await response.body.text();
        surface.expectLengthFinish(text);
        // The limit, and at most the one event that reached it.
        expect((surface.deliveredWords ?? deliveredWords)(text)).toBeLessThanOrEqual(maxTokens + 1);
        await expectUpstreamClosed(before);
        const record = await onlyRecord(key);
        expect(record.status).toBe('succeeded');
        expect(record.usage!.completionTokens).toBeLessThanOrEqual(maxTokens + 1);
        expect(charged(record)).toBeLessThanOrEqual(holdNanos);
      });

      it(`${surface.name} -> ${protocol} (${how}): after the client leaves, the upstream is read only to the limit`, async () => {
        const { key } = await gateway.createFundedKey({ credits: 1 });
        const before = upstream.exchanges.length;
        const controller = new AbortController();
        const response = await post(key, surface.path(model), { body: surface.body(model), signal: controller.signal });
        expect(response.statusCode).toBe(200);
        for await (const _chunk of response.body) break;
        controller.abort();
        // Closed at the limit, not when the upstream's time-out (two minutes) cuts it.
        await expectUpstreamClosed(before);
        const record = await onlyRecord(key);
        expect(record.status).toBe('aborted');
        expect(record.usage!.completionTokens).toBeLessThanOrEqual(maxTokens + 1);
        expect(charged(record)).toBeLessThanOrEqual(holdNanos);
      });
    }
  }

  for (const surface of wholeSurfaces) {
    for (const protocol of upstreams) {
      const how = surface.relays === protocol ? 'relayed' : 'translated';
      const model = `via-${protocol}`;
      it(`${surface.name} -> ${protocol} (${how}), not streamed: an over-long answer is a length finish charged at most the hold`, async () => {
        const { key } = await gateway.createFundedKey({ credits: 1 });
        const response = await post(key, surface.path(model), { body: surface.body(model) });
        expect(response.statusCode).toBe(200);
        surface.expectLengthFinish(await response.body.text());
        const record = await onlyRecord(key);
        expect(record.status).toBe('succeeded');
        expect(charged(record)).toBeLessThanOrEqual(holdNanos);
      });
    }
  }

  it('the sandbox, which honours the limit, ends at it as a length finish charged at most the hold', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const long = 'one two three four five six seven eight nine ten eleven twelve';
    const response = await post(key, '/api/v1/text/completions', {
      body: {
        model: 'via-sandbox',
        messages: [{ role: 'user', content: long }],
        maxTokens,
      },
    });
    const text = await response.body.text();
    expect(dataOf(text).at(-1)).toMatchObject({ finishReason: 'length' });
    const record = await onlyRecord(key);
    expect(record.usage!.completionTokens).toBeLessThanOrEqual(maxTokens);
    expect(charged(record)).toBeLessThanOrEqual(holdNanos);
  });
});
