import { createOpenAI } from '@ai-sdk/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { generateText, Output } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { FakeServer } from '../fakes/fake-server.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';

/** A schema every protocol holds strictly: an object, closed, every property required. */
const closed = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};
/** A schema Anthropic and Gemini hold answers to, which OpenAI takes only best-effort (it is open). */
const open = { type: 'object', properties: { city: { type: 'string' } } };

/**
 * A structured answer asked in one protocol and served by another: the schema arrives whole and converted, held
 * as strictly as the serving protocol can (or the loss named), the answer's end told in the client's terms, and
 * a format the serving protocol cannot ask for refused with 400 rather than answered in another shape.
 */
describe('structured output across protocols', () => {
  const setup = useFamilyGateway({ credits: 5, listen: true });

  const post = (url: string, payload: object) =>
    setup.gateway.request({ method: 'POST', url, headers: { 'x-api-key': setup.key }, payload });
  const gamma = (model: string, body: object) =>
    post(`/api/gamma/v1beta/models/${model}:generateContent`, {
      contents: [{ role: 'user', parts: [{ text: 'where to go' }] }],
      ...body,
    });
  const beta = (model: string, body: object) =>
    post('/api/beta/v1/messages', {
      model,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'where to go' }],
      ...body,
    });
  const lastBody = (fake: FakeServer) => fake.requests.at(-1)?.body as Record<string, unknown>;

  it('converts every sub-schema of a gamma schema, properties named like keywords included', async () => {
    const responseSchema = {
      type: 'OBJECT',
      properties: {
        enum: { type: 'STRING' },
        default: { type: 'INTEGER', nullable: true },
        nullable: { type: 'OBJECT', properties: { x: { type: 'NUMBER' } } },
      },
    };
    const answer = await gamma('via-anthropic', {
      generationConfig: { responseMimeType: 'application/json', responseSchema },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.anthropic)).toMatchObject({
      output_config: {
        format: {
          schema: {
            type: 'object',
            properties: {
              enum: { type: 'string' },
              default: { type: ['integer', 'null'] },
              nullable: { type: 'object', properties: { x: { type: 'number' } } },
            },
          },
        },
      },
    });
  });

  it('sends a gamma schema as @google/genai types it as JSON Schema each protocol takes, answer and tools alike', async () => {
    // int64 counts as strings, an enum marked by its format, a number's size, and the dialect's own keywords.
    const openApi = {
      type: 'OBJECT',
      propertyOrdering: ['days', 'city'],
      example: { city: 'Paris', days: ['MON'], high: 20 },
      properties: {
        city: { type: 'STRING', format: 'byte' },
        days: { type: 'ARRAY', minItems: '1', maxItems: '7', items: { type: 'STRING', format: 'enum', enum: ['MON'] } },
        high: { type: 'INTEGER', format: 'int32' },
      },
      required: ['city', 'days', 'high'],
    };
    const jsonSchema = {
      type: 'object',
      properties: {
        days: { type: 'array', minItems: 1, maxItems: 7, items: { type: 'string', enum: ['MON'] } },
        city: { type: 'string' },
        high: { type: 'integer' },
      },
      required: ['city', 'days', 'high'],
      additionalProperties: false,
    };
    const config = { responseMimeType: 'application/json', responseSchema: openApi };
    const toOpenAi = await gamma('via-openai', { generationConfig: config });
    expect(toOpenAi.statusCode, toOpenAi.body).toBe(200);
    // The formats no other protocol holds an answer to (`byte`, `int32`) and the example are left out, and named;
    // `format: enum` says no more than its `enum`, which is kept.
    expect(toOpenAi.headers['x-gateway-dropped-parameters']).toBe(
      'generationConfig.responseSchema.example,generationConfig.responseSchema.format',
    );
    const { json_schema } = lastBody(setup.gateway.fakes.openai).response_format as { json_schema: object };
    expect(json_schema).toEqual({ name: 'response', schema: jsonSchema, strict: true });
    const toAnthropic = await gamma('via-anthropic', { generationConfig: config });
    expect(toAnthropic.statusCode, toAnthropic.body).toBe(200);
    // Anthropic holds no answer to an array's largest size: said in words, and the strictness named.
    const days = {
      type: 'array',
      minItems: 1,
      items: { type: 'string', enum: ['MON'] },
      description: '{"maxItems":7}',
    };
    expect(lastBody(setup.gateway.fakes.anthropic).output_config).toEqual({
      format: { type: 'json_schema', schema: { ...jsonSchema, properties: { ...jsonSchema.properties, days } } },
    });
    expect(toAnthropic.headers['x-gateway-dropped-parameters']).toBe(
      'generationConfig.responseSchema,generationConfig.responseSchema.example,generationConfig.responseSchema.format',
    );

    const tools = [{ functionDeclarations: [{ name: 'plan', parameters: openApi }] }];
    const withTools = await gamma('via-anthropic', { tools });
    expect(withTools.statusCode).toBe(200);
    expect(withTools.headers['x-gateway-dropped-parameters']).toBe(
      'tools.functionDeclarations.parameters.example,tools.functionDeclarations.parameters.format',
    );
    expect(lastBody(setup.gateway.fakes.anthropic).tools).toEqual([{ name: 'plan', input_schema: jsonSchema }]);
    expect((await gamma('via-openai', { tools })).statusCode).toBe(200);
    expect(lastBody(setup.gateway.fakes.openai).tools).toEqual([
      { type: 'function', function: { name: 'plan', parameters: jsonSchema } },
    ]);
  });

  it('holds a beta or gamma schema strictly on OpenAI where OpenAI can, and names the strictness where it cannot', async () => {
    const strictSent = () =>
      (lastBody(setup.gateway.fakes.openai).response_format as { json_schema: { strict?: boolean } }).json_schema
        .strict;
    const closedBeta = await beta('via-openai', { output_config: { format: { type: 'json_schema', schema: closed } } });
    expect(closedBeta.statusCode, closedBeta.body).toBe(200);
    expect(strictSent()).toBe(true);
    expect(closedBeta.headers['x-gateway-dropped-parameters']).toBeUndefined();
    const openBeta = await beta('via-openai', { output_config: { format: { type: 'json_schema', schema: open } } });
    expect(openBeta.statusCode, openBeta.body).toBe(200);
    expect(strictSent()).toBeUndefined();
    expect(openBeta.headers['x-gateway-dropped-parameters']).toBe('output_config.format');

    const openGamma = await gamma('via-openai', {
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: open },
    });
    expect(openGamma.statusCode, openGamma.body).toBe(200);
    expect(openGamma.headers['x-gateway-dropped-parameters']).toBe('generationConfig.responseJsonSchema');
    // Anthropic and Gemini hold answers to any schema: nothing is lost there.
    const toGemini = await beta('via-gemini', { output_config: { format: { type: 'json_schema', schema: open } } });
    expect(toGemini.statusCode, toGemini.body).toBe(200);
    expect(toGemini.headers['x-gateway-dropped-parameters']).toBeUndefined();
  });

  it('leaves out what a serving protocol refuses of a schema it holds answers to, says it in descriptions, and names the strictness', async () => {
    const bounded = {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, description: 'who' },
        age: { type: 'integer', minimum: 0, maximum: 150 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 5 },
      },
      required: ['name', 'age', 'tags'],
      additionalProperties: false,
    };
    // Anthropic refuses number bounds, string lengths and array sizes past one: what they said goes into the
    // descriptions (the model still reads it), and the strictness the client asked for is named as not held.
    const held = {
      ...bounded,
      title: 'person',
      properties: {
        name: { type: 'string', description: 'who {"minLength":1}' },
        age: { type: 'integer', description: '{"minimum":0,"maximum":150}' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1, description: '{"maxItems":5}' },
      },
    };
    const toAnthropic = await post('/api/alpha/v1/chat/completions', {
      model: 'via-anthropic',
      messages: [{ role: 'user', content: 'who' }],
      response_format: { type: 'json_schema', json_schema: { name: 'person', strict: true, schema: bounded } },
    });
    expect(toAnthropic.statusCode, toAnthropic.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.anthropic).output_config).toEqual({
      format: { type: 'json_schema', schema: held },
    });
    expect(toAnthropic.headers['x-gateway-dropped-parameters']).toBe('response_format.json_schema.strict');
    // Not asked strictly, the schema is carried as far as the protocol takes it: nothing to name.
    const loose = await post('/api/alpha/v1/chat/completions', {
      model: 'via-anthropic',
      messages: [{ role: 'user', content: 'who' }],
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema: bounded } },
    });
    expect(loose.statusCode, loose.body).toBe(200);
    expect(loose.headers['x-gateway-dropped-parameters']).toBeUndefined();
    // OpenAI's strict refuses string lengths (number bounds and array sizes it takes): best-effort, named.
    const toOpenAi = await beta('via-openai', { output_config: { format: { type: 'json_schema', schema: bounded } } });
    expect(toOpenAi.statusCode, toOpenAi.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.openai).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema: bounded },
    });
    expect(toOpenAi.headers['x-gateway-dropped-parameters']).toBe('output_config.format');

    // A strict tool alike: held without what the serving protocol refuses, or sent best-effort.
    const betaTool = await beta('via-openai', { tools: [{ name: 'save', input_schema: bounded, strict: true }] });
    expect(betaTool.statusCode, betaTool.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.openai).tools).toEqual([
      { type: 'function', function: { name: 'save', parameters: bounded } },
    ]);
    expect(betaTool.headers['x-gateway-dropped-parameters']).toBe('tools.strict');
    const alphaTool = await post('/api/alpha/v1/chat/completions', {
      model: 'via-anthropic',
      messages: [{ role: 'user', content: 'who' }],
      tools: [{ type: 'function', function: { name: 'save', parameters: bounded, strict: true } }],
    });
    expect(alphaTool.statusCode, alphaTool.body).toBe(200);
    const { title: _, ...heldArguments } = held;
    expect(lastBody(setup.gateway.fakes.anthropic).tools).toEqual([
      { name: 'save', input_schema: heldArguments, strict: true },
    ]);
    expect(alphaTool.headers['x-gateway-dropped-parameters']).toBe('tools.function.strict');
    // A strict tool whose schema the serving protocol holds whole: nothing to name.
    const closedTool = await beta('via-openai', { tools: [{ name: 'save', input_schema: closed, strict: true }] });
    expect(closedTool.statusCode, closedTool.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.openai).tools).toEqual([
      { type: 'function', function: { name: 'save', parameters: closed, strict: true } },
    ]);
    expect(closedTool.headers['x-gateway-dropped-parameters']).toBeUndefined();
  });

  it("keeps the format's description before what Anthropic refuses at the schema's root, said after it", async () => {
    const schema = { ...closed, minProperties: 1 };
    const answer = await post('/api/alpha/v1/chat/completions', {
      model: 'via-anthropic',
      messages: [{ role: 'user', content: 'where to go' }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'place', description: 'A city worth a visit', schema },
      },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.anthropic).output_config).toEqual({
      format: {
        type: 'json_schema',
        schema: { ...closed, title: 'place', description: 'A city worth a visit {"minProperties":1}' },
      },
    });
  });

  it('closes the objects of a schema Anthropic holds, as it wants them said; one open to more is said in words', async () => {
    const answer = await post('/api/alpha/v1/chat/completions', {
      model: 'via-anthropic',
      messages: [{ role: 'user', content: 'where to go' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'place',
          schema: {
            type: 'object',
            properties: {
              city: { type: 'string' },
              notes: { type: 'object', additionalProperties: { type: 'string' } },
            },
          },
        },
      },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.anthropic).output_config).toEqual({
      format: {
        type: 'json_schema',
        schema: {
          type: 'object',
          title: 'place',
          properties: {
            city: { type: 'string' },
            notes: {
              type: 'object',
              additionalProperties: false,
              description: '{"additionalProperties":{"type":"string"}}',
            },
          },
          additionalProperties: false,
        },
      },
    });
    // Not asked strictly: nothing to name.
    expect(answer.headers['x-gateway-dropped-parameters']).toBeUndefined();
  });

  it('names a native strict format the serving protocol does not hold whole, by the field the client set', async () => {
    const bounded = { ...closed, properties: { city: { type: 'string', minLength: 1 } } };
    const ask = (body: object) =>
      post('/api/v1/text/completions', {
        model: 'via-anthropic',
        messages: [{ role: 'user', content: 'who' }],
        ...body,
      });
    const format = { type: 'json_schema', json_schema: { name: 'place', strict: true, schema: bounded } };
    const inFormat = await ask({ responseFormat: format });
    expect(inFormat.statusCode, inFormat.body).toBe(200);
    expect(inFormat.headers['x-gateway-dropped-parameters']).toBe('responseFormat.json_schema.strict');
    const asParameter = await ask({ responseFormat: format, structuredOutputs: true });
    expect(asParameter.statusCode, asParameter.body).toBe(200);
    expect(asParameter.headers['x-gateway-dropped-parameters']).toBe('structuredOutputs');
  });

  it('the AI SDK with its defaults gets a zod schema with bounds answered by Anthropic through alpha', async () => {
    // zod's .min() and .int().positive() are the bounds Anthropic's held answers refuse (the fake as the API).
    const key = (await setup.gateway.createFundedKey({ credits: 1 })).key;
    const openai = createOpenAI({ apiKey: key, baseURL: `${setup.address}/api/alpha/v1` });
    const { output } = await generateText({
      model: openai.chat('via-anthropic'),
      prompt: 'a city to visit',
      output: Output.object({ schema: z.object({ city: z.string().min(1), days: z.number().int().positive() }) }),
      maxRetries: 0,
    });
    expect(output.city.length).toBeGreaterThan(0);
    expect(output.days).toBeGreaterThan(0);
    const sent = (lastBody(setup.gateway.fakes.anthropic).output_config as { format: { schema: object } }).format;
    expect(JSON.stringify(sent.schema)).not.toMatch(/"minLength"|"exclusiveMinimum"|"minimum"/);
  });

  it('reads a very wide schema in one linear pass: 200,000 alternatives are an answer, not a failure', async () => {
    const wide = {
      type: 'object',
      properties: { a: { anyOf: Array.from({ length: 200_000 }, () => ({})) } },
      required: ['a'],
      additionalProperties: false,
    };
    const answer = await beta('via-openai', { output_config: { format: { type: 'json_schema', schema: wide } } });
    expect(answer.statusCode, answer.body.slice(0, 300)).toBe(200);
  });

  it('refuses what OpenAI cannot ask for: an answer that is not an object, or one of a list of values', async () => {
    const list = { responseMimeType: 'application/json', responseSchema: { type: 'ARRAY', items: { type: 'STRING' } } };
    const refused = await gamma('via-openai', { generationConfig: list });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.body).toContain('responseSchema');
    expect((await gamma('via-anthropic', { generationConfig: list })).statusCode).toBe(200);

    const choice = { responseMimeType: 'text/x.enum', responseSchema: { type: 'STRING', enum: ['red', 'green'] } };
    const enumRefused = await gamma('via-openai', { generationConfig: choice });
    expect(enumRefused.statusCode, enumRefused.body).toBe(400);
    expect(enumRefused.body).toContain('text/x.enum');
    // Relayed to Gemini, it is the protocol's own.
    expect((await gamma('via-gemini', { generationConfig: choice })).statusCode).toBe(200);
  });

  it("asks OpenAI's JSON mode for JSON in words when the conversation does not", async () => {
    const answer = await gamma('via-openai', { generationConfig: { responseMimeType: 'application/json' } });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.openai)).toMatchObject({
      response_format: { type: 'json_object' },
      messages: [{ role: 'system', content: 'Answer in JSON.' }, { role: 'user' }],
    });
  });

  it("carries a format's description to the protocols that take a schema alone", async () => {
    const response_format = {
      type: 'json_schema',
      json_schema: { name: 'place', description: 'Only French cities', schema: closed, strict: true },
    };
    for (const [model, fake] of [
      ['via-anthropic', setup.gateway.fakes.anthropic],
      ['via-gemini', setup.gateway.fakes.gemini],
    ] as const) {
      const answer = await post('/api/alpha/v1/chat/completions', {
        model,
        messages: [{ role: 'user', content: 'where to go' }],
        response_format,
      });
      expect(answer.statusCode, answer.body).toBe(200);
      expect(JSON.stringify(lastBody(fake))).toContain('"description":"Only French cities"');
    }
  });

  it("carries a format's name as the schema's title, and names it as dropped where the schema's title says another", async () => {
    const chat = (model: string, schema: object) =>
      post('/api/alpha/v1/chat/completions', {
        model,
        messages: [{ role: 'user', content: 'where to go' }],
        response_format: { type: 'json_schema', json_schema: { name: 'place', schema, strict: true } },
      });
    const anthropicSchema = () =>
      (lastBody(setup.gateway.fakes.anthropic).output_config as { format: { schema: object } }).format.schema;
    const untitled = await chat('via-anthropic', closed);
    expect(untitled.statusCode, untitled.body).toBe(200);
    expect(untitled.headers['x-gateway-dropped-parameters']).toBeUndefined();
    expect(anthropicSchema()).toEqual({ ...closed, title: 'place' });
    expect((await chat('via-gemini', closed)).headers['x-gateway-dropped-parameters']).toBeUndefined();
    expect(lastBody(setup.gateway.fakes.gemini).generationConfig).toMatchObject({
      responseJsonSchema: { ...closed, title: 'place' },
    });
    // A title of the schema's own is kept; the name it does not say is named.
    const titled = { ...closed, title: 'Destination' };
    const renamed = await chat('via-anthropic', titled);
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.headers['x-gateway-dropped-parameters']).toBe('response_format.json_schema.name');
    expect(anthropicSchema()).toEqual(titled);
    expect(
      (await chat('via-anthropic', { ...closed, title: 'place' })).headers['x-gateway-dropped-parameters'],
    ).toBeUndefined();
    // Relayed to OpenAI, the name goes as sent.
    expect((await chat('via-openai', titled)).headers['x-gateway-dropped-parameters']).toBeUndefined();
    const response = await post('/api/alpha/v1/responses', {
      model: 'via-gemini',
      input: 'where to go',
      text: { format: { type: 'json_schema', name: 'place', schema: titled, strict: true } },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['x-gateway-dropped-parameters']).toBe('text.format.name');
    // A beta format has no name: none is given to the schema.
    expect(
      (await beta('via-gemini', { output_config: { format: { type: 'json_schema', schema: closed } } })).statusCode,
    ).toBe(200);
    expect(lastBody(setup.gateway.fakes.gemini).generationConfig).toMatchObject({ responseJsonSchema: closed });
    expect(lastBody(setup.gateway.fakes.gemini).generationConfig).not.toHaveProperty('responseJsonSchema.title');
  });

  it("LangChain's Anthropic client gets structured output (a tool forced by name), relayed and translated", async () => {
    for (const model of ['via-anthropic', 'via-openai', 'via-gemini']) {
      const chat = new ChatAnthropic({
        model,
        apiKey: setup.key,
        anthropicApiUrl: `${setup.address}/api/beta`,
        maxRetries: 0,
      });
      const answer = await chat.withStructuredOutput(z.object({ query: z.string() })).invoke('hello there');
      expect(answer, model).toEqual({ query: 'hello there' });
    }
  });

  it('a translated Response echoes its text format, so LangChain streams structured output with its defaults', async () => {
    const answer = await post('/api/alpha/v1/responses', {
      model: 'via-anthropic',
      input: 'where to go',
      text: { format: { type: 'json_schema', name: 'place', schema: closed, strict: true } },
    });
    expect(answer.json()).toMatchObject({
      status: 'completed',
      text: { format: { type: 'json_schema', name: 'place' } },
    });
    for (const model of ['via-anthropic', 'via-gemini']) {
      const chat = new ChatOpenAI({
        model,
        apiKey: setup.key,
        useResponsesApi: true,
        configuration: { baseURL: `${setup.address}/api/alpha/v1` },
        maxRetries: 0,
      });
      let last: unknown;
      for await (const chunk of await chat.withStructuredOutput(z.object({ query: z.string() })).stream('hello there'))
        last = chunk;
      expect(last, model).toEqual({ query: 'Echo: hello there' });
    }
  });
});
