import { describe, expect, it } from 'vitest';
import { keyHeaders } from '../support/http-helpers.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';

/** A pass-through answer names the catalog model the client asked for, never the upstream's own id. */
describe('the model named by relayed answers', () => {
  const setup = useFamilyGateway({ credits: 1 });

  const post = (url: string, payload: object) =>
    setup.gateway.request({ method: 'POST', url, payload, headers: keyHeaders(setup.key) });
  const dataOf = (body: string) =>
    body
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
  const messages = [{ role: 'user', content: 'alpha beta gamma' }];

  it('alpha chat completions and responses, whole and streamed', async () => {
    const whole = await post('/api/alpha/v1/chat/completions', { model: 'via-openai', messages });
    expect(whole.json()).toMatchObject({
      model: 'via-openai',
      choices: [{ message: { content: expect.any(String) } }],
    });
    const streamed = await post('/api/alpha/v1/chat/completions', { model: 'via-openai', messages, stream: true });
    const chunks = dataOf(streamed.body);
    expect(chunks.length).toBeGreaterThan(1);
    expect(new Set(chunks.map((chunk) => chunk.model))).toEqual(new Set(['via-openai']));
    expect(streamed.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const response = await post('/api/alpha/v1/responses', { model: 'via-openai', input: 'hi' });
    expect(response.json()).toMatchObject({ model: 'via-openai' });
    const events = dataOf(
      (await post('/api/alpha/v1/responses', { model: 'via-openai', input: 'hi', stream: true })).body,
    );
    const named = events.flatMap((event) => {
      const inner = event.response as { model?: unknown } | undefined;
      return inner?.model === undefined ? [] : [inner.model];
    });
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set(['via-openai']));
  });

  it('beta messages, whole and in message_start', async () => {
    const whole = await post('/api/beta/v1/messages', { model: 'via-anthropic', max_tokens: 20, messages });
    expect(whole.json()).toMatchObject({ type: 'message', model: 'via-anthropic' });
    const streamed = await post('/api/beta/v1/messages', {
      model: 'via-anthropic',
      max_tokens: 20,
      messages,
      stream: true,
    });
    const start = dataOf(streamed.body).find((event) => event.type === 'message_start');
    expect(start).toMatchObject({ message: { model: 'via-anthropic' } });
  });

  it("gamma generateContent's modelVersion, whole, as events and as a JSON array", async () => {
    const contents = [{ role: 'user', parts: [{ text: 'alpha beta gamma' }] }];
    const whole = await post('/api/gamma/v1beta/models/via-gemini:generateContent', { contents });
    expect(whole.json()).toMatchObject({ modelVersion: 'via-gemini' });
    const sse = await post('/api/gamma/v1beta/models/via-gemini:streamGenerateContent?alt=sse', { contents });
    const chunks = dataOf(sse.body);
    expect(chunks.length).toBeGreaterThan(0);
    expect(new Set(chunks.map((chunk) => chunk.modelVersion))).toEqual(new Set(['via-gemini']));
    const array = await post('/api/gamma/v1beta/models/via-gemini:streamGenerateContent', { contents });
    const elements = array.json<Array<{ modelVersion?: string }>>();
    expect(elements.length).toBeGreaterThan(0);
    expect(new Set(elements.map((element) => element.modelVersion))).toEqual(new Set(['via-gemini']));
  });
});
