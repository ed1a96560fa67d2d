import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/domain/tokenizer.ts';
import { fakeAnthropicKey, startAnthropicFake } from '../fakes/anthropic-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { heldNanosOf, usageRecords } from '../support/http-helpers.ts';
import { fakeProviderYaml, modelYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

describe('beta messages with the official Anthropic SDK', () => {
  let fake: FakeServer;
  let gateway: TestGateway;
  let address: string;

  beforeAll(async () => {
    fake = await startAnthropicFake();
    const model = (id: string, upstream: string, provider = 'claude') =>
      modelYaml(id, { provider, upstream, prices: { input: 3, output: 15 } });
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        fakeProviderYaml('claude', 'anthropic', fake),
        '  sandbox: { protocol: sandbox }',
        'models:',
        model('claude-test', 'claude-sonnet-4-5-20250929'),
        model('overloaded', 'fake-error-529'),
        model('stream-error', 'fake-stream-error'),
        model('echo', 'echo', 'sandbox'),
      ].join('\n'),
    });
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const records = (key: string) => usageRecords(gateway, key);
  const client = (apiKey: string, defaultHeaders?: Record<string, string>) =>
    new Anthropic({ apiKey, baseURL: `${address}/api/beta`, maxRetries: 0, defaultHeaders });
  const messages = [{ role: 'user' as const, content: 'alpha beta gamma' }];

  it('lists the catalog', async () => {
    const { key } = await gateway.createFundedKey();
    const ids: string[] = [];
    for await (const model of client(key).models.list()) ids.push(model.id);
    expect(ids.sort()).toEqual(['claude-test', 'echo', 'overloaded', 'stream-error']);
  });

  it('passes messages through, forwarding the protocol headers, and bills stream and non-stream alike', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const anthropic = client(key, { 'anthropic-beta': 'prompt-caching-2024-07-31' });
    const message = await anthropic.messages.create({
      model: 'claude-test',
      max_tokens: 50,
      system: 'be brief',
      messages,
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: alpha beta gamma' }]);
    expect(message.stop_reason).toBe('end_turn');
    const sent = fake.requests.at(-1)!;
    expect(sent.body).toEqual({ model: 'claude-sonnet-4-5-20250929', max_tokens: 50, system: 'be brief', messages });
    expect(sent.headers['x-api-key']).toBe(fakeAnthropicKey);
    // The SDK's own protocol version and the client's feature flags reach the upstream as sent.
    expect(sent.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(sent.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    await gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      payload: { model: 'claude-test', max_tokens: 5, messages },
    });
    expect(fake.requests.at(-1)!.headers['anthropic-version']).toBe('2023-06-01');
    expect(fake.requests.at(-1)!.headers['anthropic-beta']).toBeUndefined();

    const stream = anthropic.messages.stream({ model: 'claude-test', max_tokens: 50, system: 'be brief', messages });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Echo: alpha beta gamma' }]);
    expect(final.usage).toMatchObject({ input_tokens: 5, output_tokens: 4 });
    const [streamed, , whole] = await records(key);
    expect(streamed).toMatchObject({ status: 'succeeded', usage: { promptTokens: 5, completionTokens: 4 } });
    expect(streamed!.usdCost).toBe(whole!.usdCost);
    expect(Math.round(whole!.usdCost * 1e9)).toBe(5 * 3000 + 4 * 15_000);
  });

  it('relays the upstream event stream byte for byte, but for the model it names (the catalog id)', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const payload = { model: 'claude-test', max_tokens: 50, messages, stream: true };
    const viaGateway = await gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: { 'x-api-key': key },
      payload,
    });
    const direct = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': fakeAnthropicKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...payload, model: 'claude-sonnet-4-5-20250929' }),
    });
    expect(viaGateway.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(viaGateway.body).toBe(
      (await direct.text()).replace('"model":"claude-sonnet-4-5-20250929"', '"model":"claude-test"'),
    );
    expect(viaGateway.body).not.toContain('[DONE]');
  });

  it('relays upstream errors: before the stream with status and body, inside it as the provider sent them', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const error = await client(key)
      .messages.create({ model: 'overloaded', max_tokens: 10, messages })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'overloaded_error' },
    });
    const streamed = await gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: { 'x-api-key': key },
      payload: { model: 'stream-error', max_tokens: 10, messages, stream: true },
    });
    expect(streamed.body.trim().split('\n\n').at(-1)).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    );
    // The failed stream is charged what it delivered: the 3 input tokens reported, and the output it sent
    // before failing ("Echo:", counted, more than message_start's 1), at 3 and 15 USD per million; the
    // refused call costs nothing.
    expect((await records(key)).map((record) => [record.status, Math.round(record.usdCost * 1e9)])).toEqual([
      ['failed', 3 * 3000 + countTextTokens('Echo:') * 15_000],
      ['failed', 0],
    ]);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('translates to a provider of another protocol (the sandbox), streamed and not', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const message = await client(key).messages.create({ model: 'echo', max_tokens: 50, messages });
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'echo',
      content: [{ type: 'text', text: 'alpha beta gamma' }],
      stop_reason: 'end_turn',
    });
    const final = await client(key).messages.stream({ model: 'echo', max_tokens: 2, messages }).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'alpha beta' }]);
    expect(final.stop_reason).toBe('max_tokens');
    expect(final.usage.output_tokens).toBe(2);
  });

  it('serves an Anthropic model through the alpha surface by translation', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const openai = new OpenAI({ apiKey: key, baseURL: `${address}/api/alpha/v1`, maxRetries: 0 });
    const completion = await openai.chat.completions.create({
      model: 'claude-test',
      messages: [{ role: 'system', content: 'be brief' }, ...messages],
    });
    expect(completion.choices[0]!.message.content).toBe('Echo: alpha beta gamma');
    expect(completion.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 4 });
    const sent = fake.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent).toMatchObject({
      model: 'claude-sonnet-4-5-20250929',
      system: 'be brief',
      messages,
      stream: true,
      max_tokens: 4096,
    });
    let text = '';
    for await (const chunk of await openai.chat.completions.create({ model: 'claude-test', messages, stream: true }))
      text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Echo: alpha beta gamma');
  });
});
