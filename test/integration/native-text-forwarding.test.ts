import { describe, expect, it } from 'vitest';
import {
  everyNativeField as everything,
  lookupTool as lookup,
  citySchema as schema,
} from '../support/native-text-fields.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * The native API's optional fields reach an upstream as its protocol's own fields; what a model does not take
 * or a protocol has no place for is named in x-gateway-dropped-parameters. The fakes record the exact bodies
 * sent. Each protocol's mapping of the fields of each surface is claimed in test/unit/parameter-translation.test.ts.
 */
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
  const setup = useFamilyGateway({
    extraConfig: [
      '  - id: narrow-openai',
      '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
      '    providers: [{ provider: openai, model: gpt-4o-mini, capabilities: { text: { supportedParameters: [topK] }, strictParams: false } }]',
    ],
  });

  const complete = async (model: string, body: object) => {
    const { key } = await setup.gateway.createFundedKey({ credits: 1 });
    return setup.gateway.request({
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
    expect(setup.gateway.fakes.openai.requests.at(-1)!.body).toEqual({
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
    expect(calls.map((call) => call.function.arguments).join('')).toBe(JSON.stringify({ city: 'where is Paris' }));
    expect(chunks.at(-1)!.finishReason).toBe('tool-calls');
  });

  it('leaves out what the model does not take, as the capability gate decided', async () => {
    const response = await complete('narrow-openai', {
      messages: [{ role: 'user', content: 'hi' }],
      topK: 5,
      presencePenalty: 1,
    });
    expect(response.headers['x-gateway-dropped-parameters']).toBe('presencePenalty');
    const sent = setup.gateway.fakes.openai.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent.top_k).toBe(5);
    expect(sent).not.toHaveProperty('presence_penalty');
  });

  const call = async (url: string, payload: object) => {
    const { key } = await setup.gateway.createFundedKey({ credits: 1 });
    const response = await setup.gateway.request({ method: 'POST', url, headers: { 'x-api-key': key }, payload });
    expect(response.statusCode, response.body).toBe(200);
    return response;
  };

  it('translates a Responses text format for a Gemini model, and leaves it out of a relayed request whose model does not take it', async () => {
    const text = { format: { type: 'json_schema', name: 'place', schema, strict: true }, verbosity: 'low' };
    const translated = await call('/api/alpha/v1/responses', { model: 'via-gemini', input: 'hi', text });
    expect(setup.gateway.fakes.gemini.requests.at(-1)!.body).toMatchObject({
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema },
    });
    expect(translated.headers['x-gateway-dropped-parameters']).toBe('text.verbosity');
    const relayed = await call('/api/alpha/v1/responses', { model: 'narrow-openai', input: 'hi', text });
    expect(relayed.headers['x-gateway-dropped-parameters']).toBe('text.format,text.verbosity');
    const sent = setup.gateway.fakes.openai.requests.at(-1)!.body as { model: string; text: object };
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
