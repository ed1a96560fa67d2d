/**
 * What a relayed call's hold does not bound, known once each. Each surface's decoder, walking every part, says
 * whether it left input out of the prompt bound (promptTokenBound counts the canonical parts it makes: text,
 * calls, tool results' text, images at a fixed share); each protocol's description says whether the request, as
 * forwarded, makes the server read input it only names (held by the server, or retrieved by a tool). Either
 * makes a relayed call charged past its hold; counted parts leave it bounded.
 */
import { describe, expect, it } from 'vitest';
import { messagesReadServerInput } from '../../src/protocols/anthropic/messages.ts';
import { generateContentReadsServerInput } from '../../src/protocols/gemini/generate-content.ts';
import { chatReadsServerInput } from '../../src/protocols/openai/chat-completions.ts';
import { responsesReadsServerInput } from '../../src/protocols/openai/responses.ts';
import { decodeChatMessages } from '../../src/surfaces/alpha/chat-completions-codec.ts';
import { decodeResponsesInput } from '../../src/surfaces/alpha/responses-codec.ts';
import { decodeMessages } from '../../src/surfaces/beta/messages-codec.ts';
import { decodeContents } from '../../src/surfaces/gamma/generate-content-codec.ts';

const text = { type: 'text', text: 'hi' } as const;

describe('the OpenAI chat decoder', () => {
  type Messages = Parameters<typeof decodeChatMessages>[0]['messages'];
  const leavesOut = (messages: Messages) => decodeChatMessages({ model: 'm', messages }).uncountedInput;
  const user = (...content: Extract<Messages[number]['content'], unknown[]>) => [{ role: 'user', content }];

  it('leaves out files, inline or by id, audio, parts it does not know and stored audio named by id', () => {
    expect(leavesOut(user(text, { type: 'file', file: { file_id: 'file-1' } }))).toBe(true);
    expect(leavesOut(user(text, { type: 'file', file: { file_data: 'data:application/pdf;base64,AAAA' } }))).toBe(true);
    expect(leavesOut(user({ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }))).toBe(true);
    expect(leavesOut(user({ type: 'video_url', video_url: { url: 'https://a/b.mp4' } }))).toBe(true);
    // The protocol's assistant message names its audio by id; the request's schema keeps the field as sent.
    const spoken = { role: 'assistant', content: null, audio: { id: 'audio_1' } };
    expect(leavesOut([...user(text), spoken, ...user(text)])).toBe(true);
  });

  it('leaves out a picture in a tool message (its text is the result) and a call of another kind', () => {
    const call = { id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } } as const;
    const answered = (content: Messages[number]['content']) => [
      ...user(text),
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'c', content },
    ];
    expect(leavesOut(answered([text, { type: 'image_url', image_url: { url: 'https://a/b.png' } }]))).toBe(true);
    expect(leavesOut(answered([text]))).toBe(false);
    const custom = { id: 'c', type: 'custom', custom: { name: 'grep', input: 'a long input' } };
    expect(leavesOut([...user(text), { role: 'assistant', content: null, tool_calls: [custom] }])).toBe(true);
  });

  it('leaves out legacy function calling: the functions, and an assistant message calling one', () => {
    const functions = [{ name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }];
    // The request's schema keeps fields it does not name, as sent.
    const body = { model: 'm', messages: user(text), functions };
    const legacy = decodeChatMessages(body);
    expect(legacy).toMatchObject({ uncountedInput: true, untranslatable: ['functions (legacy function calling)'] });
    const called = { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '{"q":"a"}' } };
    expect(leavesOut([...user(text), called, { role: 'function', name: 'lookup', content: 'found' }])).toBe(true);
  });

  it('counts text, refusals, images and function calls', () => {
    expect(leavesOut(user(text, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }))).toBe(false);
    expect(leavesOut([{ role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }])).toBe(false);
    expect(leavesOut([{ role: 'user', content: 'hi' }])).toBe(false);
  });
});

describe('the OpenAI Responses decoder', () => {
  type Input = Exclude<Parameters<typeof decodeResponsesInput>[0]['input'], string>;
  const leavesOut = (...input: Input) => decodeResponsesInput({ model: 'm', input }).uncountedInput;
  const said = (...content: Extract<Input[number], { role: string }>['content'] & unknown[]) =>
    leavesOut({ role: 'user', content });

  it('leaves out files, audio and images by file id', () => {
    expect(said({ type: 'input_file', file_id: 'file-1' })).toBe(true);
    expect(said({ type: 'input_file', file_url: 'https://example.com/a.pdf' })).toBe(true);
    expect(said({ type: 'input_file', file_data: 'AAAA', filename: 'a.pdf' })).toBe(true);
    expect(said({ type: 'input_audio', input_audio: { data: 'AAAA', format: 'mp3' } })).toBe(true);
    expect(said({ type: 'input_image', file_id: 'file-1' })).toBe(true);
    const output = (part: Extract<Input[number], { output: unknown }>['output']) =>
      leavesOut(
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: part },
      );
    expect(output([{ type: 'input_file', file_id: 'file-1' }])).toBe(true);
    expect(output([{ type: 'input_image', image_url: 'https://a/b.png' }])).toBe(true);
  });

  it('leaves out items named by id, reasoning sent back and items of another kind', () => {
    expect(leavesOut({ type: 'item_reference', id: 'msg_1' }, { role: 'user', content: 'hi' })).toBe(true);
    expect(leavesOut({ type: 'item_reference', id: 'fc_1' }, { role: 'user', content: 'hi' })).toBe(true);
    const reasoning = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA' };
    expect(leavesOut({ role: 'user', content: 'hi' }, reasoning, { role: 'user', content: 'go on' })).toBe(true);
    expect(leavesOut({ type: 'computer_call_output', call_id: 'c', output: { type: 'computer_screenshot' } })).toBe(
      true,
    );
  });

  it('counts text, images by URL, calls and their text outputs', () => {
    expect(said({ type: 'input_text', text: 'hi' }, { type: 'input_image', image_url: 'https://a/b.png' })).toBe(false);
    expect(
      leavesOut(
        { role: 'user', content: 'hi' },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'ok' },
      ),
    ).toBe(false);
    expect(decodeResponsesInput({ model: 'm', input: 'hi', instructions: 'be brief' }).uncountedInput).toBe(false);
  });
});

describe('the Anthropic messages decoder', () => {
  type Messages = Parameters<typeof decodeMessages>[0]['messages'];
  type Blocks = Extract<Messages[number]['content'], unknown[]>;
  const leavesOut = (messages: Messages) => decodeMessages({ model: 'm', messages }).uncountedInput;
  const said = (...content: Blocks) => leavesOut([{ role: 'user', content }]);
  const toolTurn = (...result: Blocks) =>
    leavesOut([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: result }] },
    ]);

  it('leaves out documents, images by file id, blocks it does not know and pictures in tool results', () => {
    expect(said({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hi' } })).toBe(true);
    expect(said({ type: 'document', source: { type: 'file', file_id: 'file_1' } })).toBe(true);
    expect(said({ type: 'image', source: { type: 'file', file_id: 'file_1' } })).toBe(true);
    expect(said({ type: 'search_result', source: 'https://a', title: 'a', content: [text] })).toBe(true);
    expect(toolTurn({ type: 'image', source: { type: 'url', url: 'https://a/b.png' } })).toBe(true);
    expect(toolTurn({ type: 'document', source: { type: 'url', url: 'https://a/b.pdf' } })).toBe(true);
  });

  it('leaves out thinking sent back, and what a server tool found', () => {
    const replayed = (...blocks: Blocks) =>
      leavesOut([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [...blocks, text] },
        { role: 'user', content: 'go on' },
      ]);
    expect(replayed({ type: 'thinking', thinking: 'Let me think.', signature: 'sig' })).toBe(true);
    expect(replayed({ type: 'redacted_thinking', data: 'EmwKAhgB' })).toBe(true);
    expect(
      replayed(
        { type: 'server_tool_use', id: 's', name: 'web_search', input: { query: 'a' } },
        { type: 'web_search_tool_result', tool_use_id: 's', content: [] },
      ),
    ).toBe(true);
  });

  it('counts text, images by data or URL, calls and their text results', () => {
    expect(
      said(
        text,
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
        { type: 'image', source: { type: 'url', url: 'https://a/b.png' } },
      ),
    ).toBe(false);
    expect(toolTurn(text)).toBe(false);
    expect(
      decodeMessages({ model: 'm', system: 'be brief', messages: [{ role: 'user', content: 'hi' }] }),
    ).toMatchObject({ uncountedInput: false });
  });
});

describe('the Gemini generateContent decoder', () => {
  type Body = Parameters<typeof decodeContents>[0];
  type Parts = Extract<Body['contents'], unknown[]>[number]['parts'];
  const leavesOut = (...parts: Parts) => decodeContents({ contents: [{ role: 'user', parts }] }).uncountedInput;

  it('leaves out inline data other than images, files of another type and code the model ran', () => {
    expect(leavesOut({ inlineData: { mimeType: 'audio/wav', data: 'AAAA' } })).toBe(true);
    expect(leavesOut({ fileData: { mimeType: 'video/mp4', fileUri: 'https://example.com/a.mp4' } })).toBe(true);
    expect(leavesOut({ fileData: { mimeType: 'application/pdf', fileUri: 'gs://bucket/a.pdf' } })).toBe(true);
    expect(leavesOut({ executableCode: { language: 'PYTHON', code: 'print(1)' } })).toBe(true);
    expect(leavesOut({ codeExecutionResult: { outcome: 'OUTCOME_OK', output: '1' } })).toBe(true);
    const system = { parts: [{ inlineData: { mimeType: 'application/pdf', data: 'AAAA' } }] };
    expect(decodeContents({ contents: 'hi', systemInstruction: system }).uncountedInput).toBe(true);
  });

  it('bounds a file by a web address of no named type as a picture, and says the bound may not hold it', () => {
    for (const fileUri of [
      'https://www.youtube.com/watch?v=a',
      'https://generativelanguage.googleapis.com/v1beta/files/a',
    ]) {
      const decoded = decodeContents({ contents: [{ role: 'user', parts: [{ fileData: { fileUri } }] }] });
      expect(decoded.messages).toEqual([
        { role: 'user', content: [{ type: 'image', image: { kind: 'url', url: fileUri } }] },
      ]);
      expect(decoded.uncountedInput).toBe(true);
    }
  });

  it("leaves out a multimodal function response's media, which a translation could not carry either", () => {
    // Not a field the request schema names, so an open object lets it through to the relay as sent.
    const withMedia = {
      name: 'read_pdf',
      response: { ok: true },
      parts: [{ inlineData: { mimeType: 'application/pdf', data: 'AAAA' } }],
    };
    const decoded = decodeContents({
      contents: [
        { role: 'model', parts: [{ functionCall: { name: 'read_pdf', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: withMedia }] },
      ],
    });
    expect(decoded.uncountedInput).toBe(true);
    expect(decoded.untranslatable).toContain('functionResponse parts');
    expect(leavesOut({ functionResponse: { name: 'read_pdf', response: { ok: true } } })).toBe(false);
  });

  it('leaves out thoughts sent back', () => {
    const decoded = decodeContents({
      contents: [
        { role: 'user', parts: [{ text: 'hi' }] },
        { role: 'model', parts: [{ text: 'Let me think.', thought: true }, { text: 'Hello' }] },
        { role: 'user', parts: [{ text: 'go on' }] },
      ],
    });
    expect(decoded.uncountedInput).toBe(true);
  });

  it('counts text, calls and images inline or by a web address of an image type', () => {
    expect(
      leavesOut(
        { text: 'hi' },
        { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
        { fileData: { mimeType: 'image/png', fileUri: 'https://a/b.png' } },
        { functionCall: { name: 'f', args: {} } },
      ),
    ).toBe(false);
    expect(decodeContents({ contents: 'hi', systemInstruction: 'be brief' }).uncountedInput).toBe(false);
  });
});

describe('the input a forwarded request names for its server to read', () => {
  it('OpenAI chat: a web search', () => {
    expect(chatReadsServerInput({ messages: [], web_search_options: {} })).toBe(true);
    expect(chatReadsServerInput({ messages: [], web_search_options: null })).toBe(false);
    // The parts are the decoder's to judge: the protocol's description does not walk them again.
    expect(chatReadsServerInput({ messages: [{ role: 'user', content: [{ type: 'file', file: {} }] }] })).toBe(false);
  });

  it('OpenAI Responses: stored input, and the tools that search the web or files or ask an MCP server', () => {
    expect(responsesReadsServerInput({ input: 'hi', previous_response_id: 'resp_1' })).toBe(true);
    expect(responsesReadsServerInput({ input: 'hi', conversation: 'conv_1' })).toBe(true);
    expect(responsesReadsServerInput({ input: 'hi', prompt: { id: 'pmpt_1' } })).toBe(true);
    for (const type of ['web_search', 'web_search_preview', 'web_search_2025_08_26', 'file_search', 'mcp'])
      expect(responsesReadsServerInput({ input: 'hi', tools: [{ type }] })).toBe(true);
    expect(responsesReadsServerInput({ input: 'hi', previous_response_id: null })).toBe(false);
    expect(
      responsesReadsServerInput({
        input: 'hi',
        tools: [{ type: 'function', name: 'f' }, { type: 'image_generation' }],
      }),
    ).toBe(false);
  });

  it('Anthropic messages: a thread, the server tools that search or fetch the web, and MCP servers', () => {
    expect(messagesReadServerInput({ messages: [], thread: { type: 'create' } })).toBe(true);
    expect(
      messagesReadServerInput({ messages: [], tools: [{ type: 'web_search_20250305', name: 'web_search' }] }),
    ).toBe(true);
    expect(messagesReadServerInput({ messages: [], tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }] })).toBe(
      true,
    );
    expect(
      messagesReadServerInput({
        messages: [],
        tools: [
          { name: 'f', input_schema: {} },
          { type: 'code_execution_20250825', name: 'code_execution' },
        ],
      }),
    ).toBe(false);
    expect(messagesReadServerInput({ messages: [], thread: null })).toBe(false);
    expect(
      messagesReadServerInput({ messages: [], mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'm' }] }),
    ).toBe(true);
    expect(messagesReadServerInput({ messages: [], mcp_servers: [] })).toBe(false);
  });

  it('Gemini generateContent: cached content, and the tools that search or read the web and files', () => {
    expect(generateContentReadsServerInput({ contents: 'hi', cachedContent: 'cachedContents/1' })).toBe(true);
    for (const tool of ['googleSearch', 'googleSearchRetrieval', 'googleMaps', 'urlContext', 'fileSearch'])
      expect(generateContentReadsServerInput({ contents: 'hi', tools: [{ [tool]: {} }] })).toBe(true);
    expect(
      generateContentReadsServerInput({
        contents: 'hi',
        tools: [{ functionDeclarations: [{ name: 'f' }] }, { codeExecution: {} }],
      }),
    ).toBe(false);
  });
});
