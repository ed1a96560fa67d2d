import { describe, expect, it } from 'vitest';
import { MessagesRequest } from '../../src/protocols/anthropic/messages.ts';
import { bodyErrors } from '../support/body-check.ts';

/**
 * The beta surface checks message content, tools, tool choice, thinking and answer formats against the
 * protocol's schemas: a wrong field is refused naming it as the client spelled it, while block and tool types
 * the gateway does not know pass. The beta error body these messages travel in is claimed over HTTP in
 * beta-content-validation.test.ts.
 */
const messages = (fields: Record<string, unknown>) =>
  bodyErrors(MessagesRequest, {
    model: 'via-anthropic',
    max_tokens: 50,
    messages: [{ role: 'user', content: 'hello there' }],
    ...fields,
  });

describe('beta messages content schemas', () => {
  it('names a text block without text', () => {
    expect(messages({ messages: [{ role: 'user', content: [{ type: 'text' }] }] })).toEqual([
      "body.messages.0.content.0 must have required property 'text'",
    ]);
  });

  it('names an image whose base64 data is not a string', () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 7 } };
    expect(messages({ messages: [{ role: 'user', content: [image] }] })).toEqual([
      'body.messages.0.content.0.source.data must be string',
    ]);
  });

  it('names a tool_result without its tool_use_id', () => {
    expect(messages({ messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] })).toEqual([
      "body.messages.0.content.0 must have required property 'tool_use_id'",
    ]);
  });

  it('names a wrong block inside a tool_result', () => {
    const result = { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text' }] };
    expect(messages({ messages: [{ role: 'user', content: [result] }] })).toEqual([
      "body.messages.0.content.0.content.0 must have required property 'text'",
    ]);
  });

  it('names content that is a number', () => {
    expect(messages({ messages: [{ role: 'user', content: 5 }] })).toEqual([
      'body.messages.0.content must be string or array',
    ]);
  });

  it('names a system block that is not text', () => {
    expect(messages({ system: [{ type: 'image', text: 'x' }] })).toEqual(['body.system.0.type must be one of: text']);
  });

  it('names a tool without a name', () => {
    expect(messages({ tools: [{ input_schema: { type: 'object' } }] })).toEqual([
      "body.tools.0 must have required property 'name'",
    ]);
  });

  it('names a tool_choice of an unknown type', () => {
    expect(messages({ tool_choice: { type: 'sometimes' } })).toEqual([
      'body.tool_choice.type must be one of: auto, any, tool, none',
    ]);
  });

  it('names a tool_choice naming no tool', () => {
    expect(messages({ tool_choice: { type: 'tool' } })).toEqual([
      "body.tool_choice must have required property 'name'",
    ]);
  });

  it('names thinking enabled without a budget', () => {
    expect(messages({ thinking: { type: 'enabled' } })).toEqual([
      "body.thinking must have required property 'budget_tokens'",
    ]);
  });

  it('names a json_schema output format without its schema', () => {
    expect(messages({ output_config: { format: { type: 'json_schema' } } })).toEqual([
      "body.output_config.format must have required property 'schema'",
    ]);
  });

  it('passes blocks, sources and tools of types it does not know, extra fields and all', () => {
    expect(
      messages({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hello there', cache_control: { type: 'ephemeral' } },
              {
                type: 'search_result',
                source: 'https://example.com',
                title: 'T',
                content: [{ type: 'text', text: 'x' }],
              },
              { type: 'image', source: { type: 'file', file_id: 'file_1' } },
            ],
          },
        ],
        tools: [
          { name: 'lookup', input_schema: { type: 'object' }, strict: true },
          { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
        ],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        thinking: { type: 'adaptive' },
        metadata: { user_id: 'u1' },
        service_tier: 'auto',
      }),
    ).toEqual([]);
  });
});
