import { describe, expect, it } from 'vitest';
import type { ChatStreamEvent } from '../../src/domain/chat.ts';
import { chatEventLimit } from '../../src/gateway/output-limits.ts';

/**
 * The held output limit on a translated answer's canonical events: output passes until the delivered tokens
 * reach the limit, the rest of the output is refused, and the answer ends as a length finish.
 */
describe('the output limit on canonical events', () => {
  const text = (value: string): ChatStreamEvent => ({ type: 'text-delta', text: value });
  const counted = () => ({ inputTokens: 3, outputTokens: 2 });

  it('admits output until what was delivered reaches the limit, then refuses output but not the rest', () => {
    const limit = chatEventLimit(2, counted);
    expect(limit.admits(text('hello'))).toBe(true);
    expect(limit.admits(text(' world'))).toBe(true);
    // Two tokens delivered: the limit is reached.
    expect(limit.admits(text(' again'))).toBe(false);
    expect(limit.admits({ type: 'tool-call-start', index: 0, id: 'call_1', name: 'lookup' })).toBe(false);
    // Events that deliver no output still pass: they close what was delivered.
    expect(limit.admits({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: undefined })).toBe(
      true,
    );
  });

  it("counts a tool call's name and its arguments as output", () => {
    const named = chatEventLimit(1, counted);
    expect(named.admits({ type: 'tool-call-start', index: 0, id: 'call_1', name: 'lookup' })).toBe(true);
    expect(named.admits({ type: 'tool-call-delta', index: 0, arguments: '{}' })).toBe(false);
    const argued = chatEventLimit(1, counted);
    expect(argued.admits({ type: 'tool-call-delta', index: 0, arguments: '{"q": "weather"}' })).toBe(true);
    expect(argued.admits(text('x'))).toBe(false);
  });

  it('lets a single piece through whole even when it passes the limit: output is cut between events', () => {
    const limit = chatEventLimit(1, counted);
    expect(limit.admits(text('a long sentence of many tokens'))).toBe(true);
    expect(limit.admits(text('.'))).toBe(false);
  });

  it("ends the answer as a length finish with the gateway's count of its usage, as the client is told it", () => {
    expect(chatEventLimit(1, counted).ending()).toEqual([
      {
        type: 'finish',
        finishReason: { unified: 'length', raw: undefined },
        usage: { inputTokens: 3, outputTokens: 2 },
      },
    ]);
  });

  it('ends every other choice that delivered output and had not finished, before the finish', () => {
    const limit = chatEventLimit(3, counted);
    for (const choice of [undefined, 1, 2]) limit.admits({ type: 'text-delta', text: ' hello', choice });
    // The limit is reached: the fourth choice delivered nothing, and is not ended.
    expect(limit.admits({ type: 'text-delta', text: ' hello', choice: 3 })).toBe(false);
    limit.admits({ type: 'choice-finish', choice: 2, finishReason: { unified: 'stop', raw: 'stop' } });
    const length = { unified: 'length', raw: undefined };
    expect(limit.ending()).toEqual([
      { type: 'choice-finish', choice: 1, finishReason: length },
      { type: 'finish', finishReason: length, usage: { inputTokens: 3, outputTokens: 2 } },
    ]);
  });

  it('lets through log probabilities for as many tokens as are held, and no more', () => {
    const limit = chatEventLimit(2, counted);
    const logprobs = (count: number): ChatStreamEvent => ({
      type: 'logprobs',
      tokens: Array.from({ length: count }, () => ({ token: 'a', logprob: -1, top: [] })),
    });
    expect(limit.admits(logprobs(2))).toBe(true);
    expect(limit.admits(logprobs(1))).toBe(false);
  });
});
