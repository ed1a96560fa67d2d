import { GoogleGenAI, type Part } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/domain/tokenizer.ts';
import { startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startGeminiFake } from '../fakes/gemini-fake.ts';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { heldNanosOf, usageRecords } from '../support/http-helpers.ts';
import { alphaEmbedding, betaEmbedding, embeddingModelsYaml, gammaEmbedding } from '../support/embedding-models.ts';
import { isoVideoFile, pdfFile, pngBase64, wavFile } from '../support/media-fixtures.ts';
import { startMediaHost } from '../support/media-host.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * Embeddings on the alpha, beta and gamma surfaces against the OpenAI, Gemini and BytePlus ModelArk fakes:
 * answers through the official SDKs, every part type of the beta extension, refusals before any hold, record or
 * upstream call (each limit and refused combination is claimed by itself in test/unit/request-rules.test.ts),
 * and exact bills.
 */
const catalog = `${embeddingModelsYaml}
  - id: failing-embed
    outputModalities: [embedding]
    pricing: { inputPerMTok: 1 }
    providers: [{ provider: openai, model: fake-error-429 }]
  - id: fallback-embed
    outputModalities: [embedding]
    pricing: { inputPerMTok: 1 }
    providers:
      - { provider: openai, model: fake-error-503, priority: 1 }
      - { provider: gemini, model: gemini-embedding-001, priority: 2 }
  - id: malformed-embed
    outputModalities: [embedding]
    pricing: { inputPerMTok: 1 }
    providers: [{ provider: openai, model: fake-null-answer }]
  - id: malformed-fallback-embed
    outputModalities: [embedding]
    pricing: { inputPerMTok: 1 }
    providers:
      - { provider: openai, model: fake-null-answer, priority: 1 }
      - { provider: gemini, model: gemini-embedding-001, priority: 2 }
  - id: sized-fallback-embed
    outputModalities: [embedding]
    pricing: { inputPerMTok: 1 }
    providers:
      - provider: openai
        model: fake-error-503
        priority: 1
        capabilities: { params: { dimensions: { type: int, min: 1, max: 1536 } } }
      - { provider: gemini, model: gemini-embedding-001, priority: 2 }
`;

const nanos = (usd: number) => Math.round(usd * 1e9);
const base64 = (bytes: Buffer) => bytes.toString('base64');

/** Media that inputs name by URL; a low sample rate keeps long WAV files under the fetch limit of the test configuration. */
const png = Buffer.from(pngBase64, 'base64');
const speech = wavFile(3, 100);
const media = await startMediaHost({
  '/photo.png': { contentType: 'image/png', body: png },
  '/photo': { contentType: 'application/octet-stream', body: png },
  '/speech.wav': { body: speech },
  '/moved': { redirect: '/speech.wav' },
  '/long.wav': { contentType: 'audio/wav', body: wavFile(181, 100) },
  '/song.mp3': { contentType: 'audio/mpeg', body: Buffer.from('ID3 not a wave file') },
  '/huge.wav': { contentType: 'audio/wav', body: wavFile(100, 1_000) },
  '/gone': { status: 410 },
  // Each under the per-file limit of the test configuration, the two together over its per-request limit.
  '/large-a.png': { contentType: 'image/png', body: Buffer.concat([png, Buffer.alloc(40_000)]) },
  '/large-b.png': { contentType: 'image/png', body: Buffer.concat([png, Buffer.alloc(40_000)]) },
});
const hosted = (path: string) => `${media.url}${path}`;
const remoteMediaYaml =
  'remoteMedia: { allowPrivateAddresses: true, maxBytes: 65536, maxRequestBytes: 65536, timeoutMs: 5000 }';

describe('embeddings', () => {
  let openai: FakeServer;
  let gemini: FakeServer;
  let ark: FakeServer;
  let gateway: TestGateway;
  let address: string;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    [openai, gemini, ark] = await Promise.all([startOpenAiFake(), startGeminiFake(), startArkFake()]);
    gateway = await startTestGateway({
      upstreams: [openai, gemini, ark, media],
      configText: [
        'providers:',
        fakeProviderYaml('openai', 'openai', openai),
        fakeProviderYaml('gemini', 'gemini', gemini),
        fakeProviderYaml('ark', 'ark', ark),
        'models:',
        catalog,
        remoteMediaYaml,
      ].join('\n'),
    });
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  });
  beforeEach(async () => {
    ({ key, accountId } = await gateway.createFundedKey({ credits: 1 }));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const post = (url: string, payload: object) =>
    gateway.request({ method: 'POST', url, headers: { 'x-api-key': key }, payload });
  const balance = async () =>
    (await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: { 'x-api-key': key } })).json<{
      creditBalance: number;
    }>().creditBalance;
  const records = () =>
    usageRecords(gateway, key) as Promise<
      Array<{ status: string; usdCost: number; modality: string; usage?: Record<string, unknown> }>
    >;

  describe('through the official SDKs', () => {
    it('openai embeddings.create with encoding_format float, single and batch, billed on the reported tokens', async () => {
      const client = new OpenAI({ apiKey: key, baseURL: `${address}/api/alpha/v1`, maxRetries: 0 });
      const single = await client.embeddings.create({
        model: 'text-embed',
        input: 'alpha beta',
        encoding_format: 'float',
      });
      expect(single.data).toHaveLength(1);
      expect(single.data[0]!.embedding).toHaveLength(8);
      expect(single.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
      const batch = await client.embeddings.create({
        model: 'text-embed',
        input: ['one', 'two words', 'three more words'],
        encoding_format: 'float',
        dimensions: 4,
      });
      expect(batch.data.map((item) => [item.index, item.embedding.length])).toEqual([
        [0, 4],
        [1, 4],
        [2, 4],
      ]);
      expect(batch.model).toBe('text-embed');
      // The same text gives the same vector, whichever position it has in a batch.
      const again = await client.embeddings.create({
        model: 'text-embed',
        input: ['three more words', 'one'],
        encoding_format: 'float',
        dimensions: 4,
      });
      expect(again.data[0]!.embedding).toEqual(batch.data[2]!.embedding);
      expect(openai.requests.at(-1)!.body).toMatchObject({
        model: 'text-embedding-3-small',
        encoding_format: 'float',
        dimensions: 4,
      });

      const [third, second, first] = await records();
      expect([first, second, third].map((record) => record!.usdCost * 1e9)).toEqual(
        [2000, 6000, 4000].map((cost) => expect.closeTo(cost, 3)),
      );
      expect(first).toMatchObject({
        status: 'succeeded',
        modality: 'text',
        usage: { promptTokens: 2, totalTokens: 2 },
      });
      expect(nanos(await balance())).toBe(nanos(1) - 12_000);
    });

    it('openai with its defaults (the SDK asks for base64 and decodes it): the same vectors as float, in float32', async () => {
      const client = new OpenAI({ apiKey: key, baseURL: `${address}/api/alpha/v1`, maxRetries: 0 });
      const asFloats = await client.embeddings.create({ model: 'text-embed', input: 'x', encoding_format: 'float' });
      const byDefault = await client.embeddings.create({ model: 'text-embed', input: 'x' });
      expect(byDefault.data[0]!.embedding).toEqual(asFloats.data[0]!.embedding.map((value) => Math.fround(value)));
      const raw = await gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/embeddings',
        headers: { authorization: `Bearer ${key}` },
        payload: { model: 'text-embed', input: 'x', encoding_format: 'base64' },
      });
      const encoded = raw.json<{ data: Array<{ embedding: string }> }>().data[0]!.embedding;
      const bytes = Buffer.from(encoded, 'base64');
      expect(bytes.length).toBe(asFloats.data[0]!.embedding.length * 4);
      expect(bytes.readFloatLE(0)).toBe(Math.fround(asFloats.data[0]!.embedding[0]!));
      const refused = await gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/embeddings',
        headers: { authorization: `Bearer ${key}` },
        payload: { model: 'text-embed', input: 'x', encoding_format: 'int8' },
      });
      expect(refused.statusCode).toBe(400);
      expect(refused.json<{ errors: string[] }>().errors[0]).toContain('encoding_format "int8" is not supported');
    });

    it('@google/genai embedContent, one content and several, through a Gemini model and an OpenAI one', async () => {
      const client = new GoogleGenAI({
        apiKey: key,
        httpOptions: { baseUrl: `${address}/api/gamma`, retryOptions: { attempts: 1 } },
      });
      const one = await client.models.embedContent({ model: 'gemini-embed-1', contents: 'hello world' });
      expect(one.embeddings).toHaveLength(1);
      expect(one.embeddings![0]!.values).toHaveLength(8);
      expect(gemini.requests.at(-1)!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
      const several = await client.models.embedContent({
        model: 'text-embed',
        contents: ['first text', 'second text', 'third'],
        config: { outputDimensionality: 3 },
      });
      expect(several.embeddings!.map((embedding) => embedding.values!.length)).toEqual([3, 3, 3]);
      expect(openai.requests.at(-1)!.body).toMatchObject({
        input: ['first text', 'second text', 'third'],
        dimensions: 3,
      });

      const [viaOpenAi, viaGemini] = await records();
      // Gemini reports no usage for embeddings: the gateway counts the text and says so.
      expect(viaGemini).toMatchObject({
        status: 'succeeded',
        usage: { promptTokens: countTextTokens('hello world'), countedByGateway: true },
      });
      expect(Math.round(viaGemini!.usdCost * 1e9)).toBe(countTextTokens('hello world') * 1000);
      expect(Math.round(viaOpenAi!.usdCost * 1e9)).toBe(5 * 1000);
    });
  });

  it('@google/genai embedContent with inline media, to a Gemini multimodal model as is and translated for BytePlus ModelArk', async () => {
    const client = new GoogleGenAI({
      apiKey: key,
      httpOptions: { baseUrl: `${address}/api/gamma`, retryOptions: { attempts: 1 } },
    });
    const contents = [
      { parts: [{ text: 'a cat' }, { inlineData: { mimeType: 'image/png', data: pngBase64 } }] },
      { parts: [{ inlineData: { mimeType: 'audio/wav', data: base64(wavFile(2)) } }] },
    ];
    const viaGemini = await client.models.embedContent({
      model: 'gemini-embed-2',
      contents,
      config: { outputDimensionality: 128 },
    });
    expect(viaGemini.embeddings!.map((embedding) => embedding.values!.length)).toEqual([128, 128]);
    const sent = gemini.requests.at(-1)!.body as { requests: Array<{ content: { parts: unknown[] } }> };
    expect(sent.requests.map((request) => request.content.parts)).toEqual(contents.map((content) => content.parts));

    const viaArk = await client.models.embedContent({ model: 'vision-embed', contents: [contents[0]!] });
    expect(viaArk.embeddings).toHaveLength(1);
    expect((ark.requests.at(-1)!.body as { input: unknown[] }).input).toEqual([
      { type: 'text', text: 'a cat' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${pngBase64}` } },
    ]);
    const [arkRecord, geminiRecord] = await records();
    expect(geminiRecord!.usage).toMatchObject({ images: 1, audioSeconds: 2, countedByGateway: true });
    expect(Math.round(geminiRecord!.usdCost * 1e9)).toBe(countTextTokens('a cat') * 1000 + 100_000 + 2 * 10_000);
    // ModelArk counts the image in its tokens (the fake: a token per word, 500 per image); no image price is set there.
    expect(arkRecord).toMatchObject({ status: 'succeeded', usage: { promptTokens: 502, images: 1 } });
    expect(Math.round(arkRecord!.usdCost * 1e9)).toBe(502 * 1000);
  });

  describe('the beta extension', () => {
    it('takes every part type of the multimodal model, inline, and bills tokens plus media', async () => {
      const response = await post('/api/beta/v1/embeddings', {
        model: 'gemini-embed-2',
        dimensions: 256,
        input: [
          'plain text',
          {
            content: [
              { type: 'text', text: 'a cat' },
              { type: 'imageBase64', data: pngBase64, mediaType: 'image/png' },
            ],
          },
          { content: [{ type: 'imageBase64', data: `data:image/png;base64,${pngBase64}` }] },
          { content: [{ type: 'audioBase64', data: base64(wavFile(3)), mediaType: 'audio/wav' }] },
          { content: [{ type: 'fileBase64', data: base64(pdfFile) }] },
          { content: [{ type: 'videoBase64', data: base64(isoVideoFile(5)), mediaType: 'video/mp4' }] },
        ],
      });
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json<{
        object: string;
        data: Array<{ index: number; embedding: number[] }>;
        usage: { prompt_tokens: number };
      }>();
      expect(body.data.map((item) => [item.index, item.embedding.length])).toEqual(
        [0, 1, 2, 3, 4, 5].map((index) => [index, 256]),
      );
      const sent = gemini.requests.at(-1)!.body as {
        requests: Array<{
          model: string;
          outputDimensionality: number;
          content: { parts: Part[] };
        }>;
      };
      expect(
        sent.requests.map((request) => request.content.parts.map((part) => part.text ?? part.inlineData?.mimeType)),
      ).toEqual([
        ['plain text'],
        ['a cat', 'image/png'],
        ['image/png'],
        ['audio/wav'],
        ['application/pdf'],
        ['video/mp4'],
      ]);
      expect(
        sent.requests.every(
          (request) => request.model === 'models/gemini-embedding-2-preview' && request.outputDimensionality === 256,
        ),
      ).toBe(true);

      const [record] = await records();
      const tokens = countTextTokens('plain text') + countTextTokens('a cat');
      expect(record).toMatchObject({
        status: 'succeeded',
        usage: { promptTokens: tokens, images: 2, audioSeconds: 3, videoSeconds: 5, files: 1, countedByGateway: true },
      });
      // Tokens at 1 USD per million, 2 images at 0.0001, 3 s of audio at 0.00001, 5 s of video at 0.00002, one PDF at 0.001.
      expect(Math.round(record!.usdCost * 1e9)).toBe(tokens * 1000 + 2 * 100_000 + 3 * 10_000 + 5 * 20_000 + 1_000_000);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    });

    it('takes a MOV video', async () => {
      const response = await post('/api/beta/v1/embeddings', {
        model: 'gemini-embed-2',
        input: [
          {
            content: [{ type: 'videoBase64', data: base64(isoVideoFile(119.5, 'qt  ')), mediaType: 'video/quicktime' }],
          },
        ],
      });
      expect(response.statusCode, response.body).toBe(200);
      expect((await records())[0]!.usage).toMatchObject({ videoSeconds: 119.5 });
    });

    it('fetches images and audio named by URL for a protocol that takes only bytes, and bills them as inline media', async () => {
      const fetched = media.requests.length;
      const response = await post('/api/beta/v1/embeddings', {
        model: 'gemini-embed-2',
        input: [
          {
            content: [
              { type: 'text', text: 'a cat' },
              { type: 'imageUrl', url: hosted('/photo.png') },
            ],
          },
          { content: [{ type: 'imageUrl', url: hosted('/photo') }] },
          { content: [{ type: 'audioUrl', url: hosted('/moved') }] },
        ],
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(
        media.requests
          .slice(fetched)
          .map((request) => request.path)
          .sort(),
      ).toEqual(['/moved', '/photo', '/photo.png', '/speech.wav']);
      const sent = gemini.requests.at(-1)!.body as {
        requests: Array<{ content: { parts: Part[] } }>;
      };
      // The media type is read from the bytes where the server labels them loosely.
      expect(sent.requests.map((request) => request.content.parts)).toEqual([
        [{ text: 'a cat' }, { inlineData: { mimeType: 'image/png', data: pngBase64 } }],
        [{ inlineData: { mimeType: 'image/png', data: pngBase64 } }],
        [{ inlineData: { mimeType: 'audio/wav', data: base64(speech) } }],
      ]);
      const [record] = await records();
      const tokens = countTextTokens('a cat');
      expect(record).toMatchObject({
        status: 'succeeded',
        usage: { promptTokens: tokens, images: 2, audioSeconds: 3 },
      });
      expect(Math.round(record!.usdCost * 1e9)).toBe(tokens * 1000 + 2 * 100_000 + 3 * 10_000);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    });

    it('sends images to BytePlus ModelArk as image_url parts, one fused vector per input, billed on its reported tokens', async () => {
      const response = await post('/api/beta/v1/embeddings', {
        model: 'vision-embed',
        input: [
          {
            content: [
              { type: 'text', text: 'red shoes' },
              { type: 'imageUrl', url: 'https://example.com/shoe.png' },
            ],
          },
          { content: [{ type: 'imageBase64', data: pngBase64, mediaType: 'image/png' }] },
        ],
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json<{ data: unknown[]; usage: { prompt_tokens: number } }>()).toMatchObject({
        data: [{ index: 0 }, { index: 1 }],
        usage: { prompt_tokens: 502 + 500 },
      });
      const [first, second] = ark.requests
        .slice(-2)
        .map((request) => request.body as { input: unknown[]; encoding_format: string });
      const inputs = [first!.input, second!.input].sort((a, b) => b.length - a.length);
      expect(inputs).toEqual([
        [
          { type: 'text', text: 'red shoes' },
          { type: 'image_url', image_url: { url: 'https://example.com/shoe.png' } },
        ],
        [{ type: 'image_url', image_url: { url: `data:image/png;base64,${pngBase64}` } }],
      ]);
      expect(first!.encoding_format).toBe('float');
      const [record] = await records();
      expect(record).toMatchObject({ status: 'succeeded', usage: { promptTokens: 1002, images: 2 } });
      expect(Math.round(record!.usdCost * 1e9)).toBe(1002 * 1000);
    });
  });

  describe('refused before any hold, record or upstream call', () => {
    const image = { type: 'imageBase64', data: pngBase64, mediaType: 'image/png' };
    const [beta, alpha, gamma] = [betaEmbedding, alphaEmbedding, gammaEmbedding];
    const text = { parts: [{ text: 'x' }] };

    // Each limit and refused combination is claimed by itself in test/unit/request-rules.test.ts; here, one
    // refusal per route (beta, alpha, gamma) and those that need a URL fetched, each answered as a 400 envelope
    // with nothing held, recorded or sent.
    const cases: Array<[string, readonly [string, object], RegExp]> = [
      ['seven images', beta('gemini-embed-2', ...Array.from({ length: 7 }, () => image)), /at most 6 images/],
      [
        'audio by URL over 180 s',
        beta('gemini-embed-2', { type: 'audioUrl', url: hosted('/long.wav') }),
        /lasts 181\.0 s; at most 180 s/,
      ],
      [
        'audio by URL that is not WAV',
        beta('gemini-embed-2', { type: 'audioUrl', url: hosted('/song.mp3') }),
        /audio must be audio\/wav, not "audio\/mpeg"/,
      ],
      [
        'audio by URL past the fetch limit',
        beta('gemini-embed-2', { type: 'audioUrl', url: hosted('/huge.wav') }),
        /could not fetch .*huge\.wav: the file is larger than the limit of 65536 bytes/,
      ],
      [
        'an image by URL that is gone',
        beta('gemini-embed-2', { type: 'imageUrl', url: hosted('/gone') }),
        /could not fetch .*: 127\.0\.0\.1:\d+ answered HTTP 410/,
      ],
      [
        'an image by URL that is not http',
        beta('gemini-embed-2', { type: 'imageUrl', url: 'file:///etc/passwd' }),
        /only http and https URLs are fetched/,
      ],
      [
        '129 inputs on alpha',
        alpha({ input: Array.from({ length: 129 }, (_, index) => `text ${index}`) }),
        /at most 128 inputs/,
      ],
      [
        // Each part is tokenized apart: a body of a million one-letter parts would hold the process for seconds.
        '257 parts in one gamma content',
        gamma('gemini-embed-1', 'embedContent', {
          content: { parts: Array.from({ length: 257 }, () => ({ text: 'a' })) },
        }),
        /body\.content\.parts must NOT have more than 256 items/,
      ],
      [
        'taskType on gamma',
        gamma('gemini-embed-1', 'embedContent', { content: text, taskType: 'RETRIEVAL_QUERY' }),
        /taskType is not supported/,
      ],
    ];

    for (const [name, [url, payload], message] of cases) {
      it(name, async () => {
        const upstreamCalls = openai.requests.length + gemini.requests.length + ark.requests.length;
        const response = await post(url, payload);
        expect(response.statusCode, response.body).toBe(400);
        const envelope = response.json<{ errors: string[]; status: number; success: boolean; path: string }>();
        expect(envelope).toMatchObject({ status: 400, success: false, path: url.split('?')[0] });
        expect(envelope.errors.join(' ')).toMatch(message);
        expect(openai.requests.length + gemini.requests.length + ark.requests.length).toBe(upstreamCalls);
        expect(await records()).toEqual([]);
        expect(await heldNanosOf(gateway, accountId)).toBe(0n);
        expect(await balance()).toBe(1);
      });
    }
  });

  it('fetches no URL for a key whose account cannot pay: the refusal comes first', async () => {
    const broke = await gateway.createFundedKey({ credits: 0 });
    const fetched = media.requests.length;
    const content = [
      { type: 'imageUrl', url: hosted('/large-a.png') },
      { type: 'audioUrl', url: hosted('/speech.wav') },
    ];
    const response = await gateway.request({
      method: 'POST',
      url: '/api/beta/v1/embeddings',
      headers: { 'x-api-key': broke.key },
      payload: { model: 'gemini-embed-2', input: [{ content }] },
    });
    expect(response.statusCode).toBe(403);
    expect(media.requests.length).toBe(fetched);
    expect(await usageRecords(gateway, broke.key)).toEqual([]);
  });

  it('bounds the bytes all downloads of one request take together, and gives the reservation back', async () => {
    const content = [
      { type: 'imageUrl', url: hosted('/large-a.png') },
      { type: 'imageUrl', url: hosted('/large-b.png') },
    ];
    const response = await post('/api/beta/v1/embeddings', { model: 'gemini-embed-2', input: [{ content }] });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ errors: string[] }>().errors.join(' ')).toMatch(
      /the media of this request are larger than 65536 bytes in all/,
    );
    expect(await records()).toEqual([]);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(await balance()).toBe(1);
  });

  it('counts parts against the limits before it fetches any URL', async () => {
    const fetched = media.requests.length;
    const content = [
      ...Array.from({ length: 7 }, () => ({ type: 'imageUrl', url: hosted('/photo.png') })),
      { type: 'audioUrl', url: hosted('/speech.wav') },
    ];
    const response = await post('/api/beta/v1/embeddings', { model: 'gemini-embed-2', input: [{ content }] });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ errors: string[] }>().errors.join(' ')).toMatch(/at most 6 images/);
    expect(media.requests.length).toBe(fetched);
    expect(await records()).toEqual([]);
  });

  it("relays an upstream's refusal with its own status and body, records the failure and charges nothing", async () => {
    const response = await post('/api/alpha/v1/embeddings', {
      model: 'failing-embed',
      input: 'x',
      encoding_format: 'float',
    });
    expect(response.statusCode).toBe(429);
    expect(response.json()).toMatchObject({ error: { type: 'server_error' } });
    expect(await records()).toMatchObject([{ status: 'failed', usdCost: 0 }]);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(await balance()).toBe(1);
  });

  it('falls back to the next provider row when the first answers 503', async () => {
    const response = await post('/api/alpha/v1/embeddings', {
      model: 'fallback-embed',
      input: ['a', 'b'],
      encoding_format: 'float',
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(gemini.requests.at(-1)!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(await records()).toMatchObject([{ status: 'succeeded' }]);
  });

  it('answers 502 when the upstream answers JSON that is no embeddings list, charging nothing, and falls back from it', async () => {
    const broken = await post('/api/alpha/v1/embeddings', {
      model: 'malformed-embed',
      input: 'x',
      encoding_format: 'float',
    });
    expect(broken.statusCode, broken.body).toBe(502);
    expect(broken.json()).toMatchObject({
      status: 502,
      success: false,
      errors: ['the upstream answered with JSON that is not an object'],
    });
    expect(await records()).toMatchObject([{ status: 'failed', usdCost: 0 }]);

    const rescued = await post('/api/alpha/v1/embeddings', {
      model: 'malformed-fallback-embed',
      input: ['a', 'b'],
      encoding_format: 'float',
    });
    expect(rescued.statusCode, rescued.body).toBe(200);
    expect(rescued.json<{ data: unknown[] }>().data).toHaveLength(2);
    expect(gemini.requests.at(-1)!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('charges a call that fails part-way the tokens BytePlus ModelArk reported for the inputs it did embed', async () => {
    // Ten inputs are ten calls, eight at a time: the tenth fails after nine have answered one token each.
    const input = [
      ...Array.from({ length: 9 }, (_, index) => ({ content: [{ type: 'text', text: `word${index}` }] })),
      { content: [{ type: 'text', text: 'fake-error-500' }] },
    ];
    const calls = ark.requests.length;
    const response = await post('/api/beta/v1/embeddings', { model: 'vision-embed', input });
    expect(response.statusCode, response.body).toBe(500);
    expect(response.json()).toMatchObject({ error: { code: 'InternalServiceError' } });
    expect(ark.requests.length - calls).toBe(10);
    expect(await records()).toMatchObject([{ status: 'failed', usage: { promptTokens: 9, totalTokens: 9 } }]);
    expect(Math.round((await records())[0]!.usdCost * 1e9)).toBe(9 * 1000);
    expect(nanos(await balance())).toBe(1e9 - 9 * 1000);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('offers no fallback row that cannot take the requested dimensions', async () => {
    const calls = gemini.requests.length;
    const sized = await post('/api/alpha/v1/embeddings', {
      model: 'sized-fallback-embed',
      input: 'x',
      dimensions: 64,
      encoding_format: 'float',
    });
    expect(sized.statusCode).toBe(503);
    expect(gemini.requests.length).toBe(calls);
    const unsized = await post('/api/alpha/v1/embeddings', {
      model: 'sized-fallback-embed',
      input: 'x',
      encoding_format: 'float',
    });
    expect(unsized.statusCode, unsized.body).toBe(200);
    expect(gemini.requests.length).toBe(calls + 1);
  });

  it('never spends past the balance under concurrent calls, and charges each exactly', async () => {
    // Each call holds what 1,008 tokens could cost (the text's bytes, plus a margin) and is charged 1 token.
    const { key: racing, accountId: racer } = await gateway.createFundedKey({ credits: 0.005 });
    const responses = await Promise.all(
      Array.from({ length: 12 }, () =>
        gateway.request({
          method: 'POST',
          url: '/api/alpha/v1/embeddings',
          headers: { 'x-api-key': racing },
          payload: { model: 'text-embed', input: 'x'.repeat(1000), encoding_format: 'float' },
        }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.every((status) => status === 200 || status === 403)).toBe(true);
    const succeeded = statuses.filter((status) => status === 200).length;
    expect(succeeded).toBeGreaterThanOrEqual(4);
    const left = (
      await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: { 'x-api-key': racing } })
    ).json<{ creditBalance: number }>().creditBalance;
    expect(nanos(left)).toBe(5_000_000 - succeeded * 1000);
    expect(await heldNanosOf(gateway, racer)).toBe(0n);
  });

  it('refuses a call the balance cannot cover before it reaches the upstream', async () => {
    const poor = await gateway.createFundedKey({ credits: 0.000001 });
    const calls = openai.requests.length;
    const response = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/embeddings',
      headers: { 'x-api-key': poor.key },
      payload: { model: 'text-embed', input: 'x'.repeat(2000), encoding_format: 'float' },
    });
    expect(response.statusCode).toBe(403);
    expect(openai.requests.length).toBe(calls);
  });
});
