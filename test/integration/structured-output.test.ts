import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { FakeServer } from '../fakes/fake-server.ts';
import { betaText, dataLines } from '../support/answer-text.ts';
import { usageRecords } from '../support/http-helpers.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';
import { placeSchema } from '../support/place-schema.ts';

/**
 * Structured output and several completions on every surface against every upstream family: the answer is
 * JSON of the schema, and the upstream got its own protocol's field for it (the fakes answer a value of the
 * schema whose strings are their usual echo); several choices or candidates come back where the upstream
 * gives them, and are refused, or dropped and named for a lenient model, where it does not.
 */
type Family = 'openai' | 'anthropic' | 'gemini';
const families: Family[] = ['openai', 'anthropic', 'gemini'];
const prompt = 'where is Paris';
const schema = placeSchema;
const expected = { city: `Echo: ${prompt}` };

type Chunk = Record<string, unknown>;
const alphaChoices = (chunk: Chunk) =>
  chunk.choices as Array<{ index: number; delta?: { content?: string }; message?: { content: string } }>;
/** Google's JSON leaves a zero index out, as proto3 JSON does: the first candidate carries none. */
const gammaCandidates = (chunk: Chunk) =>
  chunk.candidates as Array<{ index?: number; content: { parts: Array<{ text?: string }> } }>;

/** The text of each choice (alpha) or candidate (gamma), by index, from a JSON answer or a stream. */
function textsOf(surface: 'alpha' | 'gamma', body: string, stream: boolean): string[] {
  const texts: string[] = [];
  for (const chunk of stream ? dataLines(body) : [JSON.parse(body) as Chunk]) {
    const pieces =
      surface === 'alpha'
        ? alphaChoices(chunk).map((choice) => [choice.index, choice.delta?.content ?? choice.message?.content] as const)
        : gammaCandidates(chunk).map(
            (candidate) => [candidate.index ?? 0, candidate.content.parts.map((part) => part.text).join('')] as const,
          );
    for (const [index, text] of pieces) texts[index] = (texts[index] ?? '') + (text ?? '');
  }
  return texts;
}

interface Surface {
  name: string;
  request(model: string, stream: boolean): { url: string; payload: object };
  text(body: string, stream: boolean): string;
}

const surfaces: Surface[] = [
  {
    name: 'alpha chat completions',
    request: (model, stream) => ({
      url: '/api/alpha/v1/chat/completions',
      payload: {
        model,
        stream,
        messages: [{ role: 'user', content: prompt }],
        response_format: { type: 'json_schema', json_schema: { name: 'place', schema, strict: true } },
      },
    }),
    text: (body, stream) => textsOf('alpha', body, stream)[0]!,
  },
  {
    name: 'alpha responses',
    request: (model, stream) => ({
      url: '/api/alpha/v1/responses',
      payload: { model, stream, input: prompt, text: { format: { type: 'json_schema', name: 'place', schema } } },
    }),
    text: (body, stream) =>
      stream
        ? dataLines(body)
            .map((event) => (event.type === 'response.output_text.delta' ? (event.delta as string) : ''))
            .join('')
        : (JSON.parse(body) as { output: Array<{ content: Array<{ text: string }> }> }).output[0]!.content[0]!.text,
  },
  {
    name: 'beta messages',
    request: (model, stream) => ({
      url: '/api/beta/v1/messages',
      payload: {
        model,
        stream,
        max_tokens: 100,
        messages: [{ role: 'user', content: prompt }],
        output_config: { format: { type: 'json_schema', schema } },
      },
    }),
    text: betaText,
  },
  {
    name: 'gamma generateContent',
    request: (model, stream) => ({
      url: `/api/gamma/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
      payload: {
        contents: [{ role: 'user', parts: [{ text: prompt }] }],
        generationConfig: {
          responseMimeType: 'application/json',
          responseSchema: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
        },
      },
    }),
    text: (body, stream) => textsOf('gamma', body, stream)[0]!,
  },
];

/** The structured-output field of the upstream's own protocol, as the fake last received it. */
function nativeField(family: Family, fake: FakeServer): unknown {
  const body = fake.requests.at(-1)!.body as {
    response_format?: { type: string };
    text?: { format?: { type: string } };
    output_config?: { format?: { type: string } };
    generationConfig?: Record<string, unknown>;
  };
  if (family === 'openai') return body.response_format?.type ?? body.text?.format?.type;
  if (family === 'anthropic') return body.output_config?.format?.type;
  const config = body.generationConfig ?? {};
  return config.responseMimeType === 'application/json' && (config.responseJsonSchema ?? config.responseSchema)
    ? 'application/json with a schema'
    : undefined;
}
const nativeValue: Record<Family, string> = {
  openai: 'json_schema',
  anthropic: 'json_schema',
  gemini: 'application/json with a schema',
};

describe('structured output and several completions across surfaces and upstreams', () => {
  const post = (url: string, payload: object) =>
    setup.gateway.request({ method: 'POST', url, headers: { 'x-api-key': setup.key }, payload });

  const setup = useFamilyGateway({
    extraConfig: [
      '  - id: lenient-anthropic',
      '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
      '    providers: [{ provider: anthropic, model: claude-sonnet-4-5-20250929, capabilities: { strictParams: false } }]',
    ],
    credits: 5,
  });

  for (const surface of surfaces) {
    for (const family of families) {
      for (const stream of [false, true]) {
        it(`${surface.name} -> ${family}, ${stream ? 'streamed' : 'not streamed'}: JSON of the schema`, async () => {
          const { url, payload } = surface.request(`via-${family}`, stream);
          const response = await post(url, payload);
          expect(response.statusCode, response.body).toBe(200);
          expect(JSON.parse(surface.text(response.body, stream))).toEqual(expected);
          expect(nativeField(family, setup.gateway.fakes[family])).toBe(nativeValue[family]);
          expect(response.headers['x-gateway-dropped-parameters']).toBeUndefined();
        });
      }
    }
  }

  it("keeps a gamma schema's nullable fields nullable in JSON Schema", async () => {
    const response = await post('/api/gamma/v1beta/models/via-openai:generateContent', {
      contents: [{ role: 'user', parts: [{ text: 'where is Paris' }] }],
      generationConfig: {
        responseMimeType: 'application/json',
        responseSchema: {
          type: 'OBJECT',
          properties: {
            city: { type: 'STRING' },
            region: { type: 'STRING', nullable: true },
            unit: { type: 'STRING', enum: ['C', 'F'], nullable: true },
            note: { anyOf: [{ type: 'STRING' }, { type: 'INTEGER' }], nullable: true },
          },
          required: ['city', 'region'],
        },
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(setup.gateway.fakes.openai.requests.at(-1)?.body).toMatchObject({
      response_format: {
        json_schema: {
          schema: {
            type: 'object',
            properties: {
              city: { type: 'string' },
              region: { type: ['string', 'null'] },
              unit: { type: ['string', 'null'], enum: ['C', 'F', null] },
              note: { anyOf: [{ anyOf: [{ type: 'string' }, { type: 'integer' }] }, { type: 'null' }] },
            },
          },
        },
      },
    });
  });

  for (const stream of [false, true]) {
    it(`answers any JSON object from Anthropic through a forced tool, as text with a normal stop (${stream ? 'streamed' : 'not streamed'})`, async () => {
      const { key: own } = await setup.gateway.createFundedKey({ credits: 1 });
      const response = await setup.gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: { 'x-api-key': own },
        payload: {
          model: 'via-anthropic',
          stream,
          messages: [{ role: 'user', content: prompt }],
          response_format: { type: 'json_object' },
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(textsOf('alpha', response.body, stream)[0]!)).toEqual({ query: prompt });
      const chunks = stream ? dataLines(response.body) : [JSON.parse(response.body) as Chunk];
      const finishes = chunks.flatMap((chunk) =>
        (chunk.choices as Array<{ finish_reason: string | null }>).flatMap((choice) => choice.finish_reason ?? []),
      );
      expect(finishes).toEqual(['stop']);
      expect(chunks.some((chunk) => JSON.stringify(chunk).includes('tool_calls'))).toBe(false);
      expect(setup.gateway.fakes.anthropic.requests.at(-1)!.body).toMatchObject({
        tools: [{ name: 'json_answer', input_schema: { type: 'object' } }],
        tool_choice: { type: 'tool', name: 'json_answer' },
      });
      // The usage is the upstream's own: 3 prompt words, and "Let me look." said before the call.
      const [record] = await usageRecords(setup.gateway, own);
      expect(record?.usage).toMatchObject({ promptTokens: 3, completionTokens: 3 });
    });
  }

  it('refuses a JSON answer Anthropic cannot give with the request, naming the field as the client wrote it', async () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const alpha = await post('/api/alpha/v1/chat/completions', {
      model: 'via-anthropic',
      messages: [{ role: 'user', content: prompt }],
      response_format: { type: 'json_object' },
      tools,
    });
    expect(alpha.statusCode).toBe(400);
    expect(alpha.json().error.message).toContain('parameter "response_format"');
    const gamma = await post('/api/gamma/v1beta/models/via-anthropic:generateContent', {
      contents: [{ role: 'user', parts: [{ text: prompt }] }],
      generationConfig: { responseMimeType: 'application/json', thinkingConfig: { thinkingBudget: 1024 } },
    });
    expect(gamma.statusCode).toBe(400);
    expect(gamma.json().error.message).toContain('parameter "generationConfig.responseMimeType"');
  });

  const severalAlpha = (model: string, stream: boolean) =>
    post('/api/alpha/v1/chat/completions', { model, stream, n: 2, messages: [{ role: 'user', content: prompt }] });
  const severalGamma = (model: string, stream: boolean) =>
    post(`/api/gamma/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, {
      contents: [{ role: 'user', parts: [{ text: prompt }] }],
      generationConfig: { candidateCount: 2 },
    });

  for (const stream of [false, true]) {
    const mode = stream ? 'streamed' : 'not streamed';
    it(`gives alpha n choices from Gemini and OpenAI (${mode})`, async () => {
      for (const family of ['gemini', 'openai'] as const) {
        const response = await severalAlpha(`via-${family}`, stream);
        expect(response.statusCode, response.body).toBe(200);
        expect(textsOf('alpha', response.body, stream)).toEqual([`Echo: ${prompt}`, `Echo: ${prompt}`]);
      }
      expect(setup.gateway.fakes.gemini.requests.at(-1)!.body).toMatchObject({
        generationConfig: { candidateCount: 2 },
      });
      expect(setup.gateway.fakes.openai.requests.at(-1)!.body).toMatchObject({ n: 2 });
    });

    it(`gives gamma candidateCount candidates from OpenAI and Gemini (${mode})`, async () => {
      for (const family of ['openai', 'gemini'] as const) {
        const response = await severalGamma(`via-${family}`, stream);
        expect(response.statusCode, response.body).toBe(200);
        expect(textsOf('gamma', response.body, stream)).toEqual([`Echo: ${prompt}`, `Echo: ${prompt}`]);
      }
      expect(setup.gateway.fakes.openai.requests.at(-1)!.body).toMatchObject({ n: 2 });
      expect(setup.gateway.fakes.gemini.requests.at(-1)!.body).toMatchObject({
        generationConfig: { candidateCount: 2 },
      });
    });
  }

  it('ends every choice as cut when the output limit ends an answer of several, as each SDK wants', async () => {
    // The held limit covers two completions of two tokens: "Echo:" in each reaches it, and the rest is cut.
    const address = await setup.gateway.app.listen({ port: 0, host: '127.0.0.1' });
    const openai = new OpenAI({ apiKey: setup.key, baseURL: `${address}/api/alpha/v1`, maxRetries: 0 });
    const asked = { model: 'via-gemini', n: 2, max_tokens: 2, messages: [{ role: 'user' as const, content: prompt }] };
    const streamed = await openai.chat.completions.stream(asked).finalChatCompletion();
    expect(streamed.choices.map((choice) => choice.finish_reason)).toEqual(['length', 'length']);
    const whole = await openai.chat.completions.create(asked);
    expect(whole.choices.map((choice) => choice.finish_reason)).toEqual(['length', 'length']);
    for (const family of ['openai', 'gemini'] as const) {
      const response = await post(`/api/gamma/v1beta/models/via-${family}:streamGenerateContent?alt=sse`, {
        contents: [{ role: 'user', parts: [{ text: prompt }] }],
        generationConfig: { candidateCount: 2, maxOutputTokens: 2 },
      });
      expect(response.statusCode, response.body).toBe(200);
      const finished = dataLines(response.body).flatMap((chunk) =>
        (chunk.candidates as Array<{ finishReason?: string; index?: number }>).flatMap((candidate) =>
          candidate.finishReason ? [[candidate.index ?? 0, candidate.finishReason]] : [],
        ),
      );
      expect(finished.sort(), family).toEqual([
        [0, 'MAX_TOKENS'],
        [1, 'MAX_TOKENS'],
      ]);
    }
  });

  it('refuses several completions from Anthropic, naming the field', async () => {
    const alpha = await severalAlpha('via-anthropic', false);
    expect(alpha.statusCode).toBe(400);
    expect(alpha.json().error.message).toContain('parameter "n"');
    const gamma = await severalGamma('via-anthropic', false);
    expect(gamma.statusCode).toBe(400);
    expect(gamma.json().error.message).toContain('parameter "generationConfig.candidateCount"');
  });

  it('answers one completion, held as one and named as dropped, for a lenient Anthropic model', async () => {
    // Enough for the prompt and one completion of 1000 tokens at 2 USD per million, not for two.
    const { key: small } = await setup.gateway.createFundedKey({ credits: 0.0025 });
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': small },
      payload: { model: 'lenient-anthropic', n: 2, max_tokens: 1000, messages: [{ role: 'user', content: prompt }] },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['x-gateway-dropped-parameters']).toBe('n');
    expect(textsOf('alpha', response.body, false)).toEqual([`Echo: ${prompt}`]);
    const gamma = await setup.gateway.request({
      method: 'POST',
      url: '/api/gamma/v1beta/models/lenient-anthropic:generateContent',
      headers: { 'x-api-key': small },
      payload: {
        contents: [{ role: 'user', parts: [{ text: prompt }] }],
        generationConfig: { candidateCount: 2, maxOutputTokens: 1000 },
      },
    });
    expect(gamma.statusCode, gamma.body).toBe(200);
    expect(gamma.headers['x-gateway-dropped-parameters']).toBe('generationConfig.candidateCount');
  });
});
