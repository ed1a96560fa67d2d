import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { GoogleGenAI } from '@google/genai';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { fakeThinkingSignature } from '../fakes/anthropic-fake.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';
import { modelYaml } from '../support/test-gateway.ts';

/**
 * An Anthropic model that thinks before it answers (a thinking block and a redacted_thinking block, then the
 * text) answers alpha, Responses and gamma clients with the text alone, whole and streamed, in the shape each
 * SDK reads: the other protocols are not sent another model's thinking, and none of it is the answer's text.
 * Thinking a beta client sends back in its history, and a Responses client's reasoning items, have no place in
 * another protocol: the call goes without them and names them.
 */
describe('thinking of an Anthropic model, across protocols', () => {
  const answer = 'Echo: hello there';

  const setup = useFamilyGateway({
    extraConfig: [modelYaml('ponders', { provider: 'anthropic', upstream: 'fake-thinking' })],
    credits: 5,
    listen: true,
  });

  const openai = () => new OpenAI({ apiKey: setup.key, baseURL: `${setup.address}/api/alpha/v1`, maxRetries: 0 });
  const noThinking = (value: unknown) => {
    const text = JSON.stringify(value);
    expect(text).not.toContain('think');
    expect(text).not.toContain('EmwKAhgB');
  };

  it('alpha chat (openai SDK): the answer is the text alone, whole and streamed', async () => {
    const messages = [{ role: 'user' as const, content: 'hello there' }];
    const whole = await openai().chat.completions.create({ model: 'ponders', messages });
    expect(whole.choices[0]!.message.content).toBe(answer);
    noThinking(whole);
    const chunks = [];
    for await (const chunk of await openai().chat.completions.create({ model: 'ponders', messages, stream: true }))
      chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(answer);
    noThinking(chunks);
  });

  it('Responses (openai SDK): one message item of the text, whole and streamed', async () => {
    const whole = await openai().responses.create({ model: 'ponders', input: 'hello there' });
    expect(whole.output_text).toBe(answer);
    expect(whole.output.map((item) => item.type)).toEqual(['message']);
    noThinking(whole.output);
    const events = [];
    for await (const event of await openai().responses.create({ model: 'ponders', input: 'hello there', stream: true }))
      events.push(event);
    const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
    expect(deltas.join('')).toBe(answer);
    const completed = events.find((event) => event.type === 'response.completed');
    expect(completed?.type === 'response.completed' && completed.response.output).toMatchObject([
      { type: 'message', content: [{ type: 'output_text', text: answer }] },
    ]);
    noThinking(events);
  });

  it('gamma (@google/genai): the text alone, with no thought parts, whole and streamed', async () => {
    const client = new GoogleGenAI({
      apiKey: setup.key,
      httpOptions: { baseUrl: `${setup.address}/api/gamma`, retryOptions: { attempts: 1 } },
    });
    const whole = await client.models.generateContent({ model: 'ponders', contents: 'hello there' });
    expect(whole.text).toBe(answer);
    expect(whole.candidates?.[0]?.content?.parts?.some((part) => part.thought === true)).toBe(false);
    noThinking(whole.candidates);
    let streamed = '';
    const chunks = [];
    for await (const chunk of await client.models.generateContentStream({
      model: 'ponders',
      contents: 'hello there',
    })) {
      streamed += chunk.text ?? '';
      chunks.push(chunk.candidates);
    }
    expect(streamed).toBe(answer);
    noThinking(chunks);
  });

  it('the AI SDK through the OpenAI-compatible surface: the text intact, no reasoning', async () => {
    const provider = createOpenAICompatible({
      name: 'gateway',
      apiKey: setup.key,
      baseURL: `${setup.address}/api/alpha/v1`,
    });
    const whole = await generateText({ model: provider('ponders'), prompt: 'hello there' });
    expect(whole.text).toBe(answer);
    expect(whole.reasoningText).toBeUndefined();
    const streamed = streamText({ model: provider('ponders'), prompt: 'hello there' });
    expect(await streamed.text).toBe(answer);
    expect(await streamed.reasoningText).toBeUndefined();
  });

  it('beta: thinking and redacted_thinking blocks sent back go to another protocol without them, named', async () => {
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: { 'x-api-key': setup.key },
      payload: {
        model: 'via-openai',
        max_tokens: 100,
        messages: [
          { role: 'user', content: 'hello' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Let me think about this.', signature: fakeThinkingSignature },
              { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
              { type: 'text', text: 'Echo: hello' },
            ],
          },
          { role: 'user', content: 'hello there' },
        ],
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['x-gateway-dropped-parameters']).toBe(
      'messages.content.thinking,messages.content.redacted_thinking',
    );
    const sent = setup.gateway.fakes.openai.requests.at(-1)!.body as { messages: unknown[] };
    expect(sent.messages[1]).toEqual({ role: 'assistant', content: 'Echo: hello' });
    noThinking(sent);
  });
});
