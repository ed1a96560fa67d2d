import OpenAI, { type APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { usageRecords } from '../support/http-helpers.ts';
import { fakeProviderYaml, modelYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

describe('alpha chat completions with the official OpenAI SDK', () => {
  let fake: FakeServer;
  let gateway: TestGateway;
  let baseURL: string;

  beforeAll(async () => {
    fake = await startOpenAiFake();
    const model = (id: string, upstream: string, provider = 'fake') => modelYaml(id, { provider, upstream });
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        fakeProviderYaml('fake', 'openai', fake),
        '  sandbox: { protocol: sandbox }',
        'models:',
        model('chat', 'gpt-4o-mini'),
        model('limited', 'fake-error-429'),
        model('cut', 'fake-cut'),
        model('no-done', 'fake-no-done'),
        model('echo', 'echo', 'sandbox'),
      ].join('\n'),
    });
    baseURL = `${await gateway.app.listen({ port: 0, host: '127.0.0.1' })}/api/alpha/v1`;
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const records = (key: string) => usageRecords(gateway, key);
  const client = (apiKey: string) => new OpenAI({ apiKey, baseURL, maxRetries: 0 });
  const messages = [{ role: 'user' as const, content: 'alpha beta gamma' }];

  it('lists the catalog with pricing metadata', async () => {
    const { key } = await gateway.createFundedKey();
    const ids: string[] = [];
    for await (const model of client(key).models.list()) ids.push(model.id);
    expect(ids.sort()).toEqual(['chat', 'cut', 'echo', 'limited', 'no-done']);
    const listed = await gateway.request({
      method: 'GET',
      url: '/api/alpha/v1/models',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(listed.json<{ data: object[] }>().data.find((item) => (item as { id: string }).id === 'chat')).toMatchObject(
      {
        capabilitiesProviderId: 'fake',
        inputModalities: ['text'],
        chatPricing: { inputPerMTok: 1, outputPerMTok: 2, currency: 'USD' },
      },
    );
  });

  it('passes a same-protocol call through with only the model rewritten and the held output limit set, and bills stream and non-stream alike', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const completion = await client(key).chat.completions.create({
      model: 'chat',
      messages,
      temperature: 0.2,
      user: 'end-user-7',
    });
    expect(completion.choices[0]!.message.content).toBe('Echo: alpha beta gamma');
    expect(completion.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4 });
    // No limit from the client: the one the reservation covers goes upstream (the default, this model has none in the catalog).
    expect(fake.requests.at(-1)!.body).toEqual({
      model: 'gpt-4o-mini',
      messages,
      temperature: 0.2,
      user: 'end-user-7',
      max_tokens: 4096,
    });

    const stream = await client(key).chat.completions.create({ model: 'chat', messages, stream: true });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('Echo: alpha beta gamma');
    // The client did not ask for usage; the gateway forces it so the stream can be billed, and relays it.
    expect(fake.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4 });
    const [streamed, whole] = await records(key);
    expect(streamed!.usdCost).toBe(whole!.usdCost);
    expect(Math.round(whole!.usdCost * 1e9)).toBe(3 * 1000 + 4 * 2000);
  });

  it('translates for a provider of another protocol (the sandbox), streamed and not', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const completion = await client(key).chat.completions.create({ model: 'echo', messages });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'echo',
      choices: [{ message: { role: 'assistant', content: 'alpha beta gamma' }, finish_reason: 'stop' }],
    });
    const stream = await client(key).chat.completions.create({ model: 'echo', messages, stream: true, max_tokens: 2 });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('alpha beta');
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('length');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 2 } });
    expect((await records(key)).map((record) => record.status)).toEqual(['succeeded', 'succeeded']);
    // What translation cannot carry to the other protocol is named, not silently lost.
    const warned = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': key },
      payload: {
        model: 'echo',
        messages,
        presence_penalty: 0.25,
        frequency_penalty: 0.5,
        temperature: 0.1,
      },
    });
    expect(warned.statusCode).toBe(200);
    expect(warned.headers['x-gateway-dropped-parameters']).toBe('presence_penalty,frequency_penalty');
  });

  it('refuses what translation cannot carry yet, naming the model', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const error = await client(key)
      .chat.completions.create({
        model: 'echo',
        messages: [
          { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] },
        ],
      })
      .catch((caught: unknown) => caught);
    // Checks made before any upstream call answer with the gateway's envelope, which the SDK reports by status.
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const raw = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': key },
      payload: {
        model: 'echo',
        messages: [
          { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] },
        ],
      },
    });
    expect(raw.json()).toMatchObject({
      status: 400,
      errors: ['model "echo" cannot take "input_audio" content parts through this surface'],
    });
    expect(await records(key)).toEqual([]);
  });

  it('relays an upstream error as the SDK expects it', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const error = await client(key)
      .chat.completions.create({ model: 'limited', messages })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as APIError).code).toBe('rate_limit_exceeded');
  });

  it('appends [DONE] when the upstream leaves it out, and ends a cut stream with an error event and no [DONE]', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const post = (model: string) =>
      gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: { 'x-api-key': key },
        payload: { model, messages, stream: true },
      });
    const complete = await post('no-done');
    expect(complete.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(complete.body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(complete.body.match(/data: \[DONE\]/g)).toHaveLength(1);
    const cut = await post('cut');
    expect(cut.body).not.toContain('[DONE]');
    const last = cut.body.trim().split('\n\n').at(-1)!;
    expect(JSON.parse(last.slice('data: '.length))).toMatchObject({
      error: { message: 'the upstream provider failed while streaming' },
    });
    expect((await records(key)).map((record) => record.status)).toEqual(['failed', 'succeeded']);
  });
});
