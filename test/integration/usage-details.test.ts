import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useFamilyGateway } from '../support/family-gateway.ts';
import { modelYaml } from '../support/test-gateway.ts';

/**
 * The parts of a usage a provider tells apart (thinking tokens, a prompt read from the cache) reach a client of
 * another protocol in that protocol's own detail fields, never as a false zero where the provider said more.
 */
describe('usage details across protocols', () => {
  const setup = useFamilyGateway({
    extraConfig: [
      modelYaml('thinking-gemini', { provider: 'gemini', upstream: 'fake-thinking' }),
      modelYaml('cached-anthropic', { provider: 'anthropic', upstream: 'fake-cached' }),
    ],
    credits: 5,
    listen: true,
  });

  const post = async (url: string, payload: object) => {
    const response = await setup.gateway.request({ method: 'POST', url, headers: { 'x-api-key': setup.key }, payload });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ usage: Record<string, unknown> }>().usage;
  };

  it("Gemini's thinking tokens are the Responses API's reasoning tokens and chat's, within the output", async () => {
    const responses = await post('/api/alpha/v1/responses', { model: 'thinking-gemini', input: 'alpha beta' });
    expect(responses).toMatchObject({ output_tokens_details: { reasoning_tokens: 7 }, input_tokens_details: {} });
    const chat = await post('/api/alpha/v1/chat/completions', {
      model: 'thinking-gemini',
      messages: [{ role: 'user', content: 'alpha beta' }],
    });
    expect(chat).toMatchObject({ completion_tokens_details: { reasoning_tokens: 7 } });
    expect(chat.completion_tokens).toBe(responses.output_tokens);
  });

  it("an Anthropic prompt's cache reads are cached tokens, counted in the input, whole and streamed", async () => {
    const responses = await post('/api/alpha/v1/responses', { model: 'cached-anthropic', input: 'alpha beta' });
    expect(responses).toMatchObject({ input_tokens: 1_002, input_tokens_details: { cached_tokens: 1_000 } });
    // Streamed, message_delta repeats input_tokens with null cache counts: the 1,000 read from the cache stay.
    const streamed = await setup.gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': setup.key },
      payload: {
        model: 'cached-anthropic',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'alpha beta' }],
      },
    });
    expect(streamed.body).toContain('"prompt_tokens":1002');
    expect(streamed.body).toContain('"prompt_tokens_details":{"cached_tokens":1000}');
  });

  it('reads as the official SDKs read it, with their defaults', async () => {
    const openai = new OpenAI({ apiKey: setup.key, baseURL: `${setup.address}/api/alpha/v1` });
    const chat = await openai.chat.completions.create({
      model: 'thinking-gemini',
      messages: [{ role: 'user', content: 'alpha beta' }],
    });
    expect(chat.usage?.completion_tokens_details?.reasoning_tokens).toBe(7);
    const response = await openai.responses.create({ model: 'cached-anthropic', input: 'alpha beta' });
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(1_000);
    const anthropic = new Anthropic({ apiKey: setup.key, baseURL: `${setup.address}/api/beta` });
    const message = await anthropic.messages.create({
      model: 'thinking-gemini',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'alpha beta' }],
    });
    expect(message.usage.output_tokens).toBe(chat.usage?.completion_tokens);
  });
});
