import { describe, expect, it } from 'vitest';
import { ChatCompletionsRequest } from '../../src/protocols/openai/chat-completions.ts';
import { ResponsesRequest } from '../../src/protocols/openai/responses.ts';
import { bodyErrors } from '../support/body-check.ts';

/**
 * The alpha request schemas describe content (parts, tool calls, tools, tool choice, answer formats, input
 * items): a known kind that breaks its shape is refused naming the field as the client spelled it, and only
 * that. The 400 envelope these messages travel in is claimed over HTTP in alpha-content-validation.test.ts.
 */
const user = { role: 'user', content: 'hi' };
const chat = (body: object) => bodyErrors(ChatCompletionsRequest, { model: 'echo', ...body });
const responses = (body: object) => bodyErrors(ResponsesRequest, { model: 'echo', ...body });

describe('alpha chat completions content', () => {
  it('names a text part whose text is not a string', () => {
    expect(chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] })).toEqual([
      'body.messages.0.content.0.text must be string',
    ]);
  });

  it('names an image_url part whose image_url is not an object', () => {
    const content = [
      { type: 'text', text: 'a' },
      { type: 'image_url', image_url: 'x' },
    ];
    expect(chat({ messages: [{ role: 'user', content }] })).toEqual([
      'body.messages.0.content.1.image_url must be object',
    ]);
  });

  it('names a part without its type', () => {
    expect(chat({ messages: [{ role: 'user', content: [{ text: 'a' }] }] })).toEqual([
      "body.messages.0.content.0 must have required property 'type'",
    ]);
  });

  it('names tool call arguments that are not a string', () => {
    const call = { id: 'c', type: 'function', function: { name: 'f', arguments: {} } };
    expect(chat({ messages: [{ role: 'assistant', tool_calls: [call] }] })).toEqual([
      'body.messages.0.tool_calls.0.function.arguments must be string',
    ]);
  });

  it('names a function tool without a name', () => {
    expect(chat({ messages: [user], tools: [{ type: 'function', function: { description: 'x' } }] })).toEqual([
      "body.tools.0.function must have required property 'name'",
    ]);
  });

  it('names a tool_choice string outside the list, saying an object is also allowed', () => {
    expect(chat({ messages: [user], tool_choice: 'any' })).toEqual([
      'body.tool_choice must be one of: none, auto, required, or be of type object',
    ]);
  });

  it('names a tool_choice object naming no function', () => {
    expect(chat({ messages: [user], tool_choice: { type: 'function', function: {} } })).toEqual([
      "body.tool_choice.function must have required property 'name'",
    ]);
  });

  it('names a json_schema response_format without its json_schema', () => {
    expect(chat({ messages: [user], response_format: { type: 'json_schema' } })).toEqual([
      "body.response_format must have required property 'json_schema'",
    ]);
  });

  it('names the stop item that is not a string', () => {
    expect(chat({ messages: [user], stop: ['a', 5] })).toEqual(['body.stop.1 must be string']);
  });

  it('names a stream_options.include_usage that is not a boolean', () => {
    expect(chat({ messages: [user], stream_options: { include_usage: 'yes' } })).toEqual([
      'body.stream_options.include_usage must be of type boolean, null',
    ]);
  });

  it('passes kinds it does not name and unnamed fields, for a same-protocol upstream to take', () => {
    expect(
      chat({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hi', cache_control: {} },
              { type: 'input_video', video_url: 'https://example.com/v.mp4' },
            ],
            extra: 1,
          },
        ],
        tools: [{ type: 'custom', custom: { name: 'grammar' } }],
        response_format: { type: 'grammar', grammar: 'x' },
        prompt_cache_key: 'k',
      }),
    ).toEqual([]);
  });
});

describe('alpha responses content', () => {
  it('names an input_text part without its text', () => {
    expect(responses({ input: [{ role: 'user', content: [{ type: 'input_text' }] }] })).toEqual([
      "body.input.0.content.0 must have required property 'text'",
    ]);
  });

  it('names a message item without its role', () => {
    expect(responses({ input: [{ content: 'x' }] })).toEqual(["body.input.0 must have required property 'role'"]);
  });

  it('names a function_call item without its arguments', () => {
    expect(responses({ input: [{ type: 'function_call', call_id: 'a', name: 'f' }] })).toEqual([
      "body.input.0 must have required property 'arguments'",
    ]);
  });

  it('names a function tool without a name', () => {
    expect(responses({ input: 'x', tools: [{ type: 'function' }] })).toEqual([
      "body.tools.0 must have required property 'name'",
    ]);
  });

  it('names a json_schema text format without its name', () => {
    expect(responses({ input: 'x', text: { format: { type: 'json_schema' } } })).toEqual([
      "body.text.format must have required property 'name'",
    ]);
  });

  it('passes input items of kinds it does not name', () => {
    expect(responses({ input: [{ type: 'reasoning', summary: [] }, user] })).toEqual([]);
  });
});
