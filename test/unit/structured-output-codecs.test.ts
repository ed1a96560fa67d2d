import { describe, expect, it } from 'vitest';
import type { ChatRequest, ChatStreamEvent } from '../../src/domain/chat.ts';
import { addressOnlyTarget } from '../support/provider-target.ts';
import { UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { collectAnswer } from '../../src/gateway/collected-answer.ts';
import { anthropicCarries, encodeMessagesRequest } from '../../src/providers/anthropic/anthropic-messages.ts';
import { encodeGenerateContent, geminiCarries } from '../../src/providers/gemini/gemini-content.ts';
import { encodeChatRequest, openAiCarries } from '../../src/providers/openai/openai-chat.ts';
import { askedChoice } from '../../src/providers/shared/wire-data.ts';
import {
  ChunkEncoder as AlphaChunkEncoder,
  chatCompletionOf,
  decodeChatMessages,
} from '../../src/surfaces/alpha/chat-completions-codec.ts';
import { decodeMessages, relayBody } from '../../src/surfaces/beta/messages-codec.ts';
import type { MessagesRequest } from '../../src/protocols/anthropic/messages.ts';
import {
  ChunkEncoder as GammaChunkEncoder,
  decodeContents,
  responseOf,
} from '../../src/surfaces/gamma/generate-content-codec.ts';

/** The field mapping of structured output and several completions, surface to canonical to upstream. */
const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const asked = { type: 'json_schema', name: 'response', schema } as const;
const base: ChatRequest = { upstreamModel: 'm', messages: [{ role: 'user', content: 'hi' }] };
const target = addressOnlyTarget('https://api.openai.com/v1');
const messages = [{ role: 'user', content: 'hi' }];

describe('decoding each surface answer format into the canonical one', () => {
  it('reads alpha response_format', () => {
    const decoded = decodeChatMessages({
      model: 'm',
      messages,
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema, strict: true } },
    });
    expect(decoded.responseFormat).toEqual({ type: 'json_schema', name: 'place', schema, strict: true });
  });

  it('reads beta output_config.format and the older output_format, and cannot translate another format', () => {
    const body = (fields: object): MessagesRequest => ({ model: 'm', max_tokens: 10, messages, ...fields });
    const format = { type: 'json_schema', schema };
    expect(decodeMessages(body({ output_config: { format } })).responseFormat).toEqual(asked);
    expect(decodeMessages(body({ output_format: format })).responseFormat).toEqual(asked);
    const other = decodeMessages(body({ output_config: { format: { type: 'regex' } } }));
    expect(other.responseFormat).toBeUndefined();
    expect(other.untranslatable).toEqual(['this output_config.format']);
    expect(decodeMessages(body({ output_config: { effort: 'low' } })).reasoningEffort).toBe('low');
  });

  it('reads gamma responseMimeType with responseSchema (as JSON Schema) or responseJsonSchema', () => {
    const decode = (generationConfig: object) =>
      decodeContents({
        contents: 'hi',
        generationConfig: { responseMimeType: 'application/json', ...generationConfig },
      }).responseFormat;
    const openApi = { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] };
    // An object of the protocol's dialect lists its properties and no others: closed, as JSON Schema says it.
    expect(decode({ responseSchema: openApi })).toEqual({
      ...asked,
      schema: { ...schema, additionalProperties: false },
    });
    expect(decode({ responseJsonSchema: schema })).toEqual(asked);
    expect(decode({})).toEqual({ type: 'json_object' });
  });

  it("converts gamma's OpenAPI dialect keyword by keyword: counts as integers, its own keywords and formats out", () => {
    // As @google/genai's Schema type has a client write it: int64 counts as strings, an enum marked by its format.
    const responseSchema = {
      type: 'OBJECT',
      title: 'Forecast',
      description: 'A week of weather',
      propertyOrdering: ['days', 'city'],
      example: { city: 'Paris', days: [] },
      properties: {
        city: { type: 'STRING', minLength: '1', maxLength: '80', pattern: '^[A-Z]', default: 'Paris' },
        days: {
          type: 'ARRAY',
          minItems: '1',
          maxItems: '7',
          items: {
            type: 'OBJECT',
            minProperties: '2',
            maxProperties: 4,
            properties: {
              day: { type: 'STRING', format: 'date' },
              sky: { type: 'STRING', format: 'enum', enum: ['sun', 'rain'] },
              high: { type: 'INTEGER', format: 'int32', minimum: -50, maximum: '60.5' },
              floor: { type: 'INTEGER', format: 'enum', enum: ['1', '2'], nullable: true },
              wind: { type: 'NUMBER', format: 'double', nullable: false },
            },
            required: ['day', 'sky'],
          },
        },
        note: { type: 'TYPE_UNSPECIFIED', description: 'anything', example: 'dry' },
      },
      required: ['city', 'days'],
    };
    const decoded = decodeContents({
      contents: 'hi',
      generationConfig: { responseMimeType: 'application/json', responseSchema },
    }).responseFormat;
    const converted = decoded?.type === 'json_schema' ? decoded.schema : undefined;
    expect(converted).toEqual({
      type: 'object',
      title: 'Forecast',
      description: 'A week of weather',
      properties: {
        days: {
          type: 'array',
          minItems: 1,
          maxItems: 7,
          items: {
            type: 'object',
            minProperties: 2,
            maxProperties: 4,
            properties: {
              day: { type: 'string', format: 'date' },
              sky: { type: 'string', enum: ['sun', 'rain'] },
              high: { type: 'integer', minimum: -50, maximum: 60.5 },
              floor: { type: ['integer', 'null'], enum: [1, 2, null] },
              wind: { type: 'number' },
            },
            required: ['day', 'sky'],
            additionalProperties: false,
          },
        },
        city: { type: 'string', minLength: 1, maxLength: 80, pattern: '^[A-Z]', default: 'Paris' },
        note: { description: 'anything' },
      },
      required: ['city', 'days'],
      additionalProperties: false,
    });
    // propertyOrdering is the order the answer writes its properties in: JSON Schema's order of the keys.
    expect(Object.keys(converted?.properties ?? {})).toEqual(['days', 'city', 'note']);
  });
});

describe('encoding the canonical answer format and completions for each upstream', () => {
  it('asks OpenAI with response_format and n', () => {
    expect(encodeChatRequest({ ...base, responseFormat: asked, choices: 3 })).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema } },
      n: 3,
    });
    expect(encodeChatRequest({ ...base, choices: 1 })).not.toHaveProperty('n');
    expect(openAiCarries('choices', { ...base, choices: 3 }, target)).toBe(true);
  });

  it('asks Gemini with responseMimeType, responseJsonSchema and candidateCount', () => {
    expect(encodeGenerateContent({ ...base, responseFormat: asked, choices: 2 })).toMatchObject({
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema, candidateCount: 2 },
    });
    expect(geminiCarries('choices', { ...base, choices: 2 })).toBe(true);
  });

  it('asks Anthropic with output_config.format, beside the client tools', () => {
    const tools = [{ name: 'lookup', parameters: schema }];
    const body = encodeMessagesRequest({ ...base, responseFormat: asked, tools });
    // Its held answers want every object said closed; a tool that is not strict takes the schema as it is.
    expect(body.output_config).toEqual({
      format: { type: 'json_schema', schema: { ...schema, additionalProperties: false } },
    });
    expect(body.tools).toEqual([{ name: 'lookup', input_schema: schema }]);
    expect(anthropicCarries('responseFormat', { ...base, responseFormat: asked, tools })).toBe(true);
    expect(anthropicCarries('choices', { ...base, choices: 2 })).toBe(false);
  });

  it('asks Anthropic for a JSON answer without schema through one forced tool, which nothing else may need', () => {
    const json = { ...base, responseFormat: { type: 'json_object' } } as const;
    const body = encodeMessagesRequest(json);
    expect(body).not.toHaveProperty('output_config');
    expect(body.tools).toEqual([
      { name: 'json_answer', description: expect.any(String), input_schema: { type: 'object' } },
    ]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'json_answer' });
    expect(anthropicCarries('responseFormat', json)).toBe(true);
    expect(anthropicCarries('responseFormat', { ...json, tools: [{ name: 'lookup' }] })).toBe(false);
    expect(anthropicCarries('responseFormat', { ...json, thinking: { type: 'enabled', budgetTokens: 1024 } })).toBe(
      false,
    );
    expect(anthropicCarries('responseFormat', { ...base, responseFormat: { type: 'text' } })).toBe(true);
  });

  it('carries the older output_format of beta, and the effort of its output_config, to Gemini', () => {
    const { untranslatable, ...decoded } = decodeMessages({
      model: 'm',
      messages,
      output_format: { type: 'json_schema', schema },
      output_config: { effort: 'low' },
    });
    expect(untranslatable).toEqual([]);
    const request: ChatRequest = { upstreamModel: 'gemini-2.5-flash', ...decoded };
    expect(encodeGenerateContent(request).generationConfig).toMatchObject({
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
      thinkingConfig: { thinkingLevel: 'LOW' },
    });
    expect(geminiCarries('responseFormat', request)).toBe(true);
    expect(geminiCarries('reasoningEffort', request)).toBe(true);
  });

  it('leaves the answer format out of a relayed beta request that drops it, keeping the rest of output_config', () => {
    const outputConfig = { format: { type: 'json_schema', schema }, effort: 'low' };
    const body: MessagesRequest = {
      model: 'm',
      max_tokens: 10,
      messages,
      output_config: outputConfig,
      output_format: { type: 'json_schema', schema },
    };
    const forwarded = relayBody(body, {
      upstreamModel: 'up',
      droppedNativeNames: ['responseFormat'],
      maxOutputTokens: 10,
    });
    expect(forwarded.output_config).toEqual({ effort: 'low' });
    expect(forwarded).not.toHaveProperty('output_format');
    expect(
      relayBody(body, { upstreamModel: 'up', droppedNativeNames: ['reasoningEffort'], maxOutputTokens: 10 })
        .output_config,
    ).toEqual({
      format: { type: 'json_schema', schema },
    });
    expect(
      relayBody(
        { ...body, output_config: { format: { type: 'json_schema', schema } } },
        { upstreamModel: 'up', droppedNativeNames: ['responseFormat'], maxOutputTokens: 10 },
      ),
    ).not.toHaveProperty('output_config');
  });
});

describe('several completions in the answer', () => {
  const finish = { unified: 'stop', raw: 'stop' } as const;
  const events: ChatStreamEvent[] = [
    { type: 'text-delta', text: 'one' },
    { type: 'text-delta', text: 'two', choice: 1 },
    { type: 'tool-call-start', index: 0, id: 'call_1', name: 'lookup', choice: 1 },
    { type: 'tool-call-delta', index: 0, arguments: '{}', choice: 1 },
    { type: 'choice-finish', choice: 1, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
    { type: 'finish', finishReason: finish, usage: { inputTokens: 1, outputTokens: 2 } },
  ];
  async function* stream() {
    yield* events;
  }

  it('collects each choice, and answers them all in the protocol of the surface', async () => {
    const answer = await collectAnswer(stream());
    expect(answer.text).toBe('one');
    expect(answer.alternatives).toEqual([
      {
        text: 'two',
        toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{}' }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      },
    ]);
    expect(chatCompletionOf('m', answer)).toMatchObject({
      choices: [
        { index: 0, message: { content: 'one' }, finish_reason: 'stop' },
        { index: 1, message: { content: 'two', tool_calls: [{ id: 'call_1' }] }, finish_reason: 'tool_calls' },
      ],
    });
    expect(responseOf('m', answer)).toMatchObject({
      candidates: [
        { index: 0, content: { parts: [{ text: 'one' }] }, finishReason: 'STOP' },
        { index: 1, content: { parts: [{ text: 'two' }, { functionCall: { name: 'lookup' } }] }, finishReason: 'STOP' },
      ],
    });
  });

  it('takes from an upstream only the choices asked for', () => {
    expect(askedChoice(1, 2)).toBe(1);
    expect(askedChoice(0, undefined)).toBe(0);
    expect(() => askedChoice(1, undefined)).toThrow(UpstreamUnreachableError);
    expect(() => askedChoice(1_000_000, 2)).toThrow('which was not asked for');
  });

  it('streams each choice under its index', () => {
    const alpha = new AlphaChunkEncoder('m');
    const chunks = events.flatMap((event) => alpha.encode(event)) as Array<{
      choices: Array<{ index: number; delta: { role?: string; content?: string }; finish_reason: string | null }>;
    }>;
    const of = (index: number) => chunks.flatMap((chunk) => chunk.choices.filter((choice) => choice.index === index));
    expect(of(1).map((choice) => [choice.delta.role, choice.delta.content, choice.finish_reason])).toEqual([
      ['assistant', '', null],
      [undefined, 'two', null],
      [undefined, undefined, null],
      [undefined, undefined, null],
      [undefined, undefined, 'tool_calls'],
    ]);
    expect(of(0).at(-1)!.finish_reason).toBe('stop');
    const gamma = new GammaChunkEncoder('m');
    const candidates = events.flatMap((event) => gamma.encode(event)).flatMap((chunk) => chunk.candidates ?? []);
    expect(candidates.filter((candidate) => candidate.index === 1).length).toBe(3);
    expect(candidates.filter((candidate) => candidate.finishReason).map((candidate) => candidate.index)).toEqual([
      1, 0,
    ]);
  });
});
