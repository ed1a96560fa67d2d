import { GoogleGenAI } from '@google/genai';
import { describe, expect, it } from 'vitest';
import { fakeThinkingSignature } from '../fakes/anthropic-fake.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * Thinking asked on another surface reaches a model Anthropic serves as a request the real API takes: the
 * Anthropic fake refuses what the API refuses with thinking on (a budget below 1,024 or not below `max_tokens`,
 * a temperature but 1, top_k, a top_p below 0.95, a forced tool, a tool turn continued without its signed
 * thinking block). What the request goes without is named in x-gateway-dropped-parameters; a beta request is
 * relayed as sent, and Anthropic's own refusal reaches its client.
 */
describe('thinking asked on another surface, for a model Anthropic serves', () => {
  const setup = useFamilyGateway({ credits: 5, listen: true });

  const post = async (url: string, payload: object) =>
    setup.gateway.request({ method: 'POST', url, headers: { 'x-api-key': setup.key }, payload });
  const sent = () => setup.gateway.fakes.anthropic.requests.at(-1)!.body as Record<string, unknown>;
  const droppedOf = (response: { headers: Record<string, unknown> }) =>
    String(response.headers['x-gateway-dropped-parameters'] ?? '')
      .split(',')
      .filter(Boolean)
      .sort();
  const gamma = (payload: object) => post('/api/gamma/v1beta/models/via-anthropic:generateContent', payload);
  const hello = [{ role: 'user', parts: [{ text: 'hello there' }] }];
  const lookup = {
    functionDeclarations: [
      { name: 'lookup', parametersJsonSchema: { type: 'object', properties: { query: { type: 'string' } } } },
    ],
  };

  it('answers the reported @google/genai call without thinking, which 1,000 tokens have no room for, and names it', async () => {
    const client = new GoogleGenAI({
      apiKey: setup.key,
      httpOptions: { baseUrl: `${setup.address}/api/gamma`, retryOptions: { attempts: 1 } },
    });
    const answer = await client.models.generateContent({
      model: 'via-anthropic',
      contents: 'hello there',
      config: { thinkingConfig: { thinkingBudget: 512 }, maxOutputTokens: 1000, temperature: 0.2 },
    });
    expect(answer.text).toBe('Echo: hello there');
    expect(answer.sdkHttpResponse?.headers?.['x-gateway-dropped-parameters']).toBe('generationConfig.thinkingConfig');
    expect(sent()).toMatchObject({ max_tokens: 1000, temperature: 0.2 });
    expect(sent()).not.toHaveProperty('thinking');
  });

  it('gamma: raises a small budget to 1,024 within the output limit, and leaves out and names the sampling thinking refuses', async () => {
    for (const stream of [false, true]) {
      const response = await post(
        `/api/gamma/v1beta/models/via-anthropic:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        {
          contents: hello,
          generationConfig: {
            thinkingConfig: { thinkingBudget: 512 },
            maxOutputTokens: 4000,
            temperature: 0.2,
            topK: 10,
            topP: 0.5,
          },
        },
      );
      expect(response.statusCode, response.body).toBe(200);
      expect(droppedOf(response)).toEqual([
        'generationConfig.temperature',
        'generationConfig.topK',
        'generationConfig.topP',
      ]);
      expect(sent()).toMatchObject({ max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 1024 } });
      for (const field of ['temperature', 'top_k', 'top_p']) expect(sent()).not.toHaveProperty(field);
      // The model's thinking is not the answer's text (streamed, a word a chunk).
      expect(response.body).toMatch(stream ? /"Echo:"[\s\S]*" hello"[\s\S]*" there"/ : /"Echo: hello there"/);
      expect(response.body).not.toContain('think');
    }
  });

  it('gamma: lowers a budget at or past the output limit below it, never raising the limit the hold covers', async () => {
    const limited = await gamma({
      contents: hello,
      generationConfig: { thinkingConfig: { thinkingBudget: 8192 }, maxOutputTokens: 2000, topP: 0.95 },
    });
    expect(limited.statusCode, limited.body).toBe(200);
    expect(limited.headers['x-gateway-dropped-parameters']).toBeUndefined();
    expect(sent()).toMatchObject({ max_tokens: 2000, top_p: 0.95, thinking: { budget_tokens: 1999 } });
    const unlimited = await gamma({ contents: hello, generationConfig: { thinkingConfig: { thinkingBudget: 8192 } } });
    expect(unlimited.statusCode, unlimited.body).toBe(200);
    expect(sent()).toMatchObject({ max_tokens: 4096, thinking: { budget_tokens: 4095 } });
  });

  it('gamma: keeps the call functionCallingConfig ANY forces and goes without thinking, named', async () => {
    const response = await gamma({
      contents: hello,
      tools: [lookup],
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      generationConfig: { thinkingConfig: { thinkingBudget: 2048 }, maxOutputTokens: 4000, temperature: 0.2 },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['x-gateway-dropped-parameters']).toBe('generationConfig.thinkingConfig');
    expect(sent()).toMatchObject({ tool_choice: { type: 'any' }, temperature: 0.2 });
    expect(sent()).not.toHaveProperty('thinking');
    expect(response.json().candidates[0].content.parts).toContainEqual({
      functionCall: expect.objectContaining({ name: 'lookup', args: { query: 'hello there' } }),
    });
  });

  it('gamma tool loop: thinking opens the turn of calls; the results go back without it, named', async () => {
    const generationConfig = { thinkingConfig: { thinkingBudget: 2048 }, maxOutputTokens: 4000 };
    const first = await gamma({ contents: hello, tools: [lookup], generationConfig });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['x-gateway-dropped-parameters']).toBeUndefined();
    expect(sent()).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    const call = first.json().candidates[0].content.parts.find((part: object) => 'functionCall' in part).functionCall;
    const second = await gamma({
      contents: [
        ...hello,
        { role: 'model', parts: [{ functionCall: call }] },
        { role: 'user', parts: [{ functionResponse: { id: call.id, name: 'lookup', response: { result: 'sunny' } } }] },
      ],
      tools: [lookup],
      generationConfig,
    });
    expect(second.statusCode, second.body).toBe(200);
    expect(second.headers['x-gateway-dropped-parameters']).toBe('generationConfig.thinkingConfig');
    expect(sent()).not.toHaveProperty('thinking');
    expect(second.body).toContain('sunny');
  });

  it('native: the Anthropic-shaped thinking field keeps to the same rules', async () => {
    const native = (fields: object) =>
      post('/api/v1/text/completions', {
        model: 'via-anthropic',
        messages: [{ role: 'user', content: 'hello there' }],
        ...fields,
      });
    const sampled = await native({
      maxTokens: 3000,
      temperature: 0.3,
      topK: 40,
      topP: 0.9,
      thinking: { type: 'enabled', budget_tokens: 512 },
    });
    expect(sampled.statusCode, sampled.body).toBe(200);
    expect(sampled.body).toMatch(/"Echo:"[\s\S]*" hello"[\s\S]*" there"/);
    expect(sampled.body).not.toContain('think');
    expect(droppedOf(sampled)).toEqual(['temperature', 'topK', 'topP']);
    expect(sent()).toMatchObject({ max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 1024 } });
    const short = await native({ maxTokens: 50, temperature: 0.3, thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(short.statusCode, short.body).toBe(200);
    expect(short.headers['x-gateway-dropped-parameters']).toBe('thinking');
    expect(sent()).toMatchObject({ max_tokens: 50, temperature: 0.3 });
    expect(sent()).not.toHaveProperty('thinking');
  });

  it('alpha: a reasoning effort or Responses reasoning never turns Anthropic thinking on: named, the sampling kept', async () => {
    const chat = await post('/api/alpha/v1/chat/completions', {
      model: 'via-anthropic',
      messages: [{ role: 'user', content: 'hello there' }],
      temperature: 0.2,
      reasoning_effort: 'high',
      // Anthropic's own field, which the chat protocol does not describe.
      thinking: { type: 'enabled', budget_tokens: 512 },
    });
    expect(chat.statusCode, chat.body).toBe(200);
    expect(chat.headers['x-gateway-dropped-parameters']).toBe('reasoning_effort,thinking');
    expect(sent()).toMatchObject({ temperature: 0.2 });
    expect(sent()).not.toHaveProperty('thinking');
    const responses = await post('/api/alpha/v1/responses', {
      model: 'via-anthropic',
      input: 'hello there',
      temperature: 0.2,
      reasoning: { effort: 'high' },
    });
    expect(responses.statusCode, responses.body).toBe(200);
    expect(responses.headers['x-gateway-dropped-parameters']).toBe('reasoning');
    expect(sent()).toMatchObject({ temperature: 0.2 });
    expect(sent()).not.toHaveProperty('thinking');
  });

  it("beta: relayed to Anthropic as sent, Anthropic's refusal and its signed thinking blocks reach the client", async () => {
    const beta = (payload: object) =>
      setup.gateway.request({
        method: 'POST',
        url: '/api/beta/v1/messages',
        headers: { 'x-api-key': setup.key, 'anthropic-version': '2023-06-01' },
        payload: { model: 'via-anthropic', ...payload },
      });
    const refused = await beta({
      max_tokens: 1000,
      temperature: 0.2,
      thinking: { type: 'enabled', budget_tokens: 512 },
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('budget_tokens') },
    });
    expect(sent()).toMatchObject({ max_tokens: 1000, temperature: 0.2, thinking: { budget_tokens: 512 } });

    const tools = [{ name: 'lookup', input_schema: { type: 'object', properties: { query: { type: 'string' } } } }];
    const thinking = { type: 'enabled', budget_tokens: 1024 };
    const question = { role: 'user', content: 'weather in Paris' };
    const called = await beta({ max_tokens: 2000, thinking, tools, messages: [question] });
    expect(called.statusCode, called.body).toBe(200);
    const [thought, , use] = called.json().content;
    expect(thought).toEqual({ type: 'thinking', thinking: expect.any(String), signature: fakeThinkingSignature });
    const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] };
    const replayed = await beta({
      max_tokens: 2000,
      thinking,
      tools,
      messages: [question, { role: 'assistant', content: called.json().content }, result],
    });
    expect(replayed.statusCode, replayed.body).toBe(200);
    // The turn replayed without the thinking block that began it is Anthropic's to refuse.
    const unsigned = await beta({
      max_tokens: 2000,
      thinking,
      tools,
      messages: [question, { role: 'assistant', content: [use] }, result],
    });
    expect(unsigned.statusCode).toBe(400);
    expect(unsigned.json().error.message).toContain('must start with a thinking block');
  });
});
