import { GoogleGenAI } from '@google/genai';
import { describe, expect, it } from 'vitest';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * @google/genai with its defaults keeps each streamed chunk of an answer as a `model` content of its own (the
 * call, then the last chunk's empty text): model contents in a row are one turn, which reaches every protocol
 * as one assistant message, so a streamed tool loop works whichever upstream serves it.
 */
describe('@google/genai streamed tool loops on every upstream', () => {
  const parameters = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } as const;

  const setup = useFamilyGateway({ credits: 5, listen: true });

  it.each(['via-openai', 'via-anthropic', 'via-gemini'])(
    'a chat calls, gets the result and answers (%s)',
    async (model) => {
      const client = new GoogleGenAI({
        apiKey: setup.key,
        httpOptions: { baseUrl: `${setup.address}/api/gamma`, retryOptions: { attempts: 1 } },
      });
      const chat = client.chats.create({
        model,
        config: { tools: [{ functionDeclarations: [{ name: 'lookup', parametersJsonSchema: parameters }] }] },
      });
      const calls = [];
      for await (const chunk of await chat.sendMessageStream({ message: 'weather in Paris' }))
        calls.push(...(chunk.functionCalls ?? []));
      expect(calls).toHaveLength(1);
      let text = '';
      const reply = await chat.sendMessageStream({
        message: [{ functionResponse: { id: calls[0]!.id, name: 'lookup', response: { result: 'sunny' } } }],
      });
      for await (const chunk of reply) text += chunk.text ?? '';
      expect(text).toContain('sunny');
    },
  );
});
