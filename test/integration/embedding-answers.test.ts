import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer, type RecordedRequest } from '../fakes/fake-server.ts';
import { expectEnvelope, usageRecords } from '../support/http-helpers.ts';
import { pngBase64 } from '../support/media-fixtures.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/** What the upstream answers an OpenAI embeddings request: honest by default, or as a test makes it lie. */
type Answer = (inputs: readonly string[]) => object;
const honest: Answer = (inputs) => ({
  data: inputs.map((_, index) => ({ index, embedding: [0.1, 0.2, 0.3] })),
  usage: { prompt_tokens: 3, total_tokens: 3 },
});

/**
 * Embeddings as an upstream answers them and as a row takes them: a size a row drops is named (and a row that
 * would drop the size the others carry is no fallback), an answer whose indices or sizes do not fit the inputs
 * is a protocol failure, a negative count is no count, and a gamma part with two kinds of data is refused.
 */
describe('embedding answers and rows', () => {
  let upstream: FakeServer;
  let gateway: TestGateway;
  let answer: Answer = honest;

  const inputsOf = (request: RecordedRequest): string[] => {
    const body = request.body;
    if (body === null || typeof body !== 'object' || !('input' in body)) return [];
    const input = body.input;
    return Array.isArray(input) ? input.map(String) : [String(input)];
  };
  const json = (response: ServerResponse, status: number, body: object) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };

  beforeAll(async () => {
    upstream = await startFakeServer((request, response) => {
      if (request.path.includes(':embedContent'))
        return json(response, 200, { embedding: { values: [0.1, 0.2, 0.3] } });
      if (JSON.stringify(request.body).includes('"fake-down"'))
        return json(response, 503, { error: { message: 'down' } });
      return json(response, 200, answer(inputsOf(request)));
    });
    gateway = await startTestGateway({
      upstreams: [upstream],
      configText: [
        'providers:',
        `  oai: { protocol: openai, baseUrl: "${upstream.url}/v1", apiKey: sk-test }`,
        `  gem: { protocol: gemini, baseUrl: "${upstream.url}/v1beta", apiKey: g-test }`,
        'models:',
        '  - id: loose-embed',
        '    outputModalities: [embedding]',
        '    pricing: { inputPerMTok: 1 }',
        '    providers: [{ provider: oai, model: m, capabilities: { strictParams: false } }]',
        '  - id: sized-embed',
        '    outputModalities: [embedding]',
        '    pricing: { inputPerMTok: 1 }',
        '    providers: [{ provider: oai, model: m, capabilities: { params: { dimensions: { type: int, min: 1, max: 3072 } } } }]',
        '  - id: fallback-embed',
        '    outputModalities: [embedding]',
        '    pricing: { inputPerMTok: 1 }',
        '    providers:',
        '      - { provider: oai, model: fake-down, priority: 1, capabilities: { params: { dimensions: { type: int, min: 1, max: 3072 } } } }',
        '      - { provider: gem, model: g, priority: 2, capabilities: { strictParams: false } }',
        '  - id: image-embed',
        '    inputModalities: [text, image]',
        '    outputModalities: [embedding]',
        '    pricing: { inputPerMTok: 1, inputPerImage: 0.001 }',
        '    providers: [{ provider: gem, model: gi, capabilities: { inputs: { parts: [text, imageBase64, imageUrl] } } }]',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const post = async (url: string, payload: object) => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await gateway.request({ method: 'POST', url, headers: { 'x-api-key': key }, payload });
    return { response, key };
  };
  const embeddings = '/api/alpha/v1/embeddings';

  it('names the size a row drops, and takes no fallback row that would drop the size the others carry', async () => {
    answer = honest;
    const { response } = await post(embeddings, { model: 'loose-embed', input: 'hi', dimensions: 256 });
    expect(response.statusCode, response.body).toBe(200);
    expect(upstream.requests.at(-1)?.body).not.toHaveProperty('dimensions');
    expect(response.headers['x-gateway-dropped-parameters']).toBe('dimensions');
    // The first row fails; the second would answer vectors of another size than asked: the failure stands.
    const fallback = await post(embeddings, { model: 'fallback-embed', input: 'hi', dimensions: 256 });
    expect(fallback.response.statusCode).toBe(503);
  });

  it('is a protocol failure when the indices do not name each input once, or a vector has another size', async () => {
    answer = (inputs) => ({ data: inputs.map((_, index) => ({ index: 0, embedding: [index + 1] })) });
    const repeated = await post(embeddings, { model: 'sized-embed', input: ['a', 'b', 'c'], encoding_format: 'float' });
    expectEnvelope(repeated.response, { status: 502, code: 'GW_UPSTREAM_UNREACHABLE', path: embeddings });
    answer = (inputs) => ({ data: inputs.map((_, index) => ({ index, embedding: index === 0 ? [1] : [1, 2, 3] })) });
    const sized = await post(embeddings, { model: 'sized-embed', input: ['a', 'b'], dimensions: 3 });
    expectEnvelope(sized.response, { status: 502, code: 'GW_UPSTREAM_UNREACHABLE', path: embeddings });
    // Indices out of order are the inputs' own: read back into their order.
    answer = () => ({ data: [1, 0].map((index) => ({ index, embedding: [index, index, index] })) });
    const reordered = await post(embeddings, { model: 'sized-embed', input: ['a', 'b'], encoding_format: 'float' });
    expect(
      reordered.response.json<{ data: Array<{ embedding: number[] }> }>().data.map((item) => item.embedding[0]),
    ).toEqual([0, 1]);
  });

  it('counts the tokens itself when the upstream reports a negative count', async () => {
    answer = (inputs) => ({
      data: inputs.map((_, index) => ({ index, embedding: [0.1] })),
      usage: { prompt_tokens: -1000, total_tokens: -1000 },
    });
    const { response, key } = await post(embeddings, {
      model: 'sized-embed',
      input: 'many words of text here '.repeat(40),
    });
    expect(response.statusCode, response.body).toBe(200);
    await gateway.settled();
    const [record] = await usageRecords(gateway, key);
    expect(record!.usage).toMatchObject({ countedByGateway: true });
    expect(record!.usdCost).toBeGreaterThan(0);
  });

  it('refuses a gamma part that holds both text and an image, naming it', async () => {
    const path = '/api/gamma/v1beta/models/image-embed:embedContent';
    const { response } = await post(path, {
      content: { parts: [{ text: 'a', inlineData: { mimeType: 'image/png', data: pngBase64 } }] },
    });
    const envelope = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path });
    expect(envelope.errors[0]).toContain('content.parts.0 must hold one kind of data');
  });
});
