import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { usageRecords } from '../support/http-helpers.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

describe('alpha responses with the official OpenAI SDK', () => {
  let fake: FakeServer;
  let gateway: TestGateway;
  let client: (key: string) => OpenAI;

  beforeAll(async () => {
    fake = await startOpenAiFake();
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        fakeProviderYaml('router', 'openai', fake),
        '  sandbox: { protocol: sandbox }',
        'models:',
        '  - id: routed',
        '    pricing: { inputPerMTok: 2, outputPerMTok: 8 }',
        '    providers: [{ provider: router, model: gpt-4.1 }]',
        '  - id: echo',
        '    pricing: { inputPerMTok: 2, outputPerMTok: 8 }',
        '    providers: [{ provider: sandbox, model: echo }]',
        '  - id: strict-echo',
        '    pricing: { inputPerMTok: 2, outputPerMTok: 8 }',
        '    providers: [{ provider: sandbox, model: echo, capabilities: { text: { supportedParameters: [maxTokens, temperature, tools] } } }]',
      ].join('\n'),
    });
    const baseURL = `${await gateway.app.listen({ port: 0, host: '127.0.0.1' })}/api/alpha/v1`;
    client = (apiKey) => new OpenAI({ apiKey, baseURL, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const records = (key: string) => usageRecords(gateway, key);

  it('relays to an OpenAI-compatible upstream without the fields only OpenAI keeps, and bills stream and non-stream alike', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const { data: response, response: raw } = await client(key)
      .responses.create({
        model: 'routed',
        input: 'alpha beta gamma',
        instructions: 'be brief',
        store: true,
        reasoning: { effort: 'low' },
        include: ['reasoning.encrypted_content'],
        previous_response_id: 'resp_earlier',
        conversation: 'conv_earlier',
        prompt: { id: 'pmpt_stored' },
        tools: [
          { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false },
          { type: 'web_search' },
        ],
        tool_choice: 'none',
      })
      .withResponse();
    expect(response.output_text).toBe('Echo: alpha beta gamma');
    // Left out for this upstream, and named, as on the translated path.
    expect(raw.headers.get('x-gateway-dropped-parameters')).toBe(
      'store,reasoning,include,previous_response_id,conversation,prompt,tools',
    );
    const sent = fake.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent).toMatchObject({ model: 'gpt-4.1', input: 'alpha beta gamma', instructions: 'be brief' });
    for (const field of ['store', 'reasoning', 'include', 'previous_response_id', 'conversation', 'prompt'])
      expect(sent).not.toHaveProperty(field);
    expect(sent.tools).toEqual([
      { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false },
    ]);

    const stream = client(key).responses.stream({
      model: 'routed',
      input: 'alpha beta gamma',
      instructions: 'be brief',
    });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Echo: alpha beta gamma');
    expect(final.usage).toMatchObject({ input_tokens: 5, output_tokens: 4 });
    const [streamed, whole] = await records(key);
    expect(streamed).toMatchObject({ status: 'succeeded', usage: { promptTokens: 5, completionTokens: 4 } });
    expect(streamed!.usdCost).toBe(whole!.usdCost);
    expect(Math.round(whole!.usdCost * 1e9)).toBe(5 * 2000 + 4 * 8000);
  });

  it('translates for another protocol, streamed and not', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await client(key).responses.create({
      model: 'echo',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'alpha beta gamma' }] }],
    });
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'echo' });
    expect(response.output_text).toBe('alpha beta gamma');
    const events: string[] = [];
    const stream = await client(key).responses.create({
      model: 'echo',
      input: 'alpha beta gamma',
      max_output_tokens: 2,
      stream: true,
    });
    let text = '';
    for await (const event of stream) {
      events.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(text).toBe('alpha beta');
    expect(events.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(events.at(-1)).toBe('response.incomplete');
  });

  it('drops the fields only OpenAI keeps when translating, naming them, even for a model that does not list them', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/responses',
      headers: { 'x-api-key': key },
      payload: {
        model: 'strict-echo',
        input: 'x',
        store: true,
        reasoning: { effort: 'high' },
        include: ['reasoning.encrypted_content'],
        previous_response_id: 'resp_1',
        conversation: 'conv_1',
        prompt: { id: 'pmpt_1', variables: { city: 'Paris' } },
        tools: [{ type: 'web_search' }],
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      status: 'completed',
      output: [{ type: 'message', content: [{ text: 'x' }] }],
    });
    expect(response.headers['x-gateway-dropped-parameters']).toBe(
      'store,reasoning,include,previous_response_id,conversation,prompt,tools',
    );
  });

  it("translated, goes without the earlier answers' words a stateful client names by id, naming them; a call named so is refused", async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const turn = (reference: string) =>
      gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/responses',
        headers: { 'x-api-key': key },
        payload: {
          model: 'echo',
          input: [
            { role: 'user', content: 'weather in Paris?' },
            // The AI SDK's default `store: true` names the text of its last answer instead of sending it again.
            { type: 'item_reference', id: reference },
            { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"city":"Paris"}' },
            { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
          ],
          tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }],
        },
      });
    for (const reference of ['msg_0123456789abcdef', 'rs_0123456789abcdef']) {
      const response = await turn(reference);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({ status: 'completed' });
      expect(response.headers['x-gateway-dropped-parameters']).toBe('input.item_reference');
    }
    // A reference to a call would leave its result without the call it answers: refused, as before.
    const call = await turn('fc_0123456789abcdef');
    expect(call.statusCode).toBe(400);
    expect(call.body).toContain('item_reference');
  });

  it('translated, goes without the reasoning items of an earlier answer sent back whole, naming them', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/responses',
      headers: { 'x-api-key': key },
      payload: {
        model: 'echo',
        input: [
          { role: 'user', content: 'weather in Paris?' },
          // A reasoning model's output sent back as the next turn's input (store: false keeps it encrypted).
          {
            type: 'reasoning',
            id: 'rs_0123456789abcdef',
            summary: [{ type: 'summary_text', text: 'The user wants the weather.' }],
            encrypted_content: 'gAAAAABfake',
          },
          { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"city":"Paris"}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
        ],
        tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }],
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ status: 'completed' });
    expect(response.headers['x-gateway-dropped-parameters']).toBe('input.reasoning');
  });

  it('ends every stream with data: [DONE], translated or relayed, and the SDK still reads it', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    for (const model of ['echo', 'routed']) {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/responses',
        headers: { 'x-api-key': key },
        payload: { model, input: 'alpha beta', stream: true },
      });
      const frames = response.body.split('\n\n').filter(Boolean);
      expect(frames.at(-1), model).toBe('data: [DONE]');
      expect(frames.at(-2), model).toMatch(/^event: response.completed\ndata: /);
      expect(frames.filter((frame) => frame === 'data: [DONE]')).toHaveLength(1);
      const events: string[] = [];
      for await (const event of await client(key).responses.create({ model, input: 'alpha beta', stream: true }))
        events.push(event.type);
      expect(events.at(-1), model).toBe('response.completed');
      const final = await client(key).responses.stream({ model, input: 'alpha beta' }).finalResponse();
      expect(final.output_text, model).toBe(model === 'echo' ? 'alpha beta' : 'Echo: alpha beta');
    }
  });
});
