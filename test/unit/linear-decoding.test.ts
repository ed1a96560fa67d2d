import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/domain/chat.ts';
import { encodeMessagesRequest } from '../../src/providers/anthropic/anthropic-messages.ts';
import { encodeGenerateContent } from '../../src/providers/gemini/gemini-content.ts';
import { encodeChatRequest } from '../../src/providers/openai/openai-chat.ts';
import { decodeChatMessages } from '../../src/surfaces/alpha/chat-completions-codec.ts';
import { decodeResponsesInput } from '../../src/surfaces/alpha/responses-codec.ts';
import { decodeMessages } from '../../src/surfaces/beta/messages-codec.ts';
import { decodeContents } from '../../src/surfaces/gamma/generate-content-codec.ts';

/**
 * Conversations of tens of thousands of items are decoded and translated in time linear in their size (a
 * quadratic decoder took seconds on these bodies). What is asserted is how the time grows, not the time: the
 * work is run on a conversation and on one a sixteenth its size, each at its best of three runs, and 16 times the
 * items must take less than 600 times as long. Linear, the ratio reads 5 to 50 here (the collector's work on the
 * larger heap), and up to 182 in a CI worker sharing two cores with three others; a quadratic decoder (a call
 * list copied for each call joined to it) read 3,343, its whole taking seconds against a part under the
 * millisecond's floor below. The bound sits between the two, so a slow or busy machine does not change the
 * verdict.
 */
const items = 40_000;

/**
 * `workOn`'s work runs in linear time. A quadratic lookup of cheap comparisons (a list searched per item) grows
 * only 256-fold over a sixteenth, within the default bound: for it the part is a 256th and the bound 1,000 (read
 * here: 149 linear, 4,229 with such a lookup; its whole took 8.8 s against 0.18 s).
 */
function linearIn<T>(workOn: (size: number) => () => T, { parts = 16, bound = 600 } = {}): T {
  const best = (size: number) => {
    const work = workOn(size);
    let fastest = Number.POSITIVE_INFINITY;
    let result = work();
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      result = work();
      fastest = Math.min(fastest, performance.now() - started);
    }
    return { fastest, result };
  };
  const part = best(items / parts);
  const whole = best(items);
  // A part faster than a millisecond reads as one: on a fast machine its time is mostly noise (a collection, a
  // compilation), which divided into the whole's made a linear decoder read 195 in a busy run; a quadratic one
  // takes seconds on the whole, which a millisecond's floor does not hide.
  expect(whole.fastest / Math.max(part.fastest, 1)).toBeLessThan(bound);
  return whole.result;
}

describe('decoding and translating long conversations', () => {
  it('alpha responses with as many function calls in a row, joined into one Gemini model turn', () => {
    const contents = linearIn((size) => {
      const calls = Array.from({ length: size }, (_, index) => ({
        type: 'function_call',
        call_id: `c${index}`,
        name: 'f',
        arguments: '{}',
      }));
      return () => {
        const decoded = decodeResponsesInput({ model: 'm', input: [{ role: 'user', content: 'hi' }, ...calls] });
        return encodeGenerateContent({ upstreamModel: 'm', messages: decoded.messages }).contents;
      };
    });
    expect(Array.isArray(contents) && contents.map((content) => [content.role, content.parts.length])).toEqual([
      ['user', 1],
      ['model', items],
    ]);
  });

  it('gamma contents with as many calls and unmatched responses, each response paired or given its own id', () => {
    const messages = linearIn((size) => {
      const calls = Array.from({ length: size }, (_, index) => ({ functionCall: { name: `f${index % 7}`, args: {} } }));
      const answers = Array.from({ length: size }, (_, index) => ({
        functionResponse: { name: `g${index % 5}`, response: {} },
      }));
      return () => {
        const decoded = decodeContents({
          contents: [
            { role: 'user', parts: [{ text: 'hi' }] },
            { role: 'model', parts: calls },
            { role: 'user', parts: answers },
          ],
        });
        return encodeChatRequest({ upstreamModel: 'm', messages: decoded.messages }).messages;
      };
    });
    // The user's words, one assistant message with every call, then one tool message per response.
    expect(messages).toHaveLength(2 + items);
    const ids = new Set(messages.flatMap((message) => ('tool_call_id' in message ? [message.tool_call_id] : [])));
    expect(ids.size).toBe(items);
  });

  it('as many user messages in a row, merged into one Anthropic turn', () => {
    const { messages } = linearIn((size) => {
      const conversation: ChatMessage[] = Array.from({ length: size }, () => ({ role: 'user', content: 'x' }));
      return () => encodeMessagesRequest({ upstreamModel: 'm', messages: conversation });
    });
    expect(messages).toHaveLength(1);
    expect(messages[0]!.content).toHaveLength(items);
  });

  // Results that answer no call are named for the refusal (a model answering calls by name cannot take them): each
  // looked up among the unmatched ids, which a list made quadratic in a client's results, before admission.
  it('alpha chat, Responses and beta with as many tool results answering no call, each named', () => {
    const fields = linearIn(
      (size) => {
        const ids = Array.from({ length: size }, (_, index) => `c${index}`);
        const chat = { model: 'm', messages: ids.map((id) => ({ role: 'tool', tool_call_id: id, content: 'x' })) };
        const responses = {
          model: 'm',
          input: ids.map((id) => ({ type: 'function_call_output', call_id: id, output: 'x' })),
        };
        const beta = {
          model: 'm',
          messages: [
            { role: 'user', content: ids.map((id) => ({ type: 'tool_result', tool_use_id: id, content: 'x' })) },
          ],
        };
        return () => [
          decodeChatMessages(chat).unmatchedToolResults,
          decodeResponsesInput(responses).unmatchedToolResults,
          decodeMessages(beta).unmatchedToolResults,
        ];
      },
      { parts: 256, bound: 1_000 },
    );
    expect(fields.map((named) => named?.length)).toEqual([items, items, items]);
  });
});
