import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../src/domain/chat.ts';
import { encodeMessagesRequest } from '../../src/providers/anthropic/anthropic-messages.ts';
import {
  blockName,
  isKnownStreamEvent,
  isMessage,
  isMessagesStreamEvent,
  MessagesRequest,
} from '../../src/protocols/anthropic/messages.ts';
import { wireCheck } from '../../src/protocols/wire-check.ts';

const isMessagesRequest = wireCheck(MessagesRequest);
const request = (fields: Record<string, unknown>) => ({
  model: 'claude',
  max_tokens: 10,
  messages: [{ role: 'user', content: 'hi' }],
  ...fields,
});

describe('the Anthropic messages schemas', () => {
  it('hold blocks of known types to their shape and let blocks of other types through', () => {
    const content = (block: object) => request({ messages: [{ role: 'user', content: [block] }] });
    expect(isMessagesRequest(content({ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }))).toBe(true);
    expect(isMessagesRequest(content({ type: 'text', text: 3 }))).toBe(false);
    expect(isMessagesRequest(content({ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }))).toBe(true);
    expect(isMessagesRequest(content({ type: 'image', source: { type: 'url' } }))).toBe(false);
    expect(isMessagesRequest(content({ type: 'image', source: { type: 'file', file_id: 'f' } }))).toBe(true);
    expect(isMessagesRequest(content({ type: 'tool_use', id: 't', name: 'f', input: {} }))).toBe(true);
    expect(isMessagesRequest(content({ type: 'tool_use', id: 't', input: {} }))).toBe(false);
    expect(isMessagesRequest(content({ type: 'search_result', source: 's', title: 't', content: [] }))).toBe(true);
    expect(isMessagesRequest(content({ text: 'no type' }))).toBe(false);
  });

  it('take client and server tools, and refuse a tool choice or thinking of the wrong shape', () => {
    expect(isMessagesRequest(request({ tools: [{ name: 'f', input_schema: { type: 'object' } }] }))).toBe(true);
    expect(isMessagesRequest(request({ tools: [{ type: 'custom', input_schema: { type: 'object' } }] }))).toBe(false);
    expect(isMessagesRequest(request({ tools: [{ type: 'mcp_toolset', mcp_server_name: 'm' }] }))).toBe(true);
    expect(isMessagesRequest(request({ tool_choice: { type: 'tool', name: 'f' } }))).toBe(true);
    expect(isMessagesRequest(request({ tool_choice: { type: 'tool' } }))).toBe(false);
    expect(isMessagesRequest(request({ tool_choice: { type: 'maybe' } }))).toBe(false);
    expect(isMessagesRequest(request({ thinking: { type: 'adaptive' } }))).toBe(true);
    expect(isMessagesRequest(request({ thinking: { type: 'enabled', budget_tokens: '1024' } }))).toBe(false);
  });

  it('read known stream events by their type and pass events of newer types', () => {
    const serverTool = {
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
    };
    expect(isMessagesStreamEvent(serverTool)).toBe(true);
    if (
      isMessagesStreamEvent(serverTool) &&
      isKnownStreamEvent(serverTool) &&
      serverTool.type === 'content_block_start'
    )
      expect(blockName(serverTool.content_block)).toBe('web_search');
    const citation = { type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation: {} } };
    expect(isMessagesStreamEvent(citation)).toBe(true);
    expect(isMessagesStreamEvent({ type: 'message_start', message: { usage: { input_tokens: '3' } } })).toBe(false);
    expect(isMessagesStreamEvent({ type: 'message_delta', usage: { output_tokens: 3 } })).toBe(false);
    const later = { type: 'message_paused', reason: 'x' };
    expect(isMessagesStreamEvent(later)).toBe(true);
    if (isMessagesStreamEvent(later)) expect(isKnownStreamEvent(later)).toBe(false);
  });

  it('take an answer with the blocks of server tools, and refuse a tool_use block without its input', () => {
    const answer = (block: object) => ({ type: 'message', content: [block], usage: { output_tokens: 1 } });
    expect(isMessage(answer({ type: 'web_search_tool_result', tool_use_id: 's', content: [] }))).toBe(true);
    expect(isMessage(answer({ type: 'tool_use', id: 't', name: 'f', input: { q: 1 } }))).toBe(true);
    expect(isMessage(answer({ type: 'tool_use', id: 't', name: 'f' }))).toBe(false);
  });
});

describe('the Anthropic provider request', () => {
  const conversation: ChatRequest = {
    upstreamModel: 'claude',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'image', image: { kind: 'url', url: 'https://x/y.png' } }] },
      { role: 'assistant', content: [{ type: 'tool-call', call: { id: 'c1', name: 'f', arguments: '{"q":1}' } }] },
      { role: 'tool', content: [{ type: 'tool-result', result: { callId: 'c1', name: 'f', output: 'ok' } }] },
    ],
    tools: [{ name: 'f', parameters: { type: 'object' } }],
    stop: ['END'],
    thinking: { type: 'enabled', budgetTokens: 1024 },
  };

  it('follows the protocol request schema', () => {
    expect(isMessagesRequest(encodeMessagesRequest(conversation))).toBe(true);
    expect(isMessagesRequest(encodeMessagesRequest({ ...conversation, responseFormat: { type: 'json_object' } }))).toBe(
      true,
    );
  });

  it('switches parallel calls off on a tool choice that calls tools, but sends `none` alone', () => {
    expect(encodeMessagesRequest({ ...conversation, parallelToolCalls: false }).tool_choice).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    expect(
      encodeMessagesRequest({ ...conversation, toolChoice: 'none', parallelToolCalls: false }).tool_choice,
    ).toEqual({ type: 'none' });
  });
});
