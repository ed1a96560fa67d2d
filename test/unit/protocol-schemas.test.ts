import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMessagesStreamEvent } from '../../src/protocols/anthropic/messages.ts';
import { isGenerateContentResponse } from '../../src/protocols/gemini/generate-content.ts';
import { isChatCompletion, isChatCompletionChunk } from '../../src/protocols/openai/chat-completions.ts';
import { isResponsesStreamEvent } from '../../src/protocols/openai/responses.ts';
import { dataOf, jsonArraySplitter } from '../../src/providers/shared/stream-splitters.ts';
import { fakeAnthropicKey, startAnthropicFake } from '../fakes/anthropic-fake.ts';
import { fakeArkKey, startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeGeminiKey, startGeminiFake } from '../fakes/gemini-fake.ts';
import { fakeOpenAiKey, startOpenAiFake } from '../fakes/openai-fake.ts';

/** Data that is JSON but no answer or event of any of the protocols. */
const notOfAnyProtocol = [null, [], {}, { hello: 'world' }, 'text', 42];

describe('protocol shapes', () => {
  it("take the providers' own answers and events, extra fields and all (examples from the wire notes)", () => {
    const chunk = {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o',
      choices: [
        { index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null },
      ],
      usage: null,
    };
    expect(isChatCompletionChunk(chunk)).toBe(true);
    expect(
      isChatCompletionChunk({
        ...chunk,
        choices: [],
        usage: { prompt_tokens: 17, completion_tokens: 10, total_tokens: 27 },
      }),
    ).toBe(true);
    expect(isChatCompletionChunk({ error: { message: 'overloaded' } })).toBe(true);
    // A later fragment of a call as vLLM (a null name) and others (a null id and type) stream it.
    const fragment = { index: 0, id: null, type: null, function: { name: null, arguments: '{"q' } };
    expect(isChatCompletionChunk({ ...chunk, choices: [{ index: 0, delta: { tool_calls: [fragment] } }] })).toBe(true);
    expect(
      isChatCompletion({
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
      }),
    ).toBe(true);
    expect(
      isResponsesStreamEvent({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', usage: null } }),
    ).toBe(true);
    expect(isMessagesStreamEvent({ type: 'ping' })).toBe(true);
    expect(
      isMessagesStreamEvent({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 15 },
      }),
    ).toBe(true);
    expect(isGenerateContentResponse({ promptFeedback: { blockReason: 'SAFETY' } })).toBe(true);
    expect(
      isGenerateContentResponse({
        candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 2 },
      }),
    ).toBe(true);
    expect(
      isGenerateContentResponse({
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: 'Thinking', thought: true },
                { functionCall: { name: 'f', args: { q: 1 } }, thoughtSignature: 'c2ln' },
                { executableCode: { language: 'PYTHON', code: 'print(1)' } },
                { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '1' } },
                { inlineData: { mimeType: 'image/png', data: 'iVBO' } },
              ],
            },
            safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }],
            groundingMetadata: { webSearchQueries: ['q'] },
            finishReason: 'STOP',
          },
        ],
        promptFeedback: { safetyRatings: [] },
      }),
    ).toBe(true);
  });

  it('refuse JSON of another shape, and fields the gateway reads that have the wrong type', () => {
    for (const check of [
      isChatCompletionChunk,
      isChatCompletion,
      isResponsesStreamEvent,
      isMessagesStreamEvent,
      isGenerateContentResponse,
    ]) {
      for (const value of notOfAnyProtocol) expect(check(value)).toBe(false);
    }
    expect(isChatCompletionChunk({ choices: [{ delta: { content: 7 } }] })).toBe(false);
    expect(isChatCompletionChunk({ choices: [], usage: { prompt_tokens: '5' } })).toBe(false);
    expect(isMessagesStreamEvent({ type: 'content_block_delta', delta: { type: 'text_delta', text: ['Hi'] } })).toBe(
      false,
    );
    expect(isGenerateContentResponse({ candidates: [{ content: { parts: [{ functionCall: { args: {} } }] } }] })).toBe(
      false,
    );
    for (const part of [
      { functionCall: { name: 'f', args: 'not an object' } },
      { inlineData: { mimeType: 'image/png' } },
      { text: 'Hi', thought: 'yes' },
    ])
      expect(isGenerateContentResponse({ candidates: [{ content: { parts: [part] } }] })).toBe(false);
    expect(isGenerateContentResponse({ promptFeedback: { blockReason: 3 } })).toBe(false);
  });
});

describe('the JSON-array stream splitter', () => {
  const elements = [
    { text: 'a [bracket] and a } brace' },
    { text: 'an "escaped\\" quote\\\\', nested: [{ deep: [1, 2, { x: '{' }] }] },
    {},
  ];
  const utf8 = (piece: string) => new TextEncoder().encode(piece);
  const text = `[${elements.map((element) => JSON.stringify(element)).join(',\r\n')}]`;

  it('gives each element whole, however the stream is cut', () => {
    for (let cut = 0; cut <= text.length; cut++) {
      const split = jsonArraySplitter(1024 * 1024);
      const parts = dataOf([...split(utf8(text.slice(0, cut))), ...split(utf8(text.slice(cut)))]);
      expect(parts.map((part) => JSON.parse(part) as unknown)).toEqual(elements);
    }
  });

  it('refuses what is not an array of objects', () => {
    expect(() => jsonArraySplitter(1024 * 1024)(utf8('{"candidates":[]}'))).toThrow(/does not open with \[/);
    expect(() => jsonArraySplitter(1024 * 1024)(utf8('[1, 2]'))).toThrow(/an element opens with/);
    expect(() => jsonArraySplitter(1024 * 1024)(utf8('[{}] trailing'))).toThrow(/more after its end/);
  });
});

describe('fakes check requests against the protocol', () => {
  let fakes: FakeServer[];
  beforeAll(async () => {
    fakes = await Promise.all([startOpenAiFake(), startAnthropicFake(), startGeminiFake(), startArkFake()]);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((fake) => fake.close()));
  });

  const post = async (url: string, headers: Record<string, string>, body: object) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };

  it("answer a request of the wrong shape 400 with the provider's own error body", async () => {
    const [openai, anthropic, gemini, ark] = fakes as [FakeServer, FakeServer, FakeServer, FakeServer];
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    expect(
      await post(`${openai.url}/v1/chat/completions`, bearer(fakeOpenAiKey), { model: 'gpt-4o', messages: [] }),
    ).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error' } } });
    expect(
      await post(`${openai.url}/v1/embeddings`, bearer(fakeOpenAiKey), { model: 'text-embedding-3-small' }),
    ).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error' } } });
    const anthropicHeaders = { 'x-api-key': fakeAnthropicKey, 'anthropic-version': '2023-06-01' };
    expect(
      await post(`${anthropic.url}/v1/messages`, anthropicHeaders, { model: 'claude', max_tokens: 10, messages: 'hi' }),
    ).toMatchObject({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error' } } });
    expect(
      await post(
        `${gemini.url}/v1beta/models/gemini-2.5-flash:generateContent`,
        { 'x-goog-api-key': fakeGeminiKey },
        { contents: [{ parts: [] }] },
      ),
    ).toMatchObject({ status: 400, body: { error: { status: 'INVALID_ARGUMENT' } } });
    expect(
      await post(`${ark.url}/api/v3/embeddings/multimodal`, bearer(fakeArkKey), {
        model: 'doubao',
        input: [{ type: 'text' }],
      }),
    ).toMatchObject({ status: 400, body: { error: { code: 'InvalidParameter' } } });
  });
});
