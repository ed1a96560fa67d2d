import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFamilyGateway, type FamilyGateway } from '../support/test-gateway.ts';

/**
 * The native API's optional fields reach each upstream family as that protocol's own fields; what a protocol
 * has no place for is named in x-gateway-dropped-parameters. The fakes record the exact bodies sent.
 */
const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const lookup = { type: 'function', function: { name: 'lookup', description: 'Finds a city', parameters: schema } };

const everything = {
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'where is Paris' },
  ],
  maxTokens: 50,
  temperature: 0.3,
  topP: 0.9,
  stop: 'END',
  tools: [lookup],
  toolChoice: { type: 'function', function: { name: 'lookup' } },
  responseFormat: { type: 'json_schema', json_schema: { name: 'place', schema } },
  seed: 7,
  presencePenalty: 0.1,
  frequencyPenalty: 0.2,
  topK: 40,
  repetitionPenalty: 1.1,
  minP: 0.05,
  topA: 0.2,
  logprobs: true,
  topLogprobs: 3,
  logitBias: { '50256': -100 },
  structuredOutputs: true,
  parallelToolCalls: false,
  includeReasoning: true,
  reasoningEffort: 'low',
  webSearchOptions: { search_context_size: 'low' },
  verbosity: 'low',
  thinking: { type: 'enabled', budget_tokens: 2048 },
};

interface Chunk {
  delta?: string;
  finishReason?: string;
  toolCalls?: Array<{ index: number; id?: string; function: { name?: string; arguments: string } }>;
}

const chunksOf = (body: string): Chunk[] =>
  body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: ') && frame !== 'data: [DONE]')
    .map((frame) => JSON.parse(frame.slice(6)) as Chunk);

describe('native text completions forward the optional fields each protocol can carry', () => {
  let gateway: FamilyGateway;

  beforeAll(async () => {
    gateway = await startFamilyGateway([
      '  - id: narrow-openai',
      '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
      '    providers: [{ provider: openai, model: gpt-4o-mini, capabilities: { text: { supportedParameters: [topK] }, strictParams: false } }]',
    ]);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const complete = async (model: string, body: object) => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    return gateway.request({
      method: 'POST',
      url: '/api/v1/text/completions',
      headers: { 'x-api-key': key },
      payload: { model, ...body },
    });
  };

  it('sends an OpenAI-compatible upstream every field, router sampling and reasoning included, and streams its tool call', async () => {
    const response = await complete('via-openai', everything);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['x-gateway-dropped-parameters']).toBeUndefined();
    expect(gateway.fakes.openai.requests.at(-1)!.body).toEqual({
      model: 'gpt-4o-mini',
      messages: everything.messages,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 50,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END'],
      seed: 7,
      tools: [lookup],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema, strict: true } },
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      logprobs: true,
      top_logprobs: 3,
      logit_bias: { '50256': -100 },
      parallel_tool_calls: false,
      reasoning_effort: 'low',
      verbosity: 'low',
      web_search_options: { search_context_size: 'low' },
      top_k: 40,
      repetition_penalty: 1.1,
      min_p: 0.05,
      top_a: 0.2,
      reasoning: { max_tokens: 2048, exclude: false },
    });
    const chunks = chunksOf(response.body);
    const calls = chunks.flatMap((chunk) => chunk.toolCalls ?? []);
    expect(calls[0]).toEqual({
      index: 0,
      id: 'call_fake1',
      type: 'function',
      function: { name: 'lookup', arguments: '' },
    });
    expect(calls.map((call) => call.function.arguments).join('')).toBe(JSON.stringify({ query: 'where is Paris' }));
    expect(chunks.at(-1)!.finishReason).toBe('tool-calls');
  });

  it('sends an Anthropic upstream top_k, thinking, tools, stop sequences and the answer schema, and names what it has no place for', async () => {
    const response = await complete('via-anthropic', everything);
    expect(response.statusCode, response.body).toBe(200);
    expect(gateway.fakes.anthropic.requests.at(-1)!.body).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'where is Paris' }],
      stream: true,
      system: 'be brief',
      temperature: 0.3,
      top_p: 0.9,
      stop_sequences: ['END'],
      tools: [{ name: 'lookup', description: 'Finds a city', input_schema: schema }],
      tool_choice: { type: 'tool', name: 'lookup', disable_parallel_tool_use: true },
      top_k: 40,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      output_config: { format: { type: 'json_schema', schema } },
    });
    expect(response.headers['x-gateway-dropped-parameters']).toBe(
      'seed,presencePenalty,frequencyPenalty,repetitionPenalty,minP,topA,logprobs,topLogprobs,logitBias,includeReasoning,reasoningEffort,webSearchOptions,verbosity',
    );
  });

  it('sends a Gemini upstream its generationConfig fields, a JSON schema answer format and a thinking budget', async () => {
    const response = await complete('via-gemini', everything);
    expect(response.statusCode, response.body).toBe(200);
    expect(gateway.fakes.gemini.requests.at(-1)!.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'where is Paris' }] }],
      systemInstruction: { parts: [{ text: 'be brief' }] },
      generationConfig: {
        maxOutputTokens: 50,
        temperature: 0.3,
        topP: 0.9,
        stopSequences: ['END'],
        seed: 7,
        topK: 40,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        responseLogprobs: true,
        logprobs: 3,
        thinkingConfig: { thinkingBudget: 2048 },
        responseMimeType: 'application/json',
        responseJsonSchema: schema,
      },
      tools: [
        { functionDeclarations: [{ name: 'lookup', description: 'Finds a city', parametersJsonSchema: schema }] },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } },
    });
    // An explicit thinking budget wins over the effort, which shares its place.
    expect(response.headers['x-gateway-dropped-parameters']).toBe(
      'repetitionPenalty,minP,topA,logitBias,parallelToolCalls,includeReasoning,reasoningEffort,webSearchOptions,verbosity',
    );
  });

  it('maps a reasoning effort and thinking off to Gemini thinking settings', async () => {
    const ask = { messages: [{ role: 'user', content: 'hi' }] };
    expect(
      (await complete('via-gemini', { ...ask, reasoningEffort: 'high' })).headers['x-gateway-dropped-parameters'],
    ).toBeUndefined();
    expect(gateway.fakes.gemini.requests.at(-1)!.body).toMatchObject({
      generationConfig: { thinkingConfig: { thinkingLevel: 'HIGH' } },
    });
    await complete('via-gemini', { ...ask, thinking: { type: 'disabled' }, responseFormat: { type: 'json_object' } });
    expect(gateway.fakes.gemini.requests.at(-1)!.body).toMatchObject({
      generationConfig: { thinkingConfig: { thinkingBudget: 0 }, responseMimeType: 'application/json' },
    });
    const unknownEffort = await complete('via-gemini', { ...ask, reasoningEffort: 'xhigh' });
    expect(unknownEffort.headers['x-gateway-dropped-parameters']).toBe('reasoningEffort');
  });

  it('leaves out what the model does not take, as the capability gate decided', async () => {
    const response = await complete('narrow-openai', {
      messages: [{ role: 'user', content: 'hi' }],
      topK: 5,
      presencePenalty: 1,
    });
    expect(response.headers['x-gateway-dropped-parameters']).toBe('presencePenalty');
    const sent = gateway.fakes.openai.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent.top_k).toBe(5);
    expect(sent).not.toHaveProperty('presence_penalty');
  });

  const call = async (url: string, payload: object) => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await gateway.request({ method: 'POST', url, headers: { 'x-api-key': key }, payload });
    expect(response.statusCode, response.body).toBe(200);
    return response;
  };

  it('translates alpha answer formats, penalties and logprobs for a Gemini model', async () => {
    const response = await call('/api/alpha/v1/chat/completions', {
      model: 'via-gemini',
      messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema } },
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      logprobs: true,
      top_logprobs: 2,
      logit_bias: { '1': 5 },
    });
    expect(gateway.fakes.gemini.requests.at(-1)!.body).toMatchObject({
      generationConfig: {
        presencePenalty: 0.5,
        frequencyPenalty: 0.25,
        responseLogprobs: true,
        logprobs: 2,
        responseMimeType: 'application/json',
        responseJsonSchema: schema,
      },
    });
    expect(response.headers['x-gateway-dropped-parameters']).toBe('logitBias');
  });

  it('translates beta top_k and thinking for an OpenAI-compatible model', async () => {
    await call('/api/beta/v1/messages', {
      model: 'via-openai',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
      top_k: 12,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(gateway.fakes.openai.requests.at(-1)!.body).toMatchObject({ top_k: 12, reasoning: { max_tokens: 1024 } });
  });

  it('translates gamma sampling, schema and thinking settings for Anthropic and OpenAI models', async () => {
    const payload = {
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      generationConfig: {
        topK: 8,
        seed: 3,
        presencePenalty: 0.4,
        responseMimeType: 'application/json',
        responseSchema: { type: 'OBJECT', properties: { city: { type: 'STRING' } } },
        thinkingConfig: { thinkingBudget: 0 },
        responseLogprobs: true,
        logprobs: 4,
      },
    };
    const anthropic = await call('/api/gamma/v1beta/models/via-anthropic:generateContent', payload);
    expect(gateway.fakes.anthropic.requests.at(-1)!.body).toMatchObject({
      top_k: 8,
      thinking: { type: 'disabled' },
      output_config: {
        format: { type: 'json_schema', schema: { type: 'object', properties: { city: { type: 'string' } } } },
      },
    });
    expect(anthropic.headers['x-gateway-dropped-parameters']).toBe('seed,logprobs,topLogprobs,presencePenalty');
    await call('/api/gamma/v1beta/models/via-openai:generateContent', payload);
    expect(gateway.fakes.openai.requests.at(-1)!.body).toMatchObject({
      top_k: 8,
      seed: 3,
      presence_penalty: 0.4,
      logprobs: true,
      top_logprobs: 4,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'response', schema: { type: 'object', properties: { city: { type: 'string' } } } },
      },
      reasoning: { enabled: false },
    });
  });

  it('translates a Responses text format for a Gemini model, and leaves it out of a relayed request whose model does not take it', async () => {
    const text = { format: { type: 'json_schema', name: 'place', schema, strict: true }, verbosity: 'low' };
    const translated = await call('/api/alpha/v1/responses', { model: 'via-gemini', input: 'hi', text });
    expect(gateway.fakes.gemini.requests.at(-1)!.body).toMatchObject({
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema },
    });
    expect(translated.headers['x-gateway-dropped-parameters']).toBe('verbosity');
    const relayed = await call('/api/alpha/v1/responses', { model: 'narrow-openai', input: 'hi', text });
    expect(relayed.headers['x-gateway-dropped-parameters']).toBe('responseFormat,verbosity');
    const sent = gateway.fakes.openai.requests.at(-1)!.body as { model: string; text: object };
    expect([sent.model, sent.text]).toEqual(['gpt-4o-mini', {}]);
  });

  it('refuses tools that are not function tools of the documented shape', async () => {
    const response = await complete('via-openai', {
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'web_search' }],
    });
    expect(response.statusCode).toBe(400);
  });
});
