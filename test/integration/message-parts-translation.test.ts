import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * A system prompt given in several parts (Gemini `systemInstruction.parts`, Anthropic `system` text blocks, an
 * OpenAI system message of text parts, the Responses API's `instructions` beside developer messages), and a
 * user's message of several texts, reach a model of another protocol part by part, never run together.
 */
describe('system prompts and user messages in several parts, across protocols', () => {
  const setup = useFamilyGateway({ credits: 5, listen: true });

  const texts = ['Be brief.', 'Answer in French.'];
  const sentTo = (family: 'openai' | 'anthropic' | 'gemini') =>
    setup.gateway.fakes[family].requests.at(-1)!.body as Record<string, unknown>;
  const openAiSystem = { role: 'system', content: texts.map((text) => ({ type: 'text', text })) };
  const anthropicSystem = texts.map((text) => ({ type: 'text', text }));
  const geminiSystem = { parts: texts.map((text) => ({ text })) };

  it('gamma: systemInstruction parts reach OpenAI as text parts and Anthropic as text blocks', async () => {
    const client = new GoogleGenAI({
      apiKey: setup.key,
      httpOptions: { baseUrl: `${setup.address}/api/gamma`, retryOptions: { attempts: 1 } },
    });
    const config = { systemInstruction: { parts: texts.map((text) => ({ text })) } };
    const openai = await client.models.generateContent({ model: 'via-openai', contents: 'hello', config });
    expect(openai.text).toContain('hello');
    expect((sentTo('openai').messages as unknown[])[0]).toEqual(openAiSystem);
    await client.models.generateContent({ model: 'via-anthropic', contents: 'hello', config });
    expect(sentTo('anthropic').system).toEqual(anthropicSystem);
  });

  it('beta: system text blocks reach OpenAI as text parts and Gemini as systemInstruction parts', async () => {
    const client = new Anthropic({ apiKey: setup.key, baseURL: `${setup.address}/api/beta`, maxRetries: 0 });
    const system = texts.map((text) => ({ type: 'text' as const, text }));
    const messages = [{ role: 'user' as const, content: 'hello' }];
    await client.messages.create({ model: 'via-openai', max_tokens: 100, system, messages });
    expect((sentTo('openai').messages as unknown[])[0]).toEqual(openAiSystem);
    await client.messages.create({ model: 'via-gemini', max_tokens: 100, system, messages });
    expect(sentTo('gemini').systemInstruction).toMatchObject(geminiSystem);
  });

  it('alpha chat: a system message of text parts reaches Anthropic as text blocks and Gemini as parts', async () => {
    const client = new OpenAI({ apiKey: setup.key, baseURL: `${setup.address}/api/alpha/v1`, maxRetries: 0 });
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: texts.map((text) => ({ type: 'text' as const, text })) },
      { role: 'user', content: 'hello' },
    ];
    await client.chat.completions.create({ model: 'via-anthropic', messages });
    expect(sentTo('anthropic').system).toEqual(anthropicSystem);
    await client.chat.completions.create({ model: 'via-gemini', messages });
    expect(sentTo('gemini').systemInstruction).toMatchObject(geminiSystem);
  });

  it('Responses: instructions and a developer message of text parts reach Anthropic and Gemini part by part', async () => {
    const client = new OpenAI({ apiKey: setup.key, baseURL: `${setup.address}/api/alpha/v1`, maxRetries: 0 });
    const request = {
      instructions: 'Be brief.',
      input: [
        { role: 'developer' as const, content: [{ type: 'input_text' as const, text: 'Answer in French.' }] },
        {
          role: 'developer' as const,
          content: [
            { type: 'input_text' as const, text: 'Use metric units.' },
            { type: 'input_text' as const, text: 'Cite no sources.' },
          ],
        },
        { role: 'user' as const, content: 'hello' },
      ],
    };
    const all = [...texts, 'Use metric units.', 'Cite no sources.'];
    const answer = await client.responses.create({ model: 'via-anthropic', ...request });
    expect(answer.instructions).toBe('Be brief.');
    expect(sentTo('anthropic').system).toEqual(all.map((text) => ({ type: 'text', text })));
    await client.responses.create({ model: 'via-gemini', ...request });
    expect(sentTo('gemini').systemInstruction).toMatchObject({ parts: all.map((text) => ({ text })) });
  });

  it('a system prompt of one part goes as the one string it is', async () => {
    const client = new Anthropic({ apiKey: setup.key, baseURL: `${setup.address}/api/beta`, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'hello' }];
    await client.messages.create({ model: 'via-openai', max_tokens: 100, system: 'Be brief.', messages });
    expect((sentTo('openai').messages as unknown[])[0]).toEqual({ role: 'system', content: 'Be brief.' });
    const chat = new OpenAI({ apiKey: setup.key, baseURL: `${setup.address}/api/alpha/v1`, maxRetries: 0 });
    await chat.chat.completions.create({
      model: 'via-anthropic',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello' },
      ],
    });
    expect(sentTo('anthropic').system).toBe('Be brief.');
  });

  const asked = ['Translate into French:', 'Good morning.'];
  const lastUserMessage = (family: 'openai' | 'anthropic') =>
    (sentTo(family).messages as Array<{ role: string }>).findLast((message) => message.role === 'user');

  it('gamma: a user content of several text parts reaches OpenAI as text parts and Anthropic as text blocks', async () => {
    const client = new GoogleGenAI({
      apiKey: setup.key,
      httpOptions: { baseUrl: `${setup.address}/api/gamma`, retryOptions: { attempts: 1 } },
    });
    const contents = [{ role: 'user', parts: asked.map((text) => ({ text })) }];
    await client.models.generateContent({ model: 'via-openai', contents });
    expect(lastUserMessage('openai')).toEqual({ role: 'user', content: asked.map((text) => ({ type: 'text', text })) });
    await client.models.generateContent({ model: 'via-anthropic', contents });
    expect(lastUserMessage('anthropic')).toEqual({
      role: 'user',
      content: asked.map((text) => ({ type: 'text', text })),
    });
  });

  it('beta and alpha: a user message of several texts reaches Gemini as parts', async () => {
    const beta = new Anthropic({ apiKey: setup.key, baseURL: `${setup.address}/api/beta`, maxRetries: 0 });
    const content = asked.map((text) => ({ type: 'text' as const, text }));
    await beta.messages.create({ model: 'via-gemini', max_tokens: 100, messages: [{ role: 'user', content }] });
    expect((sentTo('gemini').contents as unknown[]).at(-1)).toEqual({
      role: 'user',
      parts: asked.map((text) => ({ text })),
    });
    const alpha = new OpenAI({ apiKey: setup.key, baseURL: `${setup.address}/api/alpha/v1`, maxRetries: 0 });
    await alpha.chat.completions.create({ model: 'via-gemini', messages: [{ role: 'user', content }] });
    expect((sentTo('gemini').contents as unknown[]).at(-1)).toEqual({
      role: 'user',
      parts: asked.map((text) => ({ text })),
    });
    await alpha.responses.create({
      model: 'via-anthropic',
      input: [{ role: 'user', content: asked.map((text) => ({ type: 'input_text' as const, text })) }],
    });
    expect(lastUserMessage('anthropic')).toEqual({ role: 'user', content });
  });

  // Anthropic refuses a text block that is empty anywhere in a message, and Gemini an empty text part: a message
  // whose texts were run together never sent one.
  it("an empty text part among a user message's texts reaches no protocol as an empty block or part", async () => {
    const alpha = new OpenAI({ apiKey: setup.key, baseURL: `${setup.address}/api/alpha/v1`, maxRetries: 0 });
    const content = [
      { type: 'text' as const, text: '' },
      { type: 'text' as const, text: 'Good morning.' },
    ];
    await alpha.chat.completions.create({ model: 'via-anthropic', messages: [{ role: 'user', content }] });
    expect(lastUserMessage('anthropic')).toEqual({ role: 'user', content: 'Good morning.' });
    await alpha.chat.completions.create({ model: 'via-gemini', messages: [{ role: 'user', content }] });
    expect((sentTo('gemini').contents as unknown[]).at(-1)).toEqual({
      role: 'user',
      parts: [{ text: 'Good morning.' }],
    });
  });

  it('gamma: a systemInstruction part other than text is refused for another protocol, naming it', async () => {
    const client = new GoogleGenAI({
      apiKey: setup.key,
      httpOptions: { baseUrl: `${setup.address}/api/gamma`, retryOptions: { attempts: 1 } },
    });
    // (A picture there is refused first by a model that reads no images: a call is the part left to try.)
    const call = { functionCall: { name: 'lookup', args: { city: 'Paris' } } };
    const sent = setup.gateway.fakes.openai.requests.length;
    await expect(
      client.models.generateContent({
        model: 'via-openai',
        contents: 'hello',
        config: { systemInstruction: { parts: [{ text: 'Be brief.' }, call] } },
      }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('systemInstruction parts other than text'),
    });
    expect(setup.gateway.fakes.openai.requests.length).toBe(sent);
  });
});
