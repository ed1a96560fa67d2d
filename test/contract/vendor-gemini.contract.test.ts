import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../src/domain/chat.ts';
import { UpstreamHttpError } from '../../src/domain/upstream-failure.ts';
import { createGeminiAdapter } from '../../src/providers/gemini/gemini-adapter.ts';
import type { ProviderTarget, RelayOperation, ServedModel } from '../../src/providers/provider-adapter.ts';
import { servedAs } from '../../src/providers/shared/served-model.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeGeminiKey, startGeminiFake } from '../fakes/gemini-fake.ts';
import {
  answerText,
  askFake,
  chatRecorded,
  deltaText,
  jsonArrayEvents,
  meteredText,
  relayRecorded,
  replayed,
  servedEvents,
  shapeDifferences,
  sseEvents,
  streamDifferences,
  type VendorFixture,
  vendorFixture,
  type WrittenEvent,
} from '../support/vendor-fixtures.ts';

/**
 * Gemini answers Google recorded from its API and documented ones (test/fixtures/vendor/gemini) replayed from a
 * loopback upstream against the Gemini adapter and its relay meter, and the Gemini fake held to their shapes.
 */
const fixture = (name: string) => vendorFixture('gemini', name);
const http = new UpstreamHttp();
const adapter = createGeminiAdapter(http);
afterAll(() => http.close());

const onGemini = <T>(recorded: VendorFixture, call: (target: ProviderTarget) => Promise<T>) =>
  replayed(recorded, '/v1beta', call);

const chat = (recorded: VendorFixture, extra: Partial<ChatRequest> = {}) => {
  const question = { role: 'user', content: 'why is the sky blue?' } as const;
  const request = { upstreamModel: 'gemini-2.0-flash', messages: [question], ...extra };
  return chatRecorded(adapter.text!, recorded, { basePath: '/v1beta', request });
};

const relayed = (recorded: VendorFixture, operation: RelayOperation, served?: ServedModel) =>
  relayRecorded(adapter.text!, recorded, {
    operation,
    basePath: '/v1beta',
    upstreamModel: 'gemini-2.0-flash',
    ...(served ? { servedAs: served } : {}),
  });

describe('Gemini generateContent replayed from recorded answers', () => {
  it('streams the recorded SSE answer: text, a length finish from MAX_TOKENS, the last usageMetadata', async () => {
    const { result: events, sent } = await chat(fixture('stream-generate-content-sse'), { maxTokens: 20 });
    expect(sent[0]?.path).toBe('/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
    expect(deltaText(events)).toBe(
      "The sky is blue because of a phenomenon called **Rayleigh scattering**. Here's a breakdown:",
    );
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      finishReason: { unified: 'length', raw: 'MAX_TOKENS' },
      usage: { inputTokens: 6, outputTokens: 20 },
    });
  });

  it('streams the recorded function call whole, and its STOP as a tool-calls finish', async () => {
    const { result: events } = await chat(fixture('stream-generate-content-sse-function-call'), {
      tools: [{ name: 'customDivide', description: 'Custom divide function' }],
    });
    expect(events.filter((event) => event.type === 'tool-call-start')).toEqual([
      { type: 'tool-call-start', index: 0, id: expect.any(String), name: 'customDivide' },
    ]);
    const args = events.flatMap((event) => (event.type === 'tool-call-delta' ? [event.arguments] : []));
    expect(args.map((text) => JSON.parse(text))).toEqual([{ denominator: 2, numerator: 100 }]);
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'STOP' },
      usage: { inputTokens: 21, outputTokens: 6 },
    });
  });

  it('relays the recorded answer whole and meters its usage', async () => {
    const recorded = fixture('generate-content');
    const { result } = await relayed(recorded, 'generate-content');
    expect(JSON.parse(result.relayed)).toEqual(recorded.response.body);
    expect(result.reading).toMatchObject({ complete: true, usage: { inputTokens: 6, outputTokens: 353 } });
  });

  it('relays the recorded function calls and counts them as output', async () => {
    const { result } = await relayed(fixture('generate-content-function-call'), 'generate-content');
    expect(result.reading).toMatchObject({ complete: true, usage: { inputTokens: 21, outputTokens: 6 } });
    expect(meteredText(result.reading)).toBe('print{"color":"blue","text":"hello"}beep{}');
  });

  for (const [name, operation] of [
    ['stream-generate-content-sse', 'stream-generate-content-sse'],
    ['stream-generate-content-json-array', 'stream-generate-content-json'],
  ] as const) {
    it(`relays the ${operation} stream unchanged and reads the usage of its last element`, async () => {
      const recorded = fixture(name);
      const { result } = await relayed(recorded, operation);
      expect(result.relayed).toBe(answerText(recorded));
      expect(result.reading).toMatchObject({
        complete: true,
        sawError: false,
        usage: { inputTokens: 6, outputTokens: 20 },
      });
      expect(meteredText(result.reading)).toBe(
        "The sky is blue because of a phenomenon called **Rayleigh scattering**. Here's a breakdown:",
      );
    });
  }
});

describe('Gemini answers relayed naming the catalog model', () => {
  for (const [name, operation, events] of [
    ['stream-generate-content-sse', 'stream-generate-content-sse', sseEvents],
    ['stream-generate-content-json-array', 'stream-generate-content-json', jsonArrayEvents],
  ] as const) {
    it(`renames modelVersion in every element of ${name}, and passes the rest as Google sent it`, async () => {
      const recorded = fixture(name);
      const served = servedAs(operation, 'catalog-model');
      const { result } = await relayed(recorded, operation, served);
      const { expected, relayed: sent } = servedEvents(answerText(recorded), result.relayed, { events, served });
      expect(sent).toEqual(expected);
      expect(result.relayed).toContain('"catalog-model"');
    });
  }
});

describe('a Gemini error replayed as Google recorded it', () => {
  it("raises the recorded 400 with Google's own error body", async () => {
    const recorded = fixture('error-api-key-invalid');
    const error = await chat(recorded).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ status: 400 });
    expect(JSON.parse(error instanceof UpstreamHttpError ? error.body : '')).toEqual(recorded.response.body);
  });
});

describe('Gemini embeddings replayed from the documentation', () => {
  it('sends the documented batchEmbedContents request and takes one vector per request, in order', async () => {
    const recorded = fixture('batch-embed-contents');
    const texts = [
      'What is the meaning of life?',
      'How much wood would a woodchuck chuck?',
      'How does the brain work?',
    ];
    const { result, sent } = await onGemini(recorded, (target) =>
      adapter.embeddings!.embed(
        {
          upstreamModel: 'gemini-embedding-001',
          inputs: texts.map((text) => ({ parts: [{ type: 'text', text }] })),
        },
        { target },
      ),
    );
    expect(sent.map(({ path, body }) => ({ path, body }))).toEqual([
      { path: recorded.request.path, body: recorded.request.body },
    ]);
    expect(result).toEqual({
      vectors: [
        [0.0123, -0.0456, 0.0789],
        [0.0211, 0.0034, -0.0598],
        [-0.0142, 0.0671, 0.0005],
      ],
      inputTokens: undefined,
    });
  });
});

/** A streamed answer's kind: the one that ends it (a finishReason) or one before. */
function chunkKind(event: WrittenEvent): string {
  return /"finishReason"/.test(event.data) ? 'finishing' : 'partial';
}

describe('the Gemini fake answers as Google does', () => {
  let fake: FakeServer;
  beforeAll(async () => {
    fake = await startGeminiFake();
  });
  afterAll(() => fake.close());
  const ask = (recorded: VendorFixture) => askFake(fake, recorded, { headers: { 'x-goog-api-key': fakeGeminiKey } });

  /** What the recordings carry that an answer may leave out, each with its reason. */
  const rules = {
    optional: {
      '$.candidates[].avgLogprobs': 'sent by some models only',
      '$.usageMetadata.promptTokensDetails': 'a per-modality breakdown the UsageMetadata reference makes optional',
      '$.usageMetadata.candidatesTokensDetails': 'a per-modality breakdown the UsageMetadata reference makes optional',
    },
    opaque: ['$.candidates[].content.parts[].functionCall.args'],
  };

  for (const name of ['generate-content', 'generate-content-function-call', 'embed-content', 'batch-embed-contents']) {
    it(`answers as the recorded or documented ${name} does`, async () => {
      const recorded = fixture(name);
      const answer = await ask(recorded);
      expect(answer.status).toBe(200);
      expect(shapeDifferences([recorded.response.body], [JSON.parse(answer.text)], rules)).toEqual([]);
    });
  }

  it('refuses a wrong key as Google does', async () => {
    const recorded = fixture('error-api-key-invalid');
    const answer = await askFake(fake, recorded, { headers: { 'x-goog-api-key': 'not-the-key' } });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toEqual(recorded.response.body);
  });

  for (const [name, events] of [
    ['stream-generate-content-sse', sseEvents],
    ['stream-generate-content-sse-function-call', sseEvents],
    ['stream-generate-content-json-array', jsonArrayEvents],
  ] as const) {
    it(`streams as the recorded ${name} does: the finishing chunk last, and the chunks' fields`, async () => {
      const recorded = fixture(name);
      const answer = await ask(recorded);
      expect(answer.contentType).toContain(recorded.response.contentType);
      expect(streamDifferences(answerText(recorded), answer.text, { events, kindOf: chunkKind, rules })).toEqual([]);
    });
  }
});
