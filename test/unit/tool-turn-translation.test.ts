import { describe, expect, it } from 'vitest';
import type { ChatRequest, DecodedChat } from '../../src/domain/chat.ts';
import { encodeMessagesRequest } from '../../src/providers/anthropic/anthropic-messages.ts';
import { encodeGenerateContent } from '../../src/providers/gemini/gemini-content.ts';
import { encodeChatRequest } from '../../src/providers/openai/openai-chat.ts';
import { decodeChatMessages } from '../../src/surfaces/alpha/chat-completions-codec.ts';
import { decodeResponsesInput } from '../../src/surfaces/alpha/responses-codec.ts';
import { decodeMessages } from '../../src/surfaces/beta/messages-codec.ts';
import { decodeContents } from '../../src/surfaces/gamma/generate-content-codec.ts';
import { canonical, gammaLookupTools, type TranslatedSurface, translatedPairs } from '../support/translated-pairs.ts';

/**
 * The second turn of function calling (the question, the call the model made, the tool's result) on each tool
 * surface, translated for each upstream family of another protocol: the upstream gets the tool, the call with
 * its arguments, and a result that answers that call (by id, or for Gemini by name and order). The turns
 * answered end to end are claimed over HTTP in tool-translation.test.ts, whose fakes refuse a result that
 * answers no call.
 */
const question = 'weather in Paris';
const toolOutput = '{"forecast":"sunny"}';
const args = { query: 'Paris' };
const schema = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] };

const surfaces = {
  alphaChat: () =>
    decodeChatMessages({
      model: 'm',
      tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks things up', parameters: schema } }],
      messages: [
        { role: 'user', content: question },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: JSON.stringify(args) } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: toolOutput },
      ],
    }),
  alphaResponses: () =>
    decodeResponsesInput({
      model: 'm',
      tools: [{ type: 'function', name: 'lookup', description: 'Looks things up', parameters: schema, strict: false }],
      input: [
        { role: 'user', content: question },
        { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: JSON.stringify(args) },
        { type: 'function_call_output', call_id: 'call_1', output: toolOutput },
      ],
    }),
  beta: () =>
    decodeMessages({
      model: 'm',
      tools: [{ name: 'lookup', description: 'Looks things up', input_schema: schema }],
      messages: [
        { role: 'user', content: question },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'lookup', input: args }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: toolOutput }] },
      ],
    }),
  gamma: () =>
    decodeContents({
      tools: gammaLookupTools,
      contents: [
        { role: 'user', parts: [{ text: question }] },
        { role: 'model', parts: [{ functionCall: { name: 'lookup', args } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: JSON.parse(toolOutput) } }] },
      ],
    }),
} satisfies Record<TranslatedSurface, () => DecodedChat>;

/** What each family is asked: the tool, the call with its arguments, and the result answering that call. */
const upstreams = {
  openai: (request: ChatRequest) => {
    const body = encodeChatRequest(request);
    expect(body.tools).toMatchObject([{ type: 'function', function: { name: 'lookup' } }]);
    const [user, assistant, tool] = body.messages as Array<Record<string, unknown>>;
    expect(user).toEqual({ role: 'user', content: question });
    expect(assistant).toMatchObject({
      role: 'assistant',
      tool_calls: [{ type: 'function', function: { name: 'lookup' } }],
    });
    const [call] = assistant!.tool_calls as Array<{ id: string; function: { arguments: string } }>;
    expect(JSON.parse(call!.function.arguments)).toEqual(args);
    expect(tool).toMatchObject({ role: 'tool', tool_call_id: call!.id });
    expect(JSON.stringify(tool)).toContain('sunny');
  },
  anthropic: (request: ChatRequest) => {
    const body = encodeMessagesRequest(request);
    expect(body.tools).toMatchObject([{ name: 'lookup', input_schema: { type: 'object' } }]);
    const [, assistant, user] = body.messages;
    const use = (assistant!.content as Array<Record<string, unknown>>).find((block) => block.type === 'tool_use');
    expect(use).toMatchObject({ name: 'lookup', input: args });
    const result = (user!.content as Array<Record<string, unknown>>).find((block) => block.type === 'tool_result');
    expect(result).toMatchObject({ tool_use_id: use!.id });
    expect(JSON.stringify(result)).toContain('sunny');
  },
  gemini: (request: ChatRequest) => {
    const body = encodeGenerateContent(request);
    expect(body.tools).toMatchObject([{ functionDeclarations: [{ name: 'lookup' }] }]);
    const [, model, user] = body.contents ?? [];
    expect(model).toMatchObject({ role: 'model', parts: [{ functionCall: { name: 'lookup', args } }] });
    expect(user).toMatchObject({ role: 'user', parts: [{ functionResponse: { name: 'lookup' } }] });
    expect(JSON.stringify(user)).toContain('sunny');
  },
};

describe('a tool call and its result translated for every upstream family of another protocol', () => {
  for (const [surface, family] of translatedPairs)
    it(`${surface} -> ${family}`, () => {
      upstreams[family](canonical(surfaces[surface]()));
    });
});
