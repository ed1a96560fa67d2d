import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/domain/chat.ts';
import { encodeMessagesRequest } from '../../src/providers/anthropic/anthropic-messages.ts';
import { encodeGenerateContent } from '../../src/providers/gemini/gemini-content.ts';
import { encodeChatRequest } from '../../src/providers/openai/openai-chat.ts';
import { decodeResponsesInput } from '../../src/surfaces/alpha/responses-codec.ts';
import { decodeContents } from '../../src/surfaces/gamma/generate-content-codec.ts';

/**
 * Conversations of tens of thousands of items are decoded and translated in time linear in their size (a
 * quadratic decoder took seconds on these bodies). The bound is generous, not a timing: it tells linear
 * from quadratic.
 */
const items = 40_000;

function withinLinearTime<T>(work: () => T): T {
  const started = performance.now();
  const result = work();
  expect(performance.now() - started).toBeLessThan(1_000);
  return result;
}

describe('decoding and translating long conversations', () => {
  it('alpha responses with as many function calls in a row, joined into one Gemini model turn', () => {
    const calls = Array.from({ length: items }, (_, index) => ({
      type: 'function_call',
      call_id: `c${index}`,
      name: 'f',
      arguments: '{}',
    }));
    const contents = withinLinearTime(() => {
      const decoded = decodeResponsesInput({ model: 'm', input: [{ role: 'user', content: 'hi' }, ...calls] });
      return encodeGenerateContent({ upstreamModel: 'm', messages: decoded.messages }).contents;
    });
    expect(Array.isArray(contents) && contents.map((content) => [content.role, content.parts.length])).toEqual([
      ['user', 1],
      ['model', items],
    ]);
  });

  it('gamma contents with as many calls and unmatched responses, each response paired or given its own id', () => {
    const calls = Array.from({ length: items }, (_, index) => ({ functionCall: { name: `f${index % 7}`, args: {} } }));
    const answers = Array.from({ length: items }, (_, index) => ({
      functionResponse: { name: `g${index % 5}`, response: {} },
    }));
    const messages = withinLinearTime(() => {
      const decoded = decodeContents({
        contents: [
          { role: 'user', parts: [{ text: 'hi' }] },
          { role: 'model', parts: calls },
          { role: 'user', parts: answers },
        ],
      });
      return encodeChatRequest({ upstreamModel: 'm', messages: decoded.messages }).messages;
    });
    // The user's words, one assistant message with every call, then one tool message per response.
    expect(messages).toHaveLength(2 + items);
    const ids = new Set(messages.flatMap((message) => ('tool_call_id' in message ? [message.tool_call_id] : [])));
    expect(ids.size).toBe(items);
  });

  it('as many user messages in a row, merged into one Anthropic turn', () => {
    const conversation: ChatMessage[] = Array.from({ length: items }, () => ({ role: 'user', content: 'x' }));
    const { messages } = withinLinearTime(() => encodeMessagesRequest({ upstreamModel: 'm', messages: conversation }));
    expect(messages).toHaveLength(1);
    expect(messages[0]!.content).toHaveLength(items);
  });
});
