import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { keyHeaders, usageRecords } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * Details of the compatibility surfaces a client of the imitated protocol relies on, against the shipped
 * configuration's sandbox models.
 */
describe('compatibility surface fidelity', () => {
  let gateway: TestGateway;
  let key: string;
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    gateway = await startTestGateway({ logLines });
    key = (await gateway.createFundedKey({ credits: 1 })).key;
  });
  afterAll(async () => gateway?.close());

  const post = (url: string, payload: object, headers: Record<string, string> = keyHeaders(key)) =>
    gateway.request({ method: 'POST', url, payload, headers });
  const errorsOf = (response: { json: <T>() => T }) => response.json<{ errors: string[] }>().errors;
  const messages = [{ role: 'user', content: 'alpha beta gamma' }];

  it('names refused parameters as the client spelled them on each surface', async () => {
    const alpha = await post('/api/alpha/v1/chat/completions', {
      model: 'sandbox-echo',
      messages,
      frequency_penalty: 0.5,
    });
    expect(alpha.statusCode).toBe(400);
    expect(errorsOf(alpha)).toEqual(['model "sandbox-echo" does not support parameter "frequency_penalty"']);
    const beta = await post('/api/beta/v1/messages', { model: 'sandbox-echo', max_tokens: 10, messages, top_k: 5 });
    expect(errorsOf(beta)).toEqual(['model "sandbox-echo" does not support parameter "top_k"']);
    const gamma = await post('/api/gamma/v1beta/models/sandbox-echo:generateContent', {
      contents: 'hi',
      generationConfig: { topK: 5 },
    });
    expect(errorsOf(gamma)).toEqual(['model "sandbox-echo" does not support parameter "generationConfig.topK"']);
    const video = await post('/api/alpha/v1/videos', { model: 'sandbox-video', prompt: 'a cat', size: '1792x1024' });
    expect(video.statusCode).toBe(400);
    expect(errorsOf(video)).toEqual(['parameter "size" of model "sandbox-video" must be one of 480p, 720p']);
  });

  it("names a message's participant name, which a translated call goes without, and no name when none is given", async () => {
    const named = await post('/api/alpha/v1/chat/completions', {
      model: 'sandbox-echo',
      messages: [
        { role: 'system', content: 'You referee.' },
        { role: 'user', name: 'alice', content: 'alpha beta gamma' },
      ],
    });
    expect(named.statusCode, named.body).toBe(200);
    expect(named.headers['x-gateway-dropped-parameters']).toBe('messages.name');
    const plain = await post('/api/alpha/v1/chat/completions', { model: 'sandbox-echo', messages });
    expect(plain.headers['x-gateway-dropped-parameters']).toBeUndefined();
  });

  it('names the prompt-cache breakpoints of a beta request, which a translated call goes without', async () => {
    const cached = { type: 'ephemeral' };
    const bodies = [
      { system: [{ type: 'text', text: 'You referee.', cache_control: cached }], messages },
      { messages: [{ role: 'user', content: [{ type: 'text', text: 'alpha beta gamma', cache_control: cached }] }] },
      {
        messages,
        tools: [{ name: 'lookup', input_schema: { type: 'object' }, cache_control: cached }],
      },
    ];
    for (const body of bodies) {
      const answer = await post('/api/beta/v1/messages', { model: 'sandbox-echo', max_tokens: 20, ...body });
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.headers['x-gateway-dropped-parameters']).toBe('cache_control');
    }
  });

  it('names the stop sequence that ended a translated turn, and reports the prompt tokens in message_start', async () => {
    const body = { model: 'sandbox-echo', max_tokens: 20, messages, stop_sequences: ['gamma', 'beta'] };
    const whole = await post('/api/beta/v1/messages', body);
    expect(whole.json()).toMatchObject({
      content: [{ type: 'text', text: 'alpha ' }],
      stop_reason: 'stop_sequence',
      stop_sequence: 'beta',
    });
    const inputTokens = whole.json<{ usage: { input_tokens: number } }>().usage.input_tokens;
    const streamed = await post('/api/beta/v1/messages', { ...body, stream: true });
    const events = streamed.body
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
    expect(events.find((event) => event.type === 'message_start')).toMatchObject({
      message: { usage: { input_tokens: inputTokens, output_tokens: 0 } },
    });
    expect(events.find((event) => event.type === 'message_delta')).toMatchObject({
      delta: { stop_reason: 'stop_sequence', stop_sequence: 'beta' },
    });
    const natural = await post('/api/beta/v1/messages', { ...body, stop_sequences: ['zeta'] });
    expect(natural.json()).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
  });

  it("takes the Gemini API's ?key= credential on the gamma surface only, and never logs it", async () => {
    const { key: queried } = await gateway.createFundedKey({ credits: 1 });
    const answer = await post(
      `/api/gamma/v1beta/models/sandbox-echo:generateContent?key=${queried}`,
      { contents: 'hi' },
      {},
    );
    expect(answer.statusCode, answer.body).toBe(200);
    const listed = await gateway.request({ method: 'GET', url: `/api/gamma/v1beta/models?key=${queried}` });
    expect(listed.statusCode).toBe(200);
    const wrong = await gateway.request({ method: 'GET', url: `/api/gamma/v1beta/models?key=${queried}x` });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).not.toContain(queried);
    const alpha = await gateway.request({ method: 'GET', url: `/api/alpha/v1/models?key=${queried}` });
    expect(alpha.statusCode).toBe(401);
    await gateway.settled();
    expect(logLines.length).toBeGreaterThan(0);
    expect(JSON.stringify(logLines)).not.toContain(queried);
  });

  it('streams the images of a model that makes them as jobs as one completed event each, billed as the JSON answer', async () => {
    const { key: own } = await gateway.createFundedKey({ credits: 1 });
    const address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
    const openai = new OpenAI({ apiKey: own, baseURL: `${address}/api/alpha/v1`, maxRetries: 0 });
    const events: Array<{ type: string; b64_json?: string; usage?: object }> = [];
    const stream = await openai.images.generate({ model: 'sandbox-image', prompt: 'a fox', stream: true });
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.type)).toEqual(['image_generation.completed']);
    expect(Buffer.from(events[0]!.b64_json!, 'base64').subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(events[0]!.usage).toEqual({ input_tokens: 0, output_tokens: 0, total_tokens: 0 });
    await openai.images.generate({ model: 'sandbox-image', prompt: 'a fox' });
    const records = await usageRecords(gateway, own);
    expect(records.map((record) => record.status)).toEqual(['succeeded', 'succeeded']);
    expect(records[0]!.usdCost).toBe(records[1]!.usdCost);
  });

  it('lists the allowed values of an enumeration once', async () => {
    const refused = await post('/api/v1/image/estimate', {
      model: 'sandbox-image',
      content: [{ type: 'text', text: 'a cat' }],
      outputFormat: 'gif',
    });
    expect(refused.statusCode).toBe(400);
    expect(errorsOf(refused)).toEqual(['body.outputFormat must be one of: png, jpeg, webp']);
  });
});
