import { describe, expect, it } from 'vitest';
import type { ChatStreamEvent } from '../../src/domain/chat.ts';
import { textChunkOf } from '../../src/surfaces/native/text-completion-codec.ts';

/** The native surface's TextChunk for each canonical event of a translated answer, without HTTP. */
describe("the native surface's text chunks", () => {
  it('writes text as its delta', () => {
    expect(textChunkOf({ type: 'text-delta', text: 'Hello' })).toEqual({ delta: 'Hello' });
  });

  it("writes a tool call as OpenAI's fragments: the id and name first, then argument text under the same index", () => {
    expect(textChunkOf({ type: 'tool-call-start', index: 1, id: 'call_9', name: 'lookup' })).toEqual({
      delta: '',
      toolCalls: [{ index: 1, id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '' } }],
    });
    expect(textChunkOf({ type: 'tool-call-delta', index: 1, arguments: '{"q":"x"}' })).toEqual({
      delta: '',
      toolCalls: [{ index: 1, function: { arguments: '{"q":"x"}' } }],
    });
  });

  it('writes the finish as its unified reason with the usage and its total, and no usage when none came', () => {
    const finish = (usage: { inputTokens: number; outputTokens: number } | undefined): ChatStreamEvent => ({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_use' },
      usage,
    });
    expect(textChunkOf(finish({ inputTokens: 11, outputTokens: 7 }))).toEqual({
      delta: '',
      finishReason: 'tool-calls',
      usage: { promptTokens: 11, completionTokens: 7, totalTokens: 18 },
    });
    expect(textChunkOf(finish(undefined))).toEqual({ delta: '', finishReason: 'tool-calls' });
  });

  it("writes another choice's end as an empty delta: the native request asks for one completion", () => {
    expect(
      textChunkOf({ type: 'choice-finish', choice: 1, finishReason: { unified: 'length', raw: 'length' } }),
    ).toEqual({ delta: '' });
  });
});
