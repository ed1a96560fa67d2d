import { describe, expect, it } from 'vitest';
import { betaText, dataLines } from '../support/answer-text.ts';
import { usageRecords } from '../support/http-helpers.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * Every text surface against every upstream family, streamed and not: the answer's text, the finish, and a
 * bill equal to the upstream's reported usage. Each fake echoes "Echo: <last user text>" and reports one
 * token per word; the sandbox echoes the text itself and counts with the gateway's tokenizer.
 */
type Family = 'openai' | 'anthropic' | 'gemini' | 'sandbox';
const families: Family[] = ['openai', 'anthropic', 'gemini', 'sandbox'];
const prompt = 'alpha beta gamma';

interface Surface {
  name: string;
  request(model: string, stream: boolean): { url: string; headers: Record<string, string>; payload: object };
  /** The answer's text, from a JSON body or an event stream. */
  text(body: string, stream: boolean): string;
}

const surfaces: Surface[] = [
  {
    name: 'native',
    request: (model) => ({
      url: '/api/v1/text/completions',
      headers: {},
      payload: { model, messages: [{ role: 'user', content: prompt }] },
    }),
    text: (body) =>
      dataLines(body)
        .map((chunk) => (chunk.delta as string | undefined) ?? '')
        .join(''),
  },
  {
    name: 'alpha',
    request: (model, stream) => ({
      url: '/api/alpha/v1/chat/completions',
      headers: {},
      payload: { model, messages: [{ role: 'user', content: prompt }], stream },
    }),
    text: (body, stream) =>
      stream
        ? dataLines(body)
            .map((chunk) => (chunk.choices as Array<{ delta?: { content?: string } }>)[0]?.delta?.content ?? '')
            .join('')
        : (JSON.parse(body) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content,
  },
  {
    name: 'beta',
    request: (model, stream) => ({
      url: '/api/beta/v1/messages',
      headers: {},
      payload: { model, max_tokens: 100, messages: [{ role: 'user', content: prompt }], stream },
    }),
    text: betaText,
  },
  {
    name: 'gamma',
    request: (model, stream) => ({
      url: `/api/gamma/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
      headers: {},
      payload: { contents: [{ role: 'user', parts: [{ text: prompt }] }] },
    }),
    text: (body, stream) =>
      (stream ? dataLines(body) : [JSON.parse(body) as Record<string, unknown>])
        .map((chunk) =>
          (chunk.candidates as Array<{ content: { parts: Array<{ text?: string }> } }>)[0]!.content.parts
            .map((part) => part.text ?? '')
            .join(''),
        )
        .join(''),
  },
];

describe('every text surface against every upstream family', () => {
  const setup = useFamilyGateway();

  for (const surface of surfaces) {
    for (const family of families) {
      for (const stream of surface.name === 'native' ? [true] : [false, true]) {
        it(`${surface.name} -> ${family}, ${stream ? 'streamed' : 'not streamed'}`, async () => {
          const { key } = await setup.gateway.createFundedKey({ credits: 1 });
          const { url, headers, payload } = surface.request(`via-${family}`, stream);
          const response = await setup.gateway.request({
            method: 'POST',
            url,
            headers: { ...headers, 'x-api-key': key },
            payload,
          });
          expect(response.statusCode, response.body).toBe(200);
          if (stream) expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
          expect(surface.text(response.body, stream)).toBe(family === 'sandbox' ? prompt : `Echo: ${prompt}`);
          const [record] = await usageRecords(setup.gateway, key);
          expect(record?.status).toBe('succeeded');
          if (family !== 'sandbox') {
            // The fakes report one token per word: 3 prompt words, 4 answer words, at 1 and 2 USD per million.
            expect(record?.usage).toMatchObject({ promptTokens: 3, completionTokens: 4 });
            expect(Math.round(record!.usdCost * 1e9)).toBe(3 * 1000 + 4 * 2000);
          }
        });
      }
    }
  }
});
