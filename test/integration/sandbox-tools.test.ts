import Anthropic from '@anthropic-ai/sdk';
import { Ajv } from 'ajv';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * The shipped catalog's `sandbox-echo` through the official SDKs: tool calls (required, named, parallel,
 * streamed and whole), the text that ends a tool loop, and structured answers, as docs/sandbox.md says.
 */
const ajv = new Ajv({ strict: false });

const weatherSchema = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    at: { type: 'object', properties: { lat: { type: 'number' }, lon: { type: 'number' } }, required: ['lat', 'lon'] },
  },
  required: ['city', 'unit', 'days', 'at'],
  additionalProperties: false,
};
const timeSchema = { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] };

const ratingSchema = {
  type: 'object',
  properties: {
    summary: { type: 'string' },
    stars: { type: 'integer', minimum: 1, maximum: 5 },
    tags: { type: 'array', items: { type: 'string', enum: ['good', 'bad'] }, minItems: 1 },
  },
  required: ['summary', 'stars', 'tags'],
  additionalProperties: false,
};

describe('sandbox-echo tools and structured output', () => {
  let gateway: TestGateway;
  let address: string;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
    ({ key } = await gateway.createFundedKey({ credits: 1 }));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  describe('alpha', () => {
    const openai = () => new OpenAI({ apiKey: key, baseURL: `${address}/api/alpha/v1`, maxRetries: 0 });
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: weatherSchema } },
      { type: 'function', function: { name: 'get_time', parameters: timeSchema } },
    ];

    it('calls the required tool with arguments valid against its schema', async () => {
      const completion = await openai().chat.completions.create({
        model: 'sandbox-echo',
        messages: [{ role: 'user', content: 'Paris' }],
        tools,
        tool_choice: 'required',
      });
      const choice = completion.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      const call = choice.message.tool_calls![0]!;
      expect(call.type === 'function' && call.function.name).toBe('get_weather');
      const args: unknown = call.type === 'function' ? JSON.parse(call.function.arguments) : undefined;
      expect(ajv.validate(weatherSchema, args)).toBe(true);
      expect(args).toMatchObject({ city: 'Paris', unit: 'celsius', days: 1 });
    });

    it('streams parallel calls of the tools the message names', async () => {
      const stream = openai().chat.completions.stream({
        model: 'sandbox-echo',
        messages: [{ role: 'user', content: 'use get_time and get_weather' }],
        tools,
      });
      const completion = await stream.finalChatCompletion();
      const calls = completion.choices[0]!.message.tool_calls ?? [];
      expect(calls.map((call) => call.type === 'function' && call.function.name)).toEqual(['get_weather', 'get_time']);
      for (const call of calls) {
        if (call.type !== 'function') continue;
        const schema = call.function.name === 'get_time' ? timeSchema : weatherSchema;
        expect(ajv.validate(schema, JSON.parse(call.function.arguments))).toBe(true);
      }
      expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    });

    it("ends the SDK's tool loop with text that quotes the tool's result", async () => {
      const runner = openai().chat.completions.runTools({
        model: 'sandbox-echo',
        messages: [{ role: 'user', content: 'call the weather tool for Paris' }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'the weather of a city',
              parameters: weatherSchema,
              function: (args: string) => (ajv.validate(weatherSchema, JSON.parse(args)) ? 'sunny' : 'bad arguments'),
            },
          },
        ],
      });
      expect(await runner.finalContent()).toBe('get_weather returned sunny');
      expect(runner.messages.filter((message) => message.role === 'tool')).toHaveLength(1);
    });

    it('ends a loop of two parallel calls with text quoting both results, each sent in a tool message', async () => {
      const runner = openai().chat.completions.runTools({
        model: 'sandbox-echo',
        messages: [{ role: 'user', content: 'get_weather and get_time for Oslo' }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'the weather',
              parameters: weatherSchema,
              function: () => 'warm',
            },
          },
          {
            type: 'function',
            function: { name: 'get_time', description: 'the time', parameters: timeSchema, function: () => 'noon' },
          },
        ],
      });
      expect(await runner.finalContent()).toBe('get_weather returned warm\nget_time returned noon');
      expect(runner.messages.filter((message) => message.role === 'tool')).toHaveLength(2);
    });

    it('answers JSON valid against a json_schema response format, whole and streamed', async () => {
      const body = {
        model: 'sandbox-echo',
        messages: [{ role: 'user' as const, content: 'rate the film' }],
        response_format: {
          type: 'json_schema' as const,
          json_schema: { name: 'rating', schema: ratingSchema, strict: true },
        },
      };
      const completion = await openai().chat.completions.create(body);
      const whole: unknown = JSON.parse(completion.choices[0]!.message.content!);
      expect(ajv.validate(ratingSchema, whole)).toBe(true);
      expect(whole).toEqual({ summary: 'rate the film', stars: 1, tags: ['good'] });
      const streamed = await openai().chat.completions.stream(body).finalContent();
      expect(JSON.parse(streamed!)).toEqual(whole);
    });

    it('answers a JSON object in json_object mode', async () => {
      const completion = await openai().chat.completions.create({
        model: 'sandbox-echo',
        messages: [{ role: 'user', content: 'answer in JSON' }],
        response_format: { type: 'json_object' },
      });
      expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ text: 'answer in JSON' });
    });

    it('calls tools and answers structured output on the responses API too', async () => {
      const response = await openai().responses.create({
        model: 'sandbox-echo',
        input: 'get_time please',
        tools: [{ type: 'function', name: 'get_time', parameters: timeSchema, strict: false }],
      });
      const call = response.output.find((item) => item.type === 'function_call');
      expect(call?.type === 'function_call' && [call.name, JSON.parse(call.arguments)]).toEqual([
        'get_time',
        { zone: 'get_time please' },
      ]);
      const structured = await openai().responses.create({
        model: 'sandbox-echo',
        input: 'rate it',
        text: { format: { type: 'json_schema', name: 'rating', schema: ratingSchema } },
      });
      expect(ajv.validate(ratingSchema, JSON.parse(structured.output_text))).toBe(true);
    });
  });

  describe('beta', () => {
    const anthropic = () => new Anthropic({ apiKey: key, baseURL: `${address}/api/beta`, maxRetries: 0 });
    const tools: Anthropic.Tool[] = [
      { name: 'get_weather', input_schema: { ...weatherSchema, type: 'object' } },
      { name: 'get_time', input_schema: { ...timeSchema, type: 'object' } },
    ];

    it('calls a named tool with input valid against its schema', async () => {
      const message = await anthropic().messages.create({
        model: 'sandbox-echo',
        max_tokens: 200,
        messages: [{ role: 'user', content: 'what time is it' }],
        tools,
        tool_choice: { type: 'tool', name: 'get_time' },
      });
      expect(message.stop_reason).toBe('tool_use');
      expect(message.content).toEqual([
        { type: 'tool_use', id: expect.any(String) as unknown, name: 'get_time', input: { zone: 'what time is it' } },
      ]);
    });

    it('streams parallel tool_use blocks, then a loop ends in text quoting the results', async () => {
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'get_weather and get_time for Oslo' }];
      const first = await anthropic()
        .messages.stream({ model: 'sandbox-echo', max_tokens: 400, messages, tools, tool_choice: { type: 'any' } })
        .finalMessage();
      expect(first.stop_reason).toBe('tool_use');
      const uses = first.content.filter((block) => block.type === 'tool_use');
      expect(uses.map((use) => use.name)).toEqual(['get_weather', 'get_time']);
      expect(ajv.validate(weatherSchema, uses[0]!.input)).toBe(true);
      expect(ajv.validate(timeSchema, uses[1]!.input)).toBe(true);

      messages.push(
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: uses.map((use) => ({
            type: 'tool_result' as const,
            tool_use_id: use.id,
            content: `${use.name} ok`,
          })),
        },
      );
      const second = await anthropic().messages.create({ model: 'sandbox-echo', max_tokens: 400, messages, tools });
      expect(second.stop_reason).toBe('end_turn');
      expect(second.content).toEqual([
        { type: 'text', text: 'get_weather returned get_weather ok\nget_time returned get_time ok' },
      ]);
    });
  });

  describe('gamma', () => {
    it('calls a function and answers a response schema', async () => {
      const post = (payload: object) =>
        gateway.request({
          method: 'POST',
          url: '/api/gamma/v1beta/models/sandbox-echo:generateContent',
          headers: { 'x-goog-api-key': key },
          payload,
        });
      const called = await post({
        contents: [{ role: 'user', parts: [{ text: 'Lima' }] }],
        tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: weatherSchema }] }],
        toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      });
      expect(called.statusCode, called.body).toBe(200);
      const part = called.json<{
        candidates: Array<{ content: { parts: Array<{ functionCall?: { args: unknown } }> } }>;
      }>().candidates[0]!.content.parts[0]!;
      expect(ajv.validate(weatherSchema, part.functionCall?.args)).toBe(true);

      const structured = await post({
        contents: [{ role: 'user', parts: [{ text: 'rate it' }] }],
        generationConfig: { responseMimeType: 'application/json', responseJsonSchema: ratingSchema },
      });
      expect(structured.statusCode, structured.body).toBe(200);
      const text = structured.json<{ candidates: Array<{ content: { parts: Array<{ text: string }> } }> }>()
        .candidates[0]!.content.parts[0]!.text;
      expect(ajv.validate(ratingSchema, JSON.parse(text))).toBe(true);
    });
  });
});
