import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatParameterName, ChatRequest } from '../../src/domain/chat.ts';
import { anthropicCarries, encodeMessagesRequest } from '../../src/providers/anthropic/anthropic-messages.ts';

/**
 * Extended thinking as a translated request sends it to Anthropic, held to the rules of Anthropic's extended
 * thinking guide: a budget of at least 1,024 tokens below `max_tokens`, no `temperature` but 1, no `top_k`, a
 * `top_p` from 0.95 to 1, no forced tool, no prefill. What cannot go is left out and named, never sent to be
 * refused; `max_tokens`, the limit the hold covers, is never raised.
 */
const ask = (fields: Partial<ChatRequest>): ChatRequest => ({
  upstreamModel: 'claude-sonnet-4-5-20250929',
  messages: [{ role: 'user', content: 'why is the sky blue' }],
  ...fields,
});

const thinking = (budgetTokens: number) => ({ type: 'enabled', budgetTokens }) as const;

/** The parameters of `request` that Anthropic is not sent, as x-gateway-dropped-parameters would name them. */
function dropped(request: ChatRequest): ChatParameterName[] {
  const names: ChatParameterName[] = ['maxTokens', 'temperature', 'topP', 'topK', 'tools', 'toolChoice', 'thinking'];
  return names.filter((name) => request[name] !== undefined && !anthropicCarries(name, request));
}

const lookup = { name: 'lookup', parameters: { type: 'object' } };

describe('extended thinking sent to Anthropic', () => {
  it('raises a budget below 1,024 to the least Anthropic takes, within the same output limit', () => {
    const request = ask({ maxTokens: 4000, thinking: thinking(512) });
    expect(encodeMessagesRequest(request)).toMatchObject({
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(dropped(request)).toEqual([]);
  });

  it('lowers a budget at or past the output limit below it, never raising the limit the hold covers', () => {
    for (const budget of [2000, 8192]) {
      const request = ask({ maxTokens: 2000, thinking: thinking(budget) });
      expect(encodeMessagesRequest(request)).toMatchObject({
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1999 },
      });
      expect(dropped(request)).toEqual([]);
    }
    // Without an output limit the protocol's default is the limit.
    expect(encodeMessagesRequest(ask({ thinking: thinking(8192) }))).toMatchObject({
      max_tokens: 4096,
      thinking: { budget_tokens: 4095 },
    });
    expect(encodeMessagesRequest(ask({ maxTokens: 3000, thinking: thinking(1500) })).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 1500,
    });
  });

  it('leaves thinking out, and names it, when the output limit has no room for the least budget and an answer', () => {
    for (const maxTokens of [1000, 1024]) {
      const request = ask({ maxTokens, temperature: 0.2, topK: 10, thinking: thinking(512) });
      const body = encodeMessagesRequest(request);
      expect(body).not.toHaveProperty('thinking');
      // Without thinking the sampling settings go as asked.
      expect(body).toMatchObject({ max_tokens: maxTokens, temperature: 0.2, top_k: 10 });
      expect(dropped(request)).toEqual(['thinking']);
    }
    expect(encodeMessagesRequest(ask({ maxTokens: 1025, thinking: thinking(512) })).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 1024,
    });
  });

  it('leaves out the temperature, top_k and top_p thinking refuses, and keeps those it takes', () => {
    const refused = ask({ maxTokens: 4000, temperature: 0.2, topK: 10, topP: 0.5, thinking: thinking(2048) });
    const body = encodeMessagesRequest(refused);
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    for (const field of ['temperature', 'top_k', 'top_p']) expect(body).not.toHaveProperty(field);
    expect(dropped(refused)).toEqual(['temperature', 'topP', 'topK']);
    for (const topP of [0.95, 1]) {
      const taken = ask({ maxTokens: 4000, temperature: 1, topP, thinking: thinking(2048) });
      expect(encodeMessagesRequest(taken)).toMatchObject({
        temperature: 1,
        top_p: topP,
        thinking: { type: 'enabled' },
      });
      expect(dropped(taken)).toEqual([]);
    }
  });

  it('leaves out a temperature above 1, the most Anthropic takes (other protocols take up to 2), and names it', () => {
    const above = ask({ maxTokens: 100, temperature: 1.7, topP: 0.9 });
    const body = encodeMessagesRequest(above);
    expect(body).not.toHaveProperty('temperature');
    expect(body.top_p).toBe(0.9);
    expect(dropped(above)).toEqual(['temperature']);
    for (const temperature of [0, 1]) {
      const within = ask({ maxTokens: 100, temperature });
      expect(encodeMessagesRequest(within).temperature).toBe(temperature);
      expect(dropped(within)).toEqual([]);
    }
  });

  it('keeps a forced tool choice and leaves thinking out, as Anthropic refuses the two together', () => {
    for (const [toolChoice, wire] of [
      ['required', { type: 'any' }],
      [{ name: 'lookup' }, { type: 'tool', name: 'lookup' }],
    ] as const) {
      const request = ask({ maxTokens: 4000, temperature: 0.2, tools: [lookup], toolChoice, thinking: thinking(2048) });
      const body = encodeMessagesRequest(request);
      expect(body.tool_choice).toEqual(wire);
      expect(body).not.toHaveProperty('thinking');
      expect(body.temperature).toBe(0.2);
      expect(dropped(request)).toEqual(['thinking']);
    }
    for (const toolChoice of ['auto', 'none'] as const) {
      const request = ask({ maxTokens: 4000, tools: [lookup], toolChoice, thinking: thinking(2048) });
      expect(encodeMessagesRequest(request)).toMatchObject({ tool_choice: { type: toolChoice }, thinking: {} });
      expect(dropped(request)).toEqual([]);
    }
    const serial = ask({ maxTokens: 4000, tools: [lookup], parallelToolCalls: false, thinking: thinking(2048) });
    expect(encodeMessagesRequest(serial)).toMatchObject({
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      thinking: { type: 'enabled' },
    });
  });

  it('sends no thinking with a turn it would have to begin: tool results answering its calls, or a prefill', () => {
    const called: ChatMessage[] = [
      { role: 'user', content: 'weather in Paris' },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', call: { id: 'toolu_1', name: 'lookup', arguments: '{"query":"Paris"}' } }],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-result', result: { callId: 'toolu_1', name: 'lookup', output: 'sun' } }],
      },
    ];
    const answering = ask({ maxTokens: 4000, tools: [lookup], messages: called, thinking: thinking(2048) });
    expect(encodeMessagesRequest(answering)).not.toHaveProperty('thinking');
    expect(dropped(answering)).toEqual(['thinking']);
    // The user's words after the results still answer the calls in the same turn.
    const withWords = ask({ ...answering, messages: [...called, { role: 'user', content: 'and Rome?' }] });
    expect(dropped(withWords)).toEqual(['thinking']);
    // Once the assistant answered the results, a new user message begins a new turn, which thinking may open.
    const next = ask({
      ...answering,
      messages: [...called, { role: 'assistant', content: 'Sunny.' }, { role: 'user', content: 'and Rome?' }],
    });
    expect(encodeMessagesRequest(next).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const prefill = ask({
      maxTokens: 4000,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'name a colour' },
        { role: 'assistant', content: 'The colour is' },
      ],
      thinking: thinking(2048),
    });
    expect(encodeMessagesRequest(prefill)).not.toHaveProperty('thinking');
    expect(dropped(prefill)).toEqual(['thinking']);
  });

  it('sends thinking off as it is, with every sampling setting', () => {
    const request = ask({ maxTokens: 100, temperature: 0.2, topK: 10, topP: 0.5, thinking: { type: 'disabled' } });
    expect(encodeMessagesRequest(request)).toMatchObject({
      thinking: { type: 'disabled' },
      temperature: 0.2,
      top_k: 10,
      top_p: 0.5,
    });
    expect(dropped(request)).toEqual([]);
  });
});
