import { type Static, type TSchema, Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { type WireCheck, wireCheck } from '../../src/protocols/wire-check.ts';
import { usageRecords } from '../support/http-helpers.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';
import { modelYaml } from '../support/test-gateway.ts';
import { gammaLookupTools } from '../support/translated-pairs.ts';

/**
 * Function calling on every tool-capable surface against every upstream family, streamed and not: the
 * first turn offers a tool and gets a call of it with the arguments the fake chose; the second turn sends
 * the call and its result back and gets the fake's echo of the result. Each fake refuses a result that
 * does not answer a call of the turn before, so a wrong id or a lost call fails the second turn.
 */
type Family = 'openai' | 'anthropic' | 'gemini';
const families: Family[] = ['openai', 'anthropic', 'gemini'];
const question = 'weather in Paris';
const toolOutput = '{"forecast":"sunny"}';
const schema = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] };

interface Call {
  /** Gemini's own calls may carry no id: a function's result answers the call by name. */
  id: string | undefined;
  name: string;
  args: unknown;
}

interface Answer {
  text: string;
  calls: Call[];
  finish: string | undefined;
}

/** A turn of the conversation: the question asked, and the call made of it and its result, sent back. */
interface Turn {
  question?: string;
  call?: Call;
}

interface Surface {
  name: string;
  /** The finish the surface reports for a turn that ends in calls. */
  callFinish: string;
  /** The request fields that make the model call the lookup tool (a forced, named choice). */
  forced: object;
  url(model: string, stream: boolean): string;
  payload(model: string, stream: boolean, turn?: Turn): object;
  read(body: string, stream: boolean): Answer;
}

const Nullable = <S extends TSchema>(schema: S) => Type.Union([schema, Type.Null()]);

/** Parses one JSON text as a wire shape: an answer of another shape fails the test, showing the text. */
function parsed<T>(check: WireCheck<T>, text: string): T {
  const value: unknown = JSON.parse(text);
  if (!check(value)) throw new Error(`an answer of an unexpected shape: ${text}`);
  return value;
}

/** The JSON events of a server-sent event stream, each parsed as one wire shape. */
const eventsOf = <T>(check: WireCheck<T>, body: string): T[] =>
  body
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => parsed(check, line.slice(6)));

const isChatCompletion = wireCheck(
  Type.Object({
    choices: Type.Array(
      Type.Object({
        message: Type.Object({
          content: Nullable(Type.String()),
          tool_calls: Type.Optional(
            Type.Array(
              Type.Object({
                id: Type.String(),
                function: Type.Object({ name: Type.String(), arguments: Type.String() }),
              }),
            ),
          ),
        }),
        finish_reason: Type.String(),
      }),
      { minItems: 1 },
    ),
  }),
);

const isChatChunk = wireCheck(
  Type.Object({
    choices: Type.Array(
      Type.Object({
        delta: Type.Object({
          content: Type.Optional(Nullable(Type.String())),
          tool_calls: Type.Optional(
            Type.Array(
              // As the official SDKs read a fragment: null is a field not sent.
              Type.Object({
                index: Type.Integer({ minimum: 0 }),
                id: Type.Optional(Nullable(Type.String())),
                function: Type.Object({
                  name: Type.Optional(Nullable(Type.String())),
                  arguments: Type.Optional(Nullable(Type.String())),
                }),
              }),
            ),
          ),
        }),
        finish_reason: Type.Optional(Nullable(Type.String())),
      }),
    ),
  }),
);

const alphaChat: Surface = {
  name: 'alpha chat',
  callFinish: 'tool_calls',
  forced: { tool_choice: { type: 'function', function: { name: 'lookup' } } },
  url: () => '/api/alpha/v1/chat/completions',
  payload: (model, stream, { question: asked = question, call }: Turn = {}) => ({
    model,
    stream,
    tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks things up', parameters: schema } }],
    messages: [
      { role: 'user', content: asked },
      ...(call
        ? [
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } },
              ],
            },
            { role: 'tool', tool_call_id: call.id, content: toolOutput },
          ]
        : []),
    ],
  }),
  read(body, stream) {
    if (!stream) {
      const choice = parsed(isChatCompletion, body).choices[0]!;
      return {
        text: choice.message.content ?? '',
        calls: (choice.message.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: call.function.name,
          args: JSON.parse(call.function.arguments),
        })),
        finish: choice.finish_reason,
      };
    }
    const answer: Answer = { text: '', calls: [], finish: undefined };
    const argumentText: string[] = [];
    for (const chunk of eventsOf(isChatChunk, body)) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      answer.text += choice.delta.content ?? '';
      for (const fragment of choice.delta.tool_calls ?? []) {
        // A call is known by its index, as the official SDKs know it: its first fragment opens it.
        if (fragment.id && !answer.calls[fragment.index])
          answer.calls[fragment.index] = { id: fragment.id, name: fragment.function.name ?? '', args: undefined };
        argumentText[fragment.index] = (argumentText[fragment.index] ?? '') + (fragment.function.arguments ?? '');
      }
      answer.finish = choice.finish_reason ?? answer.finish;
    }
    for (const [index, call] of answer.calls.entries()) call.args = JSON.parse(argumentText[index]!);
    return answer;
  },
};

const ResponseBody = Type.Object({
  status: Type.String(),
  output: Type.Array(
    Type.Union([
      Type.Object({ type: Type.Literal('message'), content: Type.Array(Type.Object({ text: Type.String() })) }),
      Type.Object({
        type: Type.Literal('function_call'),
        id: Type.String(),
        call_id: Type.String(),
        name: Type.String(),
        arguments: Type.String(),
      }),
    ]),
  ),
});
const isResponseBody = wireCheck(ResponseBody);
const isResponsesEvent = wireCheck(
  Type.Object({
    type: Type.String(),
    item_id: Type.Optional(Type.String()),
    delta: Type.Optional(Type.String()),
    response: Type.Optional(ResponseBody),
  }),
);

const alphaResponses: Surface = {
  name: 'alpha responses',
  callFinish: 'completed',
  forced: { tool_choice: { type: 'function', name: 'lookup' } },
  url: () => '/api/alpha/v1/responses',
  payload: (model, stream, { question: asked = question, call }: Turn = {}) => ({
    model,
    stream,
    tools: [{ type: 'function', name: 'lookup', description: 'Looks things up', parameters: schema, strict: false }],
    input: [
      { role: 'user', content: asked },
      ...(call
        ? [
            { type: 'function_call', call_id: call.id, name: call.name, arguments: JSON.stringify(call.args) },
            { type: 'function_call_output', call_id: call.id, output: toolOutput },
          ]
        : []),
    ],
  }),
  read(body, stream) {
    let response: Static<typeof ResponseBody>;
    if (stream) {
      const events = eventsOf(isResponsesEvent, body);
      const completed = events.find((event) => event.type === 'response.completed')?.response;
      if (!completed) throw new Error(`a stream without response.completed: ${body}`);
      response = completed;
      // The streamed argument fragments add up to each call's arguments.
      for (const item of response.output) {
        if (item.type !== 'function_call') continue;
        const deltas = events.filter(
          (event) => event.type === 'response.function_call_arguments.delta' && event.item_id === item.id,
        );
        expect(deltas.map((event) => event.delta).join('')).toBe(item.arguments);
      }
    } else response = parsed(isResponseBody, body);
    return {
      text: response.output
        .flatMap((item) => (item.type === 'message' ? item.content.map((part) => part.text) : []))
        .join(''),
      calls: response.output.flatMap((item) =>
        item.type === 'function_call' ? [{ id: item.call_id, name: item.name, args: JSON.parse(item.arguments) }] : [],
      ),
      finish: response.status,
    };
  },
};

const ContentBlock = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.String() }),
  Type.Object({ type: Type.Literal('tool_use'), id: Type.String(), name: Type.String(), input: Type.Unknown() }),
]);
const isBetaMessage = wireCheck(Type.Object({ content: Type.Array(ContentBlock), stop_reason: Type.String() }));
const isBetaEvent = wireCheck(
  Type.Object({
    type: Type.String(),
    index: Type.Optional(Type.Integer({ minimum: 0 })),
    content_block: Type.Optional(ContentBlock),
    delta: Type.Optional(
      Type.Object({
        type: Type.Optional(Type.String()),
        text: Type.Optional(Type.String()),
        partial_json: Type.Optional(Type.String()),
        stop_reason: Type.Optional(Nullable(Type.String())),
      }),
    ),
  }),
);

const beta: Surface = {
  name: 'beta',
  callFinish: 'tool_use',
  forced: { tool_choice: { type: 'tool', name: 'lookup' } },
  url: () => '/api/beta/v1/messages',
  payload: (model, stream, { question: asked = question, call }: Turn = {}) => ({
    model,
    stream,
    max_tokens: 200,
    tools: [{ name: 'lookup', description: 'Looks things up', input_schema: schema }],
    messages: [
      { role: 'user', content: asked },
      ...(call
        ? [
            { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: call.name, input: call.args }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: toolOutput }] },
          ]
        : []),
    ],
  }),
  read(body, stream) {
    if (!stream) {
      const message = parsed(isBetaMessage, body);
      return {
        text: message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
        calls: message.content.flatMap((block) =>
          block.type === 'tool_use' ? [{ id: block.id, name: block.name, args: block.input }] : [],
        ),
        finish: message.stop_reason,
      };
    }
    const answer: Answer = { text: '', calls: [], finish: undefined };
    const blocks = new Map<number, { call?: Call; json: string }>();
    for (const event of eventsOf(isBetaEvent, body)) {
      const block = event.content_block;
      if (event.type === 'content_block_start' && block)
        blocks.set(event.index!, {
          json: '',
          ...(block.type === 'tool_use' ? { call: { id: block.id, name: block.name, args: undefined } } : {}),
        });
      if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta')
        answer.text += event.delta.text ?? '';
      if (event.type === 'content_block_delta' && event.delta?.type === 'input_json_delta')
        blocks.get(event.index!)!.json += event.delta.partial_json ?? '';
      if (event.type === 'content_block_stop') {
        const stopped = blocks.get(event.index!)!;
        if (stopped.call) answer.calls.push({ ...stopped.call, args: JSON.parse(stopped.json) });
      }
      if (event.type === 'message_delta') answer.finish = event.delta?.stop_reason ?? undefined;
    }
    return answer;
  },
};

const isGammaChunk = wireCheck(
  Type.Object({
    candidates: Type.Array(
      Type.Object({
        content: Type.Object({
          parts: Type.Array(
            Type.Object({
              text: Type.Optional(Type.String()),
              functionCall: Type.Optional(
                Type.Object({ id: Type.Optional(Type.String()), name: Type.String(), args: Type.Unknown() }),
              ),
            }),
          ),
        }),
        finishReason: Type.Optional(Type.String()),
      }),
      { minItems: 1 },
    ),
  }),
);

const gamma: Surface = {
  name: 'gamma',
  callFinish: 'STOP',
  forced: { toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } } },
  url: (model, stream) =>
    `/api/gamma/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
  payload: (_model, _stream, { question: asked = question, call }: Turn = {}) => ({
    // The protocol's own schema dialect (upper-case types), which translation turns into JSON Schema.
    tools: gammaLookupTools,
    contents: [
      { role: 'user', parts: [{ text: asked }] },
      ...(call
        ? [
            { role: 'model', parts: [{ functionCall: { name: call.name, args: call.args } }] },
            { role: 'user', parts: [{ functionResponse: { name: call.name, response: JSON.parse(toolOutput) } }] },
          ]
        : []),
    ],
  }),
  read(body, stream) {
    const chunks = stream ? eventsOf(isGammaChunk, body) : [parsed(isGammaChunk, body)];
    const answer: Answer = { text: '', calls: [], finish: undefined };
    for (const chunk of chunks) {
      const candidate = chunk.candidates[0]!;
      for (const part of candidate.content.parts) {
        answer.text += part.text ?? '';
        if (part.functionCall)
          answer.calls.push({ id: part.functionCall.id, name: part.functionCall.name, args: part.functionCall.args });
      }
      answer.finish = candidate.finishReason ?? answer.finish;
    }
    return answer;
  },
};

const isNativeChunk = wireCheck(
  Type.Object({
    delta: Type.String(),
    toolCalls: Type.Optional(
      Type.Array(
        Type.Object({
          index: Type.Integer({ minimum: 0 }),
          id: Type.Optional(Type.String()),
          function: Type.Object({ name: Type.Optional(Type.String()), arguments: Type.String() }),
        }),
      ),
    ),
    finishReason: Type.Optional(Type.String()),
  }),
);

/**
 * The native text completions: always streamed, and always a translation, of an OpenAI upstream's answer too. Its
 * messages are text only, so it has no second turn to send a call back in.
 */
const native: Surface = {
  name: 'native',
  callFinish: 'tool-calls',
  forced: { toolChoice: { type: 'function', function: { name: 'lookup' } } },
  url: () => '/api/v1/text/completions',
  payload: (model, _stream, { question: asked = question, call }: Turn = {}) => {
    if (call) throw new Error('the native surface takes no tool call back');
    return {
      model,
      tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks things up', parameters: schema } }],
      messages: [{ role: 'user', content: asked }],
    };
  },
  read(body, stream) {
    if (!stream) throw new Error('the native surface always streams');
    const answer: Answer = { text: '', calls: [], finish: undefined };
    const argumentText: string[] = [];
    for (const chunk of eventsOf(isNativeChunk, body)) {
      answer.text += chunk.delta;
      for (const fragment of chunk.toolCalls ?? []) {
        // As OpenAI's fragments: the first of a call has its id and name, the later ones more arguments.
        if (fragment.id !== undefined)
          answer.calls[fragment.index] = { id: fragment.id, name: fragment.function.name ?? '', args: undefined };
        argumentText[fragment.index] = (argumentText[fragment.index] ?? '') + fragment.function.arguments;
      }
      answer.finish = chunk.finishReason ?? answer.finish;
    }
    for (const [index, call] of answer.calls.entries()) call.args = JSON.parse(argumentText[index]!);
    return answer;
  },
};

describe('function calling through every tool surface and upstream family', () => {
  const setup = useFamilyGateway();

  for (const surface of [alphaChat, alphaResponses, beta, gamma]) {
    for (const family of families) {
      for (const stream of [false, true]) {
        it(`${surface.name} -> ${family}, ${stream ? 'streamed' : 'not streamed'}`, async () => {
          const { key } = await setup.gateway.createFundedKey({ credits: 1 });
          const model = `via-${family}`;
          const send = (call?: Call) =>
            setup.gateway.request({
              method: 'POST',
              url: surface.url(model, stream),
              headers: { 'x-api-key': key },
              payload: surface.payload(model, stream, { call }),
            });

          const first = await send();
          expect(first.statusCode, first.body).toBe(200);
          expect(first.headers['x-gateway-dropped-parameters']).toBeUndefined();
          const asked = surface.read(first.body, stream);
          expect(asked.calls).toHaveLength(1);
          expect(asked.calls[0]).toMatchObject({ name: 'lookup', args: { query: question } });
          expect(asked.finish).toBe(surface.callFinish);

          const second = await send(asked.calls[0]);
          expect(second.statusCode, second.body).toBe(200);
          const answered = surface.read(second.body, stream);
          expect(answered.calls).toEqual([]);
          expect(answered.text).toBe(`Echo: ${toolOutput}`);

          const records = await usageRecords(setup.gateway, key);
          expect(records.map((record) => record.status)).toEqual(['succeeded', 'succeeded']);
          expect(records.every((record) => record.usdCost > 0)).toBe(true);
        });
      }
    }
  }

  it('the sandbox calls the tool a request requires, then answers quoting the result', async () => {
    const { key } = await setup.gateway.createFundedKey({ credits: 1 });
    const send = (payload: object) =>
      setup.gateway.request({
        method: 'POST',
        url: alphaChat.url('via-sandbox', false),
        headers: { 'x-api-key': key },
        payload,
      });
    const required = {
      ...alphaChat.payload('via-sandbox', false),
      tool_choice: { type: 'function', function: { name: 'lookup' } },
    };
    const asked = alphaChat.read((await send(required)).body, false);
    // Arguments valid against the tool's schema, its strings made of the question.
    expect(asked.calls).toEqual([{ id: expect.stringMatching(/^call_/), name: 'lookup', args: { query: question } }]);
    expect(asked.finish).toBe('tool_calls');
    const answered = alphaChat.read(
      (await send({ ...alphaChat.payload('via-sandbox', false, { call: asked.calls[0] }), tool_choice: 'required' }))
        .body,
      false,
    );
    expect(answered).toMatchObject({ text: `lookup returned ${toolOutput}`, calls: [], finish: 'stop' });
    // Under `auto` the sandbox answers in words.
    expect(alphaChat.read((await send(alphaChat.payload('via-sandbox', false))).body, false)).toMatchObject({
      text: question,
      calls: [],
    });
  });
});

/**
 * OpenAI answers a call of the function a request named with finish `stop`: translated, the turn still ends in
 * calls (beta `tool_use`), so a client's tool loop goes on; relayed, the finish is OpenAI's own.
 */
describe('a forced tool call that OpenAI ends with stop', () => {
  const setup = useFamilyGateway();

  for (const surface of [alphaChat, beta, gamma]) {
    for (const stream of [false, true]) {
      it(`${surface.name}, ${stream ? 'streamed' : 'not streamed'}`, async () => {
        const { key } = await setup.gateway.createFundedKey({ credits: 1 });
        const response = await setup.gateway.request({
          method: 'POST',
          url: surface.url('via-openai', stream),
          headers: { 'x-api-key': key },
          payload: { ...surface.payload('via-openai', stream), ...surface.forced },
        });
        expect(response.statusCode, response.body).toBe(200);
        const answer = surface.read(response.body, stream);
        expect(answer.calls).toMatchObject([{ name: 'lookup', args: { query: question } }]);
        expect(answer.finish).toBe(surface === alphaChat ? 'stop' : surface.callFinish);
      });
    }
  }
});

/**
 * Tool calls as OpenAI-compatible servers stream them (the OpenAI fake's `fake-calls-<mode>`), for a question of
 * two parts the model calls the tool for in parallel. The surfaces that translate an OpenAI upstream's stream (beta,
 * gamma, native) answer exactly the calls the upstream made, in its order, each with the upstream's id, its name
 * and its whole arguments, streamed or not; and a turn that ends in calls (Google's compatible endpoint ends it with
 * `stop`) ends in calls where the surface tells them apart (beta `tool_use`, native `tool-calls`; gamma says
 * `STOP` of both). The alpha chat surface relays the stream as it came, and alpha Responses relays to the
 * upstream's own Responses API: neither reads the calls.
 */
describe('tool calls streamed as OpenAI-compatible servers stream them', () => {
  const modes = ['repeat-id', 'repeat-all', 'empty-id', 'null-name', 'null-id', 'no-index', 'index-zero', 'late-name'];
  const setup = useFamilyGateway({
    extraConfig: modes.map((mode) =>
      modelYaml(`calls-${mode}`, { provider: 'openai', upstream: `fake-calls-${mode}` }),
    ),
  });
  const twoPlaces = 'weather in Paris and Rome';
  // As the fake makes them: one call per part of the question, under ids of its own.
  const madeCalls: Call[] = [
    { id: 'call_fake1', name: 'lookup', args: { query: 'weather in Paris' } },
    { id: 'call_fake2', name: 'lookup', args: { query: 'Rome' } },
  ];

  for (const mode of modes) {
    // Calls without index, all under one, or named after they open, are relayed as they came, for a client to read
    // its own way.
    const relayed = ['no-index', 'index-zero', 'late-name'].includes(mode) ? [] : [alphaChat];
    for (const surface of [...relayed, beta, gamma, native]) {
      for (const stream of surface === native ? [true] : [false, true]) {
        it(`${mode}: ${surface.name}, ${stream ? 'streamed' : 'not streamed'}`, async () => {
          const { key } = await setup.gateway.createFundedKey({ credits: 1 });
          const model = `calls-${mode}`;
          const response = await setup.gateway.request({
            method: 'POST',
            url: surface.url(model, stream),
            headers: { 'x-api-key': key },
            payload: surface.payload(model, stream, { question: twoPlaces }),
          });
          expect(response.statusCode, response.body).toBe(200);
          const answer = surface.read(response.body, stream);
          expect(answer.calls).toEqual(madeCalls);
          expect(answer.finish).toBe(surface.callFinish);
        });
      }
    }
  }
});
