/**
 * Each protocol's description says whether a request makes its upstream read input the gateway's prompt bound
 * does not count (promptTokenBound: text, calls, tool results' text, images at a fixed share): such a relayed
 * call is charged past its hold. Counted parts leave it bounded.
 */
import { describe, expect, it } from 'vitest';
import { messagesReadUncountedInput } from '../../src/protocols/anthropic/messages.ts';
import { generateContentReadsUncountedInput } from '../../src/protocols/gemini/generate-content.ts';
import { chatReadsUncountedInput } from '../../src/protocols/openai/chat-completions.ts';
import { responsesReadsUncountedInput } from '../../src/protocols/openai/responses.ts';

const text = { type: 'text', text: 'hi' };

describe('OpenAI chat', () => {
  const reads = (...content: unknown[]) =>
    chatReadsUncountedInput({ model: 'm', messages: [{ role: 'user', content }] });
  it('marks files, inline or by id, and audio', () => {
    expect(reads(text, { type: 'file', file: { file_id: 'file-1' } })).toBe(true);
    expect(reads(text, { type: 'file', file: { file_data: 'data:application/pdf;base64,AAAA' } })).toBe(true);
    expect(reads({ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } })).toBe(true);
    expect(
      chatReadsUncountedInput({ messages: [{ role: 'assistant', content: null, audio: { id: 'audio_1' } }] }),
    ).toBe(true);
  });
  it('marks a web search', () => {
    expect(chatReadsUncountedInput({ messages: [{ role: 'user', content: 'hi' }], web_search_options: {} })).toBe(true);
  });
  it('leaves text, refusals and images alone', () => {
    expect(reads(text, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } })).toBe(false);
    expect(reads({ type: 'refusal', refusal: 'no' })).toBe(false);
    expect(chatReadsUncountedInput({ messages: [{ role: 'user', content: 'hi' }] })).toBe(false);
  });
});

describe('OpenAI Responses', () => {
  const reads = (...content: unknown[]) => responsesReadsUncountedInput({ input: [{ role: 'user', content }] });
  it('marks stored input, files, audio and images by file id', () => {
    expect(responsesReadsUncountedInput({ input: 'hi', previous_response_id: 'resp_1' })).toBe(true);
    expect(responsesReadsUncountedInput({ input: [{ type: 'item_reference', id: 'msg_1' }] })).toBe(true);
    expect(reads({ type: 'input_file', file_id: 'file-1' })).toBe(true);
    expect(reads({ type: 'input_file', file_url: 'https://example.com/a.pdf' })).toBe(true);
    expect(reads({ type: 'input_file', file_data: 'AAAA', filename: 'a.pdf' })).toBe(true);
    expect(reads({ type: 'input_audio', input_audio: { data: 'AAAA', format: 'mp3' } })).toBe(true);
    expect(reads({ type: 'input_image', file_id: 'file-1' })).toBe(true);
    expect(
      responsesReadsUncountedInput({
        input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_file', file_id: 'file-1' }] }],
      }),
    ).toBe(true);
  });
  it('marks the tools that search the web or files', () => {
    for (const type of ['web_search', 'web_search_preview', 'web_search_2025_08_26', 'file_search'])
      expect(responsesReadsUncountedInput({ input: 'hi', tools: [{ type }] })).toBe(true);
    expect(
      responsesReadsUncountedInput({
        input: 'hi',
        tools: [{ type: 'function', name: 'f' }, { type: 'image_generation' }],
      }),
    ).toBe(false);
  });
  it('leaves text, images by URL, calls and reasoning alone', () => {
    expect(reads({ type: 'input_text', text: 'hi' }, { type: 'input_image', image_url: 'https://a/b.png' })).toBe(
      false,
    );
    expect(
      responsesReadsUncountedInput({
        input: [
          { type: 'reasoning', id: 'rs_1', summary: [] },
          { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c', output: 'ok' },
        ],
      }),
    ).toBe(false);
    expect(responsesReadsUncountedInput({ input: 'hi', previous_response_id: null })).toBe(false);
  });
});

describe('Anthropic messages', () => {
  const reads = (...content: unknown[]) => messagesReadUncountedInput({ messages: [{ role: 'user', content }] });
  it('marks threads, documents and images by file id', () => {
    expect(messagesReadUncountedInput({ messages: [], thread: { type: 'create' } })).toBe(true);
    expect(reads({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hi' } })).toBe(true);
    expect(reads({ type: 'document', source: { type: 'file', file_id: 'file_1' } })).toBe(true);
    expect(reads({ type: 'image', source: { type: 'file', file_id: 'file_1' } })).toBe(true);
    expect(
      reads({ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'url', url: 'u' } }] }),
    ).toBe(true);
  });
  it('marks the server tools that search or fetch the web', () => {
    for (const type of ['web_search_20250305', 'web_fetch_20250910'])
      expect(messagesReadUncountedInput({ messages: [], tools: [{ type, name: 'web' }] })).toBe(true);
    expect(
      messagesReadUncountedInput({
        messages: [],
        tools: [
          { name: 'f', input_schema: {} },
          { type: 'code_execution_20250825', name: 'code_execution' },
        ],
      }),
    ).toBe(false);
  });
  it('leaves text, images by data or URL, calls and their text results alone', () => {
    expect(
      reads(
        text,
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
        { type: 'image', source: { type: 'url', url: 'https://a/b.png' } },
        { type: 'tool_result', tool_use_id: 't', content: [text] },
      ),
    ).toBe(false);
    expect(messagesReadUncountedInput({ messages: [{ role: 'user', content: 'hi' }] })).toBe(false);
  });
});

describe('Gemini generateContent', () => {
  const reads = (...parts: unknown[]) => generateContentReadsUncountedInput({ contents: [{ role: 'user', parts }] });
  it('marks cached content, files of another or no named type, and inline non-images', () => {
    expect(generateContentReadsUncountedInput({ contents: 'hi', cachedContent: 'cachedContents/1' })).toBe(true);
    expect(reads({ fileData: { fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/a' } })).toBe(true);
    expect(reads({ fileData: { fileUri: 'https://www.youtube.com/watch?v=a' } })).toBe(true);
    expect(reads({ fileData: { mimeType: 'video/mp4', fileUri: 'https://example.com/a.mp4' } })).toBe(true);
    expect(reads({ fileData: { mimeType: 'application/pdf', fileUri: 'gs://bucket/a.pdf' } })).toBe(true);
    expect(reads({ inlineData: { mimeType: 'audio/wav', data: 'AAAA' } })).toBe(true);
    expect(
      generateContentReadsUncountedInput({
        contents: 'hi',
        systemInstruction: { parts: [{ inlineData: { mimeType: 'application/pdf', data: 'AAAA' } }] },
      }),
    ).toBe(true);
  });
  it('marks the tools that search or read the web and files', () => {
    for (const tool of ['googleSearch', 'googleSearchRetrieval', 'urlContext', 'fileSearch'])
      expect(generateContentReadsUncountedInput({ contents: 'hi', tools: [{ [tool]: {} }] })).toBe(true);
    expect(
      generateContentReadsUncountedInput({
        contents: 'hi',
        tools: [{ functionDeclarations: [{ name: 'f' }] }, { codeExecution: {} }],
      }),
    ).toBe(false);
  });
  it('leaves text, calls and images alone', () => {
    expect(
      reads(
        { text: 'hi' },
        { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
        { fileData: { mimeType: 'image/png', fileUri: 'https://a/b.png' } },
        { functionCall: { name: 'f', args: {} } },
      ),
    ).toBe(false);
  });
});
