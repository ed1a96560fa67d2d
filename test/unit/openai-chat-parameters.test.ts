import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../src/domain/chat.ts';
import { Secret } from '../../src/domain/secret.ts';
import { encodeChatRequest, openAiCarries } from '../../src/providers/openai/openai-chat.ts';

/** OpenAI itself cannot be faked at its own host name, so what it is sent is checked on the encoder. */
const request: ChatRequest = {
  upstreamModel: 'gpt-4.1',
  messages: [{ role: 'user', content: 'hi' }],
  topK: 40,
  minP: 0.1,
  topA: 0.2,
  repetitionPenalty: 1.1,
  includeReasoning: true,
  thinking: { type: 'disabled' },
  presencePenalty: 0.5,
  structuredOutputs: true,
};
const openAi = {
  baseUrl: 'https://api.openai.com/v1',
  apiKey: new Secret('k'),
  timeoutMs: 1000,
  firstByteTimeoutMs: 1000,
  connectTimeoutMs: 1000,
  maxEventCharacters: 65536,
  headers: {},
};
const router = { ...openAi, baseUrl: 'https://openrouter.ai/api/v1' };

describe('OpenAI chat parameters', () => {
  it('sends OpenAI itself none of the fields only compatible servers take', () => {
    const body = encodeChatRequest(request);
    expect(body.presence_penalty).toBe(0.5);
    for (const field of ['top_k', 'min_p', 'top_a', 'repetition_penalty', 'reasoning', 'include_reasoning'])
      expect(body).not.toHaveProperty(field);
    expect(openAiCarries('topK', request, openAi)).toBe(false);
    expect(openAiCarries('thinking', request, openAi)).toBe(false);
    expect(openAiCarries('topK', request, router)).toBe(true);
  });

  it('sends the output limit as max_completion_tokens to OpenAI itself, whose reasoning models refuse max_tokens, and as max_tokens to compatible servers', () => {
    const limited: ChatRequest = { ...request, maxTokens: 321 };
    expect(encodeChatRequest(limited)).toMatchObject({ max_completion_tokens: 321 });
    expect(encodeChatRequest(limited)).not.toHaveProperty('max_tokens');
    expect(encodeChatRequest(limited, { compatible: true })).toMatchObject({ max_tokens: 321 });
    expect(encodeChatRequest(limited, { compatible: true })).not.toHaveProperty('max_completion_tokens');
  });

  it('sends a router thinking off as a reasoning object', () => {
    expect(encodeChatRequest(request, { compatible: true }).reasoning).toEqual({ enabled: false, exclude: false });
  });

  it('carries structured outputs only as the strictness of a JSON schema answer format it can hold strictly', () => {
    expect(openAiCarries('structuredOutputs', request, router)).toBe(false);
    const closed = {
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
      additionalProperties: false,
    };
    const withSchema: ChatRequest = {
      ...request,
      responseFormat: { type: 'json_schema', name: 'answer', schema: closed },
    };
    expect(openAiCarries('structuredOutputs', withSchema, router)).toBe(true);
    expect(encodeChatRequest(withSchema).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'answer', schema: closed, strict: true },
    });
    // An open object, or a property left out of `required`, is a schema the protocol refuses as strict.
    for (const schema of [{ type: 'object' }, { ...closed, required: [] }]) {
      const best: ChatRequest = { ...request, responseFormat: { type: 'json_schema', name: 'answer', schema } };
      expect(openAiCarries('structuredOutputs', best, router)).toBe(false);
      expect(encodeChatRequest(best).response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'answer', schema },
      });
    }
    // Nor can it ask for an answer that is not an object.
    const list: ChatRequest = {
      ...request,
      responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'array' } },
    };
    expect(openAiCarries('responseFormat', list, router)).toBe(false);
  });
});
