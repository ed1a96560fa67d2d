import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatRequest } from '../../src/domain/chat.ts';
import { encodeMessagesRequest } from '../../src/providers/anthropic/anthropic-messages.ts';
import { encodeGenerateContent } from '../../src/providers/gemini/gemini-content.ts';
import { encodeChatRequest } from '../../src/providers/openai/openai-chat.ts';
import { decodeChatMessages } from '../../src/surfaces/alpha/chat-completions-codec.ts';
import { ChunkEncoder, decodeContents } from '../../src/surfaces/gamma/generate-content-codec.ts';

/** Edge cases of tool translation the end-to-end matrix does not reach. */
const conversation: ChatMessage[] = [
  { role: 'user', content: 'two lookups' },
  {
    role: 'assistant',
    content: [
      { type: 'tool-call', call: { id: 'call_a', name: 'lookup', arguments: '{"q":"a"}' } },
      { type: 'tool-call', call: { id: 'call_b', name: 'lookup', arguments: '{"q":"b"}' } },
    ],
  },
  {
    role: 'tool',
    content: [
      { type: 'tool-result', result: { callId: 'call_a', name: 'lookup', output: 'plain words' } },
      { type: 'tool-result', result: { callId: 'call_b', name: 'lookup', output: '{"ok":false}', isError: true } },
    ],
  },
  { role: 'user', content: 'and then?' },
];
const request: ChatRequest = {
  upstreamModel: 'm',
  messages: conversation,
  tools: [{ name: 'lookup' }],
  toolChoice: { name: 'lookup' },
};

describe('tool translation edge cases', () => {
  it('pairs Gemini responses without ids with the earliest unanswered call of their name', () => {
    const decoded = decodeContents({
      contents: [
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'lookup', args: { q: 'a' } } },
            { functionCall: { name: 'lookup', args: { q: 'b' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'lookup', response: { n: 1 } } },
            { functionResponse: { name: 'lookup', response: { n: 2 } } },
          ],
        },
      ],
    });
    const [calls, results] = decoded.messages.map((message) => message.content);
    const callIds = (calls as unknown as Array<{ call: { id: string } }>).map((part) => part.call.id);
    expect(new Set(callIds).size).toBe(2);
    expect(
      (results as unknown as Array<{ result: { callId: string; output: string } }>).map((part) => part.result),
    ).toMatchObject([
      { callId: callIds[0], output: '{"n":1}' },
      { callId: callIds[1], output: '{"n":2}' },
    ]);
  });

  it("turns Gemini's upper-case schema dialect into JSON Schema, leaving enum values as written", () => {
    const decoded = decodeContents({
      contents: 'x',
      tools: [
        {
          functionDeclarations: [
            { name: 'f', parameters: { type: 'OBJECT', properties: { kind: { type: 'STRING', enum: ['A', 'B'] } } } },
          ],
        },
      ],
    });
    // An object lists its properties and no others: closed, as JSON Schema says it.
    expect(decoded.tools).toEqual([
      {
        name: 'f',
        parameters: {
          type: 'object',
          properties: { kind: { type: 'string', enum: ['A', 'B'] } },
          additionalProperties: false,
        },
      },
    ]);
  });

  it("reads an unspecified functionCallingConfig mode as the protocol's default, AUTO", () => {
    const unspecified = decodeContents({
      contents: 'x',
      toolConfig: { functionCallingConfig: { mode: 'MODE_UNSPECIFIED' } },
    });
    expect(unspecified).toMatchObject({ toolChoice: 'auto', untranslatable: [] });
  });

  it('refuses what has no counterpart: provider-hosted tools and several allowed functions', () => {
    expect(decodeContents({ contents: 'x', tools: [{ googleSearch: {} }] }).untranslatable).toEqual([
      '"googleSearch" tools',
    ]);
    expect(
      decodeContents({
        contents: 'x',
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a', 'b'] } },
      }).untranslatable,
    ).toEqual(['this functionCallingConfig']);
    expect(
      decodeChatMessages({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'custom', custom: { name: 'c' } }],
      }).untranslatable,
    ).toEqual(['"custom" tools']);
  });

  it('sends Anthropic one user turn holding the tool results first, then the words that followed', () => {
    const body = encodeMessagesRequest(request);
    expect(body.messages).toEqual([
      { role: 'user', content: 'two lookups' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_a', name: 'lookup', input: { q: 'a' } },
          { type: 'tool_use', id: 'call_b', name: 'lookup', input: { q: 'b' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_a', content: 'plain words' },
          { type: 'tool_result', tool_use_id: 'call_b', content: '{"ok":false}', is_error: true },
          { type: 'text', text: 'and then?' },
        ],
      },
    ]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'lookup' });
    expect(body.tools).toEqual([{ name: 'lookup', input_schema: { type: 'object', properties: {} } }]);
  });

  it('sends Gemini results as objects: JSON objects as themselves, other output wrapped, errors under `error`', () => {
    const body = encodeGenerateContent(request);
    expect(body.contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'lookup', response: { result: 'plain words' } } },
        { functionResponse: { name: 'lookup', response: { error: { ok: false } } } },
        { text: 'and then?' },
      ],
    });
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } });
  });

  it('sends OpenAI one tool message per result, after an assistant message with null content', () => {
    const body = encodeChatRequest(request) as { messages: object[] };
    expect(body.messages.slice(1, 4)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"q":"a"}' } },
          { id: 'call_b', type: 'function', function: { name: 'lookup', arguments: '{"q":"b"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'plain words' },
      // A failed call is said in the content: the protocol has no flag for it.
      { role: 'tool', tool_call_id: 'call_b', content: 'Error: {"ok":false}' },
    ]);
  });

  it('streams each call to gamma whole, once its argument fragments are complete', () => {
    const encoder = new ChunkEncoder('m');
    expect(encoder.encode({ type: 'tool-call-start', index: 0, id: 'call_a', name: 'lookup' })).toEqual([]);
    expect(encoder.encode({ type: 'tool-call-delta', index: 0, arguments: '{"q":' })).toEqual([]);
    expect(encoder.encode({ type: 'tool-call-delta', index: 0, arguments: '"a"}' })).toEqual([]);
    const [call, finish] = encoder.encode({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_use' },
      usage: undefined,
    });
    expect(call).toMatchObject({
      candidates: [{ content: { parts: [{ functionCall: { id: 'call_a', name: 'lookup', args: { q: 'a' } } }] } }],
    });
    expect(finish).toMatchObject({ candidates: [{ finishReason: 'STOP' }] });
  });

  it('streams interleaved parallel calls to gamma each with its own arguments, in the order they opened', () => {
    const encoder = new ChunkEncoder('m');
    const events = [
      { type: 'tool-call-start', index: 0, id: 'call_a', name: 'lookup' },
      { type: 'tool-call-start', index: 1, id: 'call_b', name: 'lookup' },
      { type: 'tool-call-delta', index: 1, arguments: '{"q":' },
      { type: 'tool-call-delta', index: 0, arguments: '{"q":' },
      { type: 'tool-call-delta', index: 0, arguments: '"a"}' },
      { type: 'tool-call-delta', index: 1, arguments: '"b"}' },
    ] as const;
    for (const event of events) expect(encoder.encode(event)).toEqual([]);
    const chunks = encoder.encode({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: undefined,
    });
    expect(chunks.flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? [])).toEqual([
      { functionCall: { id: 'call_a', name: 'lookup', args: { q: 'a' } } },
      { functionCall: { id: 'call_b', name: 'lookup', args: { q: 'b' } } },
      { text: '' },
    ]);
  });
});
