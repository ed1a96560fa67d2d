import { describe, expect, it } from 'vitest';
import { ChatCompletionsRequest } from '../../src/protocols/openai/chat-completions.ts';
import { ResponsesRequest } from '../../src/protocols/openai/responses.ts';
import { wireCheck } from '../../src/protocols/wire-check.ts';

const isChatRequest = wireCheck(ChatCompletionsRequest);
const isResponsesRequest = wireCheck(ResponsesRequest);

const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

describe('OpenAI request schemas', () => {
  it("take the protocol's content, tools, tool choices and formats as the SDKs write them, and kinds they do not name", () => {
    expect(
      isChatRequest({
        model: 'm',
        messages: [
          { role: 'developer', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==', detail: 'low' } },
              { type: 'input_audio', input_audio: { data: 'AA==', format: 'wav' } },
              { type: 'file', file: { file_data: 'data:application/pdf;base64,AA==', filename: 'a.pdf' } },
              { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
          { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
        ],
        tools: [
          { type: 'function', function: { name: 'weather', description: 'Weather', parameters: schema, strict: true } },
          { type: 'custom', custom: { name: 'grammar' } },
        ],
        tool_choice: { type: 'function', function: { name: 'weather' } },
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
        stream_options: { include_usage: true },
        prompt_cache_key: 'kept',
      }),
    ).toBe(true);
    expect(
      isResponsesRequest({
        model: 'm',
        input: [
          { role: 'user', content: 'Hi' },
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'input_text', text: 'Look' },
              { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' },
              { type: 'input_file', file_id: 'file_1' },
            ],
          },
          { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
          { type: 'reasoning', id: 'rs_1', summary: [] },
        ],
        tools: [{ type: 'function', name: 'weather', parameters: schema, strict: true }, { type: 'web_search' }],
        tool_choice: 'required',
        text: { format: { type: 'json_schema', name: 'answer', schema, strict: true }, verbosity: 'low' },
      }),
    ).toBe(true);
  });

  it('refuse a named kind that breaks its shape', () => {
    const chat = (fields: object) => ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...fields });
    expect(isChatRequest(chat({ messages: [{ role: 'user', content: [{ type: 'text' }] }] }))).toBe(false);
    expect(
      isChatRequest(chat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: 'x' }] }] })),
    ).toBe(false);
    expect(isChatRequest(chat({ tools: [{ type: 'function', function: {} }] }))).toBe(false);
    expect(isChatRequest(chat({ tool_choice: 'any' }))).toBe(false);
    expect(isChatRequest(chat({ response_format: { type: 'json_schema' } }))).toBe(false);
    const responses = (input: unknown[]) => ({ model: 'm', input });
    expect(isResponsesRequest(responses([{ content: 'no role' }]))).toBe(false);
    expect(isResponsesRequest(responses([{ type: 'function_call', call_id: 'c', name: 'f' }]))).toBe(false);
    expect(isResponsesRequest(responses([{ role: 'user', content: [{ type: 'input_text', text: 1 }] }]))).toBe(false);
  });
});
