import { createAnthropic } from '@ai-sdk/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { generateText } from 'ai';
import { describe, expect, it } from 'vitest';
import { usageRecords } from '../support/http-helpers.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';
import { modelYaml } from '../support/test-gateway.ts';

/**
 * Answers a provider refuses in its own protocol's terms: a Gemini prompt blocked (`promptFeedback.blockReason`,
 * no candidates) and an OpenAI refusal (`delta.refusal`, finished with `stop`). Each is a complete answer, told
 * to the client of any surface as its protocol's content filter, and billed as a success, never a 502.
 */
describe('answers the provider refused', () => {
  const setup = useFamilyGateway({
    extraConfig: [
      modelYaml('blocked-gemini', { provider: 'gemini', upstream: 'fake-blocked' }),
      modelYaml('refusing-openai', { provider: 'openai', upstream: 'fake-refusal' }),
    ],
  });

  const post = async (url: string, payload: object) => {
    const { key } = await setup.gateway.createFundedKey({ credits: 1 });
    const response = await setup.gateway.request({ method: 'POST', url, headers: { 'x-api-key': key }, payload });
    expect(response.statusCode, response.body).toBe(200);
    expect(await usageRecords(setup.gateway, key)).toMatchObject([{ status: 'succeeded' }]);
    return response;
  };
  const messages = [{ role: 'user', content: 'something it will not answer' }];

  it('a blocked Gemini prompt reaches alpha chat as content_filter, whole and streamed', async () => {
    const whole = await post('/api/alpha/v1/chat/completions', { model: 'blocked-gemini', messages });
    expect(whole.json()).toMatchObject({ choices: [{ finish_reason: 'content_filter', message: { content: '' } }] });
    const streamed = await post('/api/alpha/v1/chat/completions', { model: 'blocked-gemini', messages, stream: true });
    expect(streamed.body).toContain('"finish_reason":"content_filter"');
    expect(streamed.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('a blocked Gemini prompt reaches the Responses API as a Response incomplete for its content filter', async () => {
    const input = 'something it will not answer';
    const whole = await post('/api/alpha/v1/responses', { model: 'blocked-gemini', input });
    expect(whole.json()).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
    const streamed = await post('/api/alpha/v1/responses', { model: 'blocked-gemini', input, stream: true });
    expect(streamed.body).toContain('event: response.incomplete');
    expect(streamed.body).not.toContain('event: response.completed');
    expect(streamed.body).toContain('"incomplete_details":{"reason":"content_filter"}');
  });

  it('a blocked Gemini prompt reaches beta as a refusal, and relayed to gamma ends the stream complete', async () => {
    const beta = await post('/api/beta/v1/messages', { model: 'blocked-gemini', max_tokens: 50, messages });
    expect(beta.json()).toMatchObject({ stop_reason: 'refusal' });
    const relayed = await post('/api/gamma/v1beta/models/blocked-gemini:streamGenerateContent?alt=sse', {
      contents: [{ role: 'user', parts: [{ text: 'something it will not answer' }] }],
    });
    expect(relayed.body).toContain('"blockReason":"SAFETY"');
  });

  it("an OpenAI refusal reaches beta and gamma as the refusal's words, ended by the content filter", async () => {
    const refusal = "I'm sorry, I can't help with that.";
    const beta = await post('/api/beta/v1/messages', { model: 'refusing-openai', max_tokens: 50, messages });
    expect(beta.json()).toMatchObject({ stop_reason: 'refusal', content: [{ type: 'text', text: refusal }] });
    const gamma = await post('/api/gamma/v1beta/models/refusing-openai:generateContent', {
      contents: [{ role: 'user', parts: [{ text: 'something it will not answer' }] }],
    });
    expect(gamma.json()).toMatchObject({
      candidates: [{ content: { parts: [{ text: refusal }] }, finishReason: 'SAFETY' }],
    });
  });

  it("carries an OpenAI refusal a client sends back in its history as the assistant's words to another protocol", async () => {
    const refusal = "I'm sorry, I can't help with that.";
    const chat = [
      { role: 'user', content: 'something it will not answer' },
      // As the openai SDK hands back a refused answer's message, pushed into the history as it is.
      { role: 'assistant', content: null, refusal, annotations: [] },
      { role: 'user', content: 'why not?' },
    ];
    await post('/api/alpha/v1/chat/completions', { model: 'via-anthropic', messages: chat });
    expect((setup.gateway.fakes.anthropic.requests.at(-1)!.body as { messages: unknown[] }).messages[1]).toEqual({
      role: 'assistant',
      content: refusal,
    });
    const input = [
      { role: 'user', content: 'something it will not answer' },
      // A Response's refused output item, sent back as the next turn's input.
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'refusal', refusal }],
      },
      { role: 'user', content: 'why not?' },
    ];
    await post('/api/alpha/v1/responses', { model: 'via-gemini', input });
    expect((setup.gateway.fakes.gemini.requests.at(-1)!.body as { contents: unknown[] }).contents[1]).toEqual({
      role: 'model',
      parts: [{ text: refusal }],
    });
  });

  it('reaches the AI SDK and LangChain, with their defaults, as their own content filter', async () => {
    const address = await setup.gateway.app.listen({ port: 0, host: '127.0.0.1' });
    const { key } = await setup.gateway.createFundedKey({ credits: 1 });
    const anthropic = createAnthropic({ apiKey: key, baseURL: `${address}/api/beta/v1` });
    const blocked = await generateText({ model: anthropic('blocked-gemini'), prompt: 'something it will not answer' });
    expect(blocked.finishReason).toBe('content-filter');
    const refused = await generateText({ model: anthropic('refusing-openai'), prompt: 'something it will not answer' });
    expect(refused).toMatchObject({ finishReason: 'content-filter', text: "I'm sorry, I can't help with that." });
    const chat = new ChatOpenAI({
      model: 'blocked-gemini',
      apiKey: key,
      configuration: { baseURL: `${address}/api/alpha/v1` },
    });
    const message = await chat.invoke('something it will not answer');
    expect(message.response_metadata).toMatchObject({ finish_reason: 'content_filter' });
  });
});
