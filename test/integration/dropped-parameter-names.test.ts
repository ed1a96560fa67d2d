import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * `x-gateway-dropped-parameters` names a field a translated call goes without as the client sent it, in its own
 * protocol's spelling (gamma `generationConfig.seed`, alpha `presence_penalty`), never by the gateway's native
 * name for it; each surface driven by its official SDK.
 */
describe('dropped parameters named as the client sent them', () => {
  const setup = useFamilyGateway({ credits: 5, listen: true });

  const sentTo = (family: 'openai' | 'anthropic' | 'gemini') =>
    setup.gateway.fakes[family].requests.at(-1)!.body as Record<string, unknown>;
  const openai = () => new OpenAI({ apiKey: setup.key, baseURL: `${setup.address}/api/alpha/v1`, maxRetries: 0 });
  const lookup = { type: 'object', properties: { query: { type: 'string' } } } as const;

  it('gamma: generationConfig.seed, which Anthropic has no place for', async () => {
    const client = new GoogleGenAI({
      apiKey: setup.key,
      httpOptions: { baseUrl: `${setup.address}/api/gamma`, retryOptions: { attempts: 1 } },
    });
    for (const stream of [false, true]) {
      const request = { model: 'via-anthropic', contents: 'hello there', config: { seed: 7, temperature: 0.5 } };
      const headers = stream
        ? (await (await client.models.generateContentStream(request)).next()).value?.sdkHttpResponse?.headers
        : (await client.models.generateContent(request)).sdkHttpResponse?.headers;
      expect(headers?.['x-gateway-dropped-parameters']).toBe('generationConfig.seed');
      expect(sentTo('anthropic')).toMatchObject({ temperature: 0.5 });
      expect(sentTo('anthropic')).not.toHaveProperty('seed');
    }
  });

  it('alpha chat: presence_penalty and reasoning_effort, which Anthropic has no place for', async () => {
    const { response } = await openai()
      .chat.completions.create({
        model: 'via-anthropic',
        messages: [{ role: 'user', content: 'hello there' }],
        presence_penalty: 0.5,
        reasoning_effort: 'low',
      })
      .withResponse();
    expect(response.headers.get('x-gateway-dropped-parameters')).toBe('presence_penalty,reasoning_effort');
  });

  it('Responses: text.verbosity and parallel_tool_calls, which Gemini has no place for', async () => {
    const { response } = await openai()
      .responses.create({
        model: 'via-gemini',
        input: 'hello there',
        text: { verbosity: 'low' },
        tools: [{ type: 'function', name: 'lookup', parameters: lookup, strict: false }],
        parallel_tool_calls: false,
      })
      .withResponse();
    expect(response.headers.get('x-gateway-dropped-parameters')).toBe('parallel_tool_calls,text.verbosity');
  });

  it("beta: tool_choice.disable_parallel_tool_use, which Gemini has no place for, and the tool choice's kind is kept", async () => {
    const client = new Anthropic({ apiKey: setup.key, baseURL: `${setup.address}/api/beta`, maxRetries: 0 });
    const { response } = await client.messages
      .create({
        model: 'via-gemini',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hello there' }],
        tools: [{ name: 'lookup', input_schema: lookup }],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      })
      .withResponse();
    expect(response.headers.get('x-gateway-dropped-parameters')).toBe('tool_choice.disable_parallel_tool_use');
  });

  it('native: seed, which Anthropic has no place for, by its native name', async () => {
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/v1/text/completions',
      headers: { 'x-api-key': setup.key },
      payload: { model: 'via-anthropic', messages: [{ role: 'user', content: 'hello there' }], seed: 7 },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['x-gateway-dropped-parameters']).toBe('seed');
  });
});
