import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shippedConfigPath, startTestGateway, testAdminToken, type TestGateway } from '../support/test-gateway.ts';

interface TextChunk {
  delta?: string;
  finishReason?: string;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
  error?: string;
}

function events(body: string): Array<TextChunk | '[DONE]'> {
  expect(body.endsWith('\n\n')).toBe(true);
  return body
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      expect(frame.startsWith('data: ')).toBe(true);
      const data = frame.slice('data: '.length);
      return data === '[DONE]' ? '[DONE]' : (JSON.parse(data) as TextChunk);
    });
}

// One sandbox model without pricing, to prove an unpriced model is refused before anything is held.
const configText = `${readFileSync(shippedConfigPath, 'utf8').replace(
  /^models:\n/m,
  'models:\n  - id: sandbox-unpriced\n    providers: [{ provider: sandbox, model: echo }]\n' +
    '  - id: sandbox-open\n    pricing: { inputPerMTok: 0.1, outputPerMTok: 0.2 }\n    providers: [{ provider: sandbox, model: echo }]\n',
)}`;

describe('native text completions on the sandbox', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ configText });
  });
  afterAll(async () => gateway?.close());

  const complete = (key: string, body: Record<string, unknown>) =>
    gateway.request({ method: 'POST', url: '/api/v1/text/completions', headers: { 'x-api-key': key }, payload: body });
  const balanceOf = async (key: string) =>
    (await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: { 'x-api-key': key } })).json<{
      creditBalance: number;
    }>().creditBalance;

  it('streams TextChunks with the spec headers, usage on the final chunk, then [DONE], and bills exactly', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const prompt = 'The quick brown fox jumps over the lazy dog near the riverbank.';
    const response = await complete(key, { model: 'sandbox-echo', messages: [{ role: 'user', content: prompt }] });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-cache, no-transform');
    expect(response.headers['x-accel-buffering']).toBe('no');
    const chunks = events(response.body);
    expect(chunks.at(-1)).toBe('[DONE]');
    const data = chunks.slice(0, -1) as TextChunk[];
    expect(data.length).toBeGreaterThan(2);
    expect(data.map((chunk) => chunk.delta).join('')).toBe(prompt);
    const final = data.at(-1)!;
    expect(final.finishReason).toBe('stop');
    expect(final.usage!.totalTokens).toBe(final.usage!.promptTokens + final.usage!.completionTokens);
    // sandbox-echo: 0.10 USD in, 0.20 USD out per million tokens = 100 and 200 nano-USD per token.
    const expectedNanos = final.usage!.promptTokens * 100 + final.usage!.completionTokens * 200;
    const usage = await gateway.request({ method: 'GET', url: '/api/compat/v1/usage', headers: { 'x-api-key': key } });
    const [record] = usage.json<{
      results: Array<{ usdCost: number; status: string; modality: string; model: string; usage: object }>;
    }>().results;
    expect(record).toMatchObject({ status: 'succeeded', modality: 'text', model: 'sandbox-echo', usage: final.usage });
    expect(Math.round(record!.usdCost * 1e9)).toBe(expectedNanos);
    expect(Math.round((await balanceOf(key)) * 1e9)).toBe(1e9 - expectedNanos);
  });

  it('treats text that spells a special token as ordinary text', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await complete(key, {
      model: 'sandbox-echo',
      messages: [{ role: 'user', content: 'what is <|endoftext|> for?' }],
    });
    expect(response.statusCode).toBe(200);
    expect((events(response.body).slice(0, -1) as TextChunk[]).map((chunk) => chunk.delta).join('')).toBe(
      'what is <|endoftext|> for?',
    );
  });

  it('reports optional parameters an unconstrained model accepted but that cannot reach the provider yet', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await complete(key, {
      model: 'sandbox-open',
      messages: [{ role: 'user', content: 'x' }],
      topP: 0.5,
      logitBias: { '1': 5 },
      topK: 3,
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-gateway-dropped-parameters']).toBe('topK,logitBias');
  });

  it('stops at maxTokens with finishReason length', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const chunks = events(
      (
        await complete(key, {
          model: 'sandbox-echo',
          maxTokens: 3,
          messages: [{ role: 'user', content: 'one two three four five six seven eight' }],
        })
      ).body,
    );
    const final = chunks.at(-2) as TextChunk;
    expect(final).toMatchObject({ finishReason: 'length', usage: { completionTokens: 3 } });
  });

  it('answers 403 in the envelope to a key whose account has no credits, and holds nothing', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 0 });
    const response = await complete(key, { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ status: 403, success: false, path: '/api/v1/text/completions' });
    expect(response.json<{ errors: string[] }>().errors[0]).toContain('insufficient credit balance');
    // A balance driven negative by the operator is depleted too.
    await gateway.request({
      method: 'POST',
      url: `/api/admin/v1/accounts/${accountId}/credits`,
      headers: { authorization: `Bearer ${testAdminToken}` },
      payload: { amount: -1 },
    });
    expect(
      (await complete(key, { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] })).statusCode,
    ).toBe(403);
  });

  it('answers 429 naming the cap when a key cap cannot cover the reservation', async () => {
    const { key } = await gateway.createFundedKey({ credits: 5, limits: { daily: 0.000001 } });
    const response = await complete(key, { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.statusCode).toBe(429);
    expect(response.json<{ errors: string[] }>().errors[0]).toContain('daily spend limit');
  });

  it('refuses unknown, unpriced and mis-parameterised requests with 400 before any charge', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] },
        'model "no-such-model" is not available',
      ],
      [
        { model: 'sandbox-unpriced', messages: [{ role: 'user', content: 'x' }] },
        'model "sandbox-unpriced" has no configured pricing',
      ],
      [
        { model: 'sandbox-echo', messages: [{ role: 'user', content: 'x' }], topK: 4 },
        'model "sandbox-echo" does not support parameter "topK"',
      ],
      // The schema's refusals (a temperature, the messages, the model id, maxTokens) are claimed in
      // test/unit/request-body-schemas.test.ts; one of them here.
      [{ model: 'sandbox-echo', messages: [] }, 'body.messages must NOT have fewer than 1 items'],
    ];
    for (const [body, message] of cases) {
      const response = await complete(key, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json<{ errors: string[] }>().errors.join(' '), JSON.stringify(body)).toContain(message);
    }
    expect(await balanceOf(key)).toBe(1);
    const usage = await gateway.request({ method: 'GET', url: '/api/compat/v1/usage', headers: { 'x-api-key': key } });
    expect(usage.json<{ total: number }>().total).toBe(0);
  });

  it('admits at most what the balance covers under 60 concurrent calls, and conserves money exactly', async () => {
    // Each call reserves (prompt estimate + 4096 default output tokens) at 100/200 nano-USD per token, about
    // 0.00082 USD; 0.004 USD covers four such reservations at a time.
    const { key } = await gateway.createFundedKey({ credits: 0.004 });
    const responses = await Promise.all(
      Array.from({ length: 60 }, () =>
        complete(key, { model: 'sandbox-echo', messages: [{ role: 'user', content: 'count me' }] }),
      ),
    );
    const admitted = responses.filter((response) => response.statusCode === 200);
    const refused = responses.filter((response) => response.statusCode === 403);
    expect(admitted.length + refused.length).toBe(60);
    expect(admitted.length).toBeGreaterThanOrEqual(1);
    const usage = await gateway.request({
      method: 'GET',
      url: '/api/compat/v1/usage?limit=100',
      headers: { 'x-api-key': key },
    });
    const records = usage.json<{ total: number; results: Array<{ usdCost: number }> }>();
    expect(records.total).toBe(admitted.length);
    const spentNanos = records.results.reduce((sum, record) => sum + Math.round(record.usdCost * 1e9), 0);
    const balanceNanos = Math.round((await balanceOf(key)) * 1e9);
    expect(balanceNanos).toBeGreaterThanOrEqual(0);
    expect(spentNanos + balanceNanos).toBe(4_000_000);
  });
});
