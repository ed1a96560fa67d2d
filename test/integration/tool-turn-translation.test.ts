import { describe, expect, it } from 'vitest';
import { finishReasonOf } from '../../src/protocols/anthropic/messages.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { callOfId, signedCallId } from '../../src/domain/call-ids.ts';
import { signsCallTurns } from '../../src/protocols/gemini/content.ts';
import { fakeThoughtSignature } from '../fakes/gemini-fake.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';
import { modelYaml } from '../support/test-gateway.ts';

const tinyPng = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/**
 * What a tool turn says beyond its text, across protocols: parallel calls switched off, a call that failed, and
 * a picture a tool returned. Each is carried, or the request is refused with 400 naming it; none is lost.
 */
describe('tool turns translated between protocols', () => {
  const setup = useFamilyGateway({
    extraConfig: [
      // As gateway.yaml lists Claude's parameters: parallel tool calls are not among them.
      '  - id: listed-anthropic',
      '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
      '    providers:',
      '      - provider: anthropic',
      '        model: claude-sonnet-4-5-20250929',
      '        capabilities: { text: { supportedParameters: [maxTokens, temperature, topP, topK, stop, tools, toolChoice, thinking] } }',
      modelYaml('gemini-three', { provider: 'gemini', upstream: 'gemini-3-pro-preview' }),
    ],
    credits: 5,
  });

  const beta = (payload: object) =>
    setup.gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: { 'x-api-key': setup.key },
      payload,
    });
  const lastBody = (fake: FakeServer) => fake.requests.at(-1)?.body;
  const lookup = { name: 'lookup', input_schema: { type: 'object', properties: { query: { type: 'string' } } } };
  const calledLookup = [
    { role: 'user', content: 'weather in Paris' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { query: 'Paris' } }] },
  ];

  it('beta tool_choice.disable_parallel_tool_use reaches OpenAI as parallel_tool_calls: false, and Anthropic as sent', async () => {
    const payload = {
      max_tokens: 100,
      messages: [{ role: 'user', content: 'weather in Paris and Rome' }],
      tools: [lookup],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    };
    const response = await beta({ ...payload, model: 'via-openai' });
    expect(response.statusCode, response.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.openai)).toMatchObject({ parallel_tool_calls: false, tool_choice: 'auto' });
    // Relayed to Anthropic as sent, whatever parameters the model lists; named where a translation drops it.
    const relayed = await beta({ ...payload, model: 'listed-anthropic' });
    expect(relayed.statusCode, relayed.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.anthropic)).toMatchObject({ tool_choice: { disable_parallel_tool_use: true } });
    const toGemini = await beta({ ...payload, model: 'via-gemini' });
    expect(toGemini.statusCode, toGemini.body).toBe(200);
    expect(toGemini.headers['x-gateway-dropped-parameters']).toBe('tool_choice.disable_parallel_tool_use');
  });

  it("carries a strict tool's strictness between OpenAI and Anthropic", async () => {
    const parameters = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] };
    const chat = await setup.gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': setup.key },
      payload: {
        model: 'via-anthropic',
        messages: [{ role: 'user', content: 'weather in Paris' }],
        tools: [{ type: 'function', function: { name: 'lookup', parameters, strict: true } }],
      },
    });
    expect(chat.statusCode, chat.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.anthropic)).toMatchObject({ tools: [{ name: 'lookup', strict: true }] });
    const messages = await beta({
      model: 'via-openai',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'weather in Paris' }],
      tools: [
        {
          ...lookup,
          input_schema: { ...lookup.input_schema, required: ['query'], additionalProperties: false },
          strict: true,
        },
      ],
    });
    expect(messages.statusCode, messages.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.openai)).toMatchObject({
      tools: [{ type: 'function', function: { name: 'lookup', strict: true } }],
    });
  });

  it("carries strictness to and from Gemini's VALIDATED calling mode", async () => {
    const parameters = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] };
    const chat = (toolChoice?: unknown) =>
      setup.gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: { 'x-api-key': setup.key },
        payload: {
          model: 'via-gemini',
          messages: [{ role: 'user', content: 'weather in Paris' }],
          tools: [{ type: 'function', function: { name: 'lookup', parameters, strict: true } }],
          ...(toolChoice === undefined ? {} : { tool_choice: toolChoice }),
        },
      });
    const strict = await chat();
    expect(strict.statusCode, strict.body).toBe(200);
    expect(strict.headers['x-gateway-dropped-parameters']).toBeUndefined();
    expect(lastBody(setup.gateway.fakes.gemini)).toMatchObject({
      toolConfig: { functionCallingConfig: { mode: 'VALIDATED' } },
    });
    // A call the model must make is held to its schema in ANY mode already; none is made in NONE mode.
    expect((await chat('required')).statusCode).toBe(200);
    expect(lastBody(setup.gateway.fakes.gemini)).toMatchObject({
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
    });
    expect((await chat('none')).statusCode).toBe(200);
    expect(lastBody(setup.gateway.fakes.gemini)).toMatchObject({
      toolConfig: { functionCallingConfig: { mode: 'NONE' } },
    });

    const closed = { ...parameters, additionalProperties: false };
    const validated = (declarations: object[], model = 'via-openai') =>
      setup.gateway.request({
        method: 'POST',
        url: `/api/gamma/v1beta/models/${model}:generateContent`,
        headers: { 'x-goog-api-key': setup.key },
        payload: {
          contents: [{ role: 'user', parts: [{ text: 'weather in Paris' }] }],
          tools: [{ functionDeclarations: declarations }],
          toolConfig: { functionCallingConfig: { mode: 'VALIDATED' } },
        },
      });
    const held = await validated([{ name: 'lookup', parametersJsonSchema: closed }]);
    expect(held.statusCode, held.body).toBe(200);
    expect(held.headers['x-gateway-dropped-parameters']).toBeUndefined();
    expect(lastBody(setup.gateway.fakes.openai)).toMatchObject({
      tool_choice: 'auto',
      tools: [{ type: 'function', function: { name: 'lookup', strict: true } }],
    });
    // A schema OpenAI cannot hold strictly (open, or with a property that may be left out) goes without it, named.
    const open = await validated([
      { name: 'lookup', parametersJsonSchema: parameters },
      { name: 'units', parameters: { type: 'OBJECT', properties: { unit: { type: 'STRING' } } } },
    ]);
    expect(open.statusCode, open.body).toBe(200);
    expect(open.headers['x-gateway-dropped-parameters']).toBe('toolConfig.functionCallingConfig.mode');
    const sent = lastBody(setup.gateway.fakes.openai) as { tools: Array<{ function: object }> };
    expect(sent.tools.map((tool) => 'strict' in tool.function)).toEqual([false, false]);
    // Anthropic holds a strict tool to any schema it takes (open objects, optional properties): nothing lost.
    const toAnthropic = await validated(
      [
        { name: 'lookup', parametersJsonSchema: parameters },
        { name: 'units', parameters: { type: 'OBJECT', properties: { unit: { type: 'STRING' } } } },
      ],
      'via-anthropic',
    );
    expect(toAnthropic.statusCode, toAnthropic.body).toBe(200);
    expect(toAnthropic.headers['x-gateway-dropped-parameters']).toBeUndefined();
    expect(lastBody(setup.gateway.fakes.anthropic)).toMatchObject({
      tools: [
        { name: 'lookup', strict: true },
        { name: 'units', strict: true },
      ],
    });
  });

  it("a Gemini 3 turn of calls keeps its thought signature through another protocol's tool call ids", async () => {
    const ask = { role: 'user', content: 'weather in Paris' };
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const chat = (messages: object[]) =>
      setup.gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: { 'x-api-key': setup.key },
        payload: { model: 'gemini-three', messages, tools },
      });
    const called = await chat([ask]);
    expect(called.statusCode, called.body).toBe(200);
    const call = called.json<{ choices: Array<{ message: { tool_calls: Array<{ id: string }> } }> }>().choices[0]!
      .message.tool_calls[0]!;
    // The id stays within the characters every protocol's ids allow (Anthropic's tool_use ids included).
    expect(call.id).toMatch(/^[a-zA-Z0-9_-]+$/);
    const answered = await chat([
      ask,
      { role: 'assistant', content: null, tool_calls: [{ ...call, type: 'function' }] },
      { role: 'tool', tool_call_id: call.id, content: 'sunny' },
    ]);
    expect(answered.statusCode, answered.body).toBe(200);
    const replayed = lastBody(setup.gateway.fakes.gemini) as { contents: Array<{ parts: object[] }> };
    expect(replayed.contents[1]!.parts[0]).toMatchObject({ thoughtSignature: fakeThoughtSignature });

    // Through the Anthropic surface too: the id it gives out comes back as the tool_use id.
    const betaCall = await beta({ model: 'gemini-three', max_tokens: 100, messages: [ask], tools: [lookup] });
    expect(betaCall.statusCode, betaCall.body).toBe(200);
    const toolUse = betaCall.json<{ content: Array<{ type: string; id: string }> }>().content[0]!;
    const betaAnswer = await beta({
      model: 'gemini-three',
      max_tokens: 100,
      tools: [lookup],
      messages: [
        ask,
        { role: 'assistant', content: [{ ...toolUse, name: 'lookup', input: { query: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'sunny' }] },
      ],
    });
    expect(betaAnswer.statusCode, betaAnswer.body).toBe(200);

    // Continued on an OpenAI model, relayed or translated, the ids go without the signature (OpenAI takes 40
    // characters for a call's id, 64 for a Responses call's).
    const history = [
      ask,
      { role: 'assistant', content: null, tool_calls: [{ ...call, type: 'function' }] },
      { role: 'tool', tool_call_id: call.id, content: 'sunny' },
    ];
    const plain = call.id.slice(0, call.id.indexOf('__ts__'));
    for (const model of ['via-openai', 'via-anthropic']) {
      const continued = await setup.gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: { 'x-api-key': setup.key },
        payload: { model, messages: history, tools },
      });
      expect(continued.statusCode, continued.body).toBe(200);
    }
    expect(JSON.stringify(lastBody(setup.gateway.fakes.anthropic))).toContain(`"id":"${plain}"`);
    expect(lastBody(setup.gateway.fakes.openai)).toMatchObject({
      messages: [{}, { tool_calls: [{ id: plain }] }, { tool_call_id: plain }],
    });
    const responses = await setup.gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/responses',
      headers: { 'x-api-key': setup.key },
      payload: {
        model: 'via-openai',
        input: [
          { role: 'user', content: 'weather in Paris' },
          { type: 'function_call', call_id: call.id, name: 'lookup', arguments: '{}' },
          { type: 'function_call_output', call_id: call.id, output: 'sunny' },
        ],
      },
    });
    expect(responses.statusCode, responses.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.openai)).toMatchObject({
      input: [{}, { call_id: plain }, { call_id: plain }],
    });

    // A turn of calls another model made has no signature: it goes with Google's stand-in, not refused.
    const foreign = await chat([
      ask,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_from_gpt', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_from_gpt', content: 'sunny' },
    ]);
    expect(foreign.statusCode, foreign.body).toBe(200);
    const standIn = lastBody(setup.gateway.fakes.gemini) as { contents: Array<{ parts: object[] }> };
    expect(standIn.contents[1]!.parts[0]).toMatchObject({ thoughtSignature: 'skip_thought_signature_validator' });
  });

  it('reads back the signature a call id carries, and carries none that is not base64', () => {
    const signature = Buffer.from([0xfb, 0xff, 0xbf, 0x01]).toString('base64');
    expect(signature).toBe('+/+/AQ==');
    const id = signedCallId('call_1', signature);
    expect(id).toBe('call_1__ts__-_-_AQ');
    expect(callOfId(id)).toEqual({ id: 'call_1', signature });
    expect(callOfId('call_1')).toEqual({ id: 'call_1' });
    expect(signedCallId('call_1', 'not base64!')).toBe('call_1');
    expect(signsCallTurns('gemini-3-flash-preview')).toBe(true);
    expect(signsCallTurns('models/gemini-10-pro')).toBe(true);
    expect(signsCallTurns('gemini-2.5-flash')).toBe(false);
  });

  it('a beta tool result marked is_error tells an OpenAI model the call failed', async () => {
    const response = await beta({
      model: 'via-openai',
      max_tokens: 100,
      messages: [
        ...calledLookup,
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'down', is_error: true }] },
      ],
      tools: [lookup],
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.openai)).toMatchObject({
      messages: [
        { role: 'user' },
        { role: 'assistant' },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'Error: down' },
      ],
    });
  });

  it('a Gemini functionResponse with an error reaches Anthropic as is_error and OpenAI as an error', async () => {
    const payload = {
      contents: [
        { role: 'user', parts: [{ text: 'weather in Paris' }] },
        { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { query: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { error: 'down' } } }] },
      ],
      tools: [{ functionDeclarations: [{ name: 'lookup', parameters: { type: 'OBJECT', properties: {} } }] }],
    };
    const post = (model: string) =>
      setup.gateway.request({
        method: 'POST',
        url: `/api/gamma/v1beta/models/${model}:generateContent`,
        headers: { 'x-goog-api-key': setup.key },
        payload,
      });
    expect((await post('via-anthropic')).statusCode).toBe(200);
    expect(JSON.stringify(lastBody(setup.gateway.fakes.anthropic))).toContain('"is_error":true');
    expect((await post('via-openai')).statusCode).toBe(200);
    expect(JSON.stringify(lastBody(setup.gateway.fakes.openai))).toContain(
      '"content":"Error: {\\"error\\":\\"down\\"}"',
    );
  });

  it('a picture in a beta tool result is refused when translated, and relayed to Anthropic as sent', async () => {
    const payload = {
      max_tokens: 100,
      messages: [
        ...calledLookup,
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [
                { type: 'text', text: 'here it is' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: tinyPng } },
              ],
            },
          ],
        },
      ],
      tools: [lookup],
    };
    const translated = await beta({ ...payload, model: 'via-openai' });
    expect(translated.statusCode, translated.body).toBe(400);
    expect(translated.body).toContain('images in tool_result blocks');
    const relayed = await beta({ ...payload, model: 'via-anthropic' });
    expect(relayed.statusCode, relayed.body).toBe(200);
    expect(JSON.stringify(lastBody(setup.gateway.fakes.anthropic))).toContain(tinyPng);
  });

  it('a picture in a Responses function_call_output is refused when translated', async () => {
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/responses',
      headers: { authorization: `Bearer ${setup.key}` },
      payload: {
        model: 'via-anthropic',
        input: [
          { role: 'user', content: 'take a screenshot' },
          { type: 'function_call', call_id: 'call_1', name: 'screenshot', arguments: '{}' },
          {
            type: 'function_call_output',
            call_id: 'call_1',
            output: [
              { type: 'input_text', text: 'here it is' },
              { type: 'input_image', image_url: `data:image/png;base64,${tinyPng}` },
            ],
          },
        ],
        tools: [{ type: 'function', name: 'screenshot', parameters: { type: 'object', properties: {} } }],
      },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.body).toContain('images in function_call_output items');
  });

  const chat = (payload: object) =>
    setup.gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': setup.key },
      payload,
    });
  const calledScreenshot = [
    { role: 'user', content: 'take a screenshot' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'screenshot', arguments: '{}' } }],
    },
  ];
  const screenshotTool = { type: 'function', function: { name: 'screenshot', parameters: { type: 'object' } } };

  it('a picture in an alpha chat tool message is refused when translated, and relayed to OpenAI as sent', async () => {
    const payload = {
      messages: [
        ...calledScreenshot,
        {
          role: 'tool',
          tool_call_id: 'call_1',
          content: [
            { type: 'text', text: 'here it is' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${tinyPng}` } },
          ],
        },
      ],
      tools: [screenshotTool],
    };
    const translated = await chat({ ...payload, model: 'via-anthropic' });
    expect(translated.statusCode, translated.body).toBe(400);
    expect(translated.body).toContain('images in tool messages');
    const relayed = await chat({ ...payload, model: 'via-openai' });
    expect(relayed.statusCode, relayed.body).toBe(200);
    expect(JSON.stringify(lastBody(setup.gateway.fakes.openai))).toContain(tinyPng);
  });

  it('a tool result in several text parts reaches another protocol with each part on a line of its own', async () => {
    const texts = [
      { type: 'text', text: 'Line one.' },
      { type: 'text', text: '' },
      { type: 'text', text: 'Line two.' },
    ];
    const output = 'Line one.\nLine two.';
    const geminiResult = () =>
      (lastBody(setup.gateway.fakes.gemini) as { contents: Array<{ parts: object[] }> }).contents.at(-1)?.parts;
    const fromBeta = {
      max_tokens: 100,
      messages: [
        ...calledLookup,
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: texts }] },
      ],
      tools: [lookup],
    };
    expect((await beta({ ...fromBeta, model: 'via-openai' })).statusCode).toBe(200);
    expect(lastBody(setup.gateway.fakes.openai)).toMatchObject({
      messages: [{ role: 'user' }, { role: 'assistant' }, { role: 'tool', tool_call_id: 'toolu_1', content: output }],
    });
    expect((await beta({ ...fromBeta, model: 'via-gemini' })).statusCode).toBe(200);
    expect(geminiResult()).toEqual([{ functionResponse: { name: 'lookup', response: { result: output } } }]);

    const fromChat = {
      messages: [...calledScreenshot, { role: 'tool', tool_call_id: 'call_1', content: texts }],
      tools: [screenshotTool],
    };
    expect((await chat({ ...fromChat, model: 'via-anthropic' })).statusCode).toBe(200);
    expect(lastBody(setup.gateway.fakes.anthropic)).toMatchObject({
      messages: [{}, {}, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: output }] }],
    });
    expect((await chat({ ...fromChat, model: 'via-gemini' })).statusCode).toBe(200);
    expect(geminiResult()).toEqual([{ functionResponse: { name: 'screenshot', response: { result: output } } }]);
  });

  it('a Responses function_call_output in several input_text parts reaches another protocol a part a line', async () => {
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/responses',
      headers: { authorization: `Bearer ${setup.key}` },
      payload: {
        model: 'via-anthropic',
        input: [
          { role: 'user', content: 'weather in Paris' },
          { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{}' },
          {
            type: 'function_call_output',
            call_id: 'call_1',
            output: [
              { type: 'input_text', text: 'Line one.' },
              { type: 'input_text', text: 'Line two.' },
            ],
          },
        ],
        tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }],
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.anthropic)).toMatchObject({
      messages: [
        {},
        {},
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'Line one.\nLine two.' }] },
      ],
    });
  });

  it('a function whose parameters name no type reaches Anthropic and Gemini as the object schema they require', async () => {
    const typeless = { properties: { city: { type: 'string' } } };
    const tools = [
      { type: 'function', function: { name: 'now', parameters: {} } },
      { type: 'function', function: { name: 'lookup', parameters: typeless } },
    ];
    const messages = [{ role: 'user', content: 'what time is it' }];
    const toAnthropic = await chat({ model: 'via-anthropic', messages, tools });
    expect(toAnthropic.statusCode, toAnthropic.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.anthropic)).toMatchObject({
      tools: [
        { name: 'now', input_schema: { type: 'object' } },
        { name: 'lookup', input_schema: { type: 'object', ...typeless } },
      ],
    });
    const toGemini = await chat({ model: 'via-gemini', messages, tools });
    expect(toGemini.statusCode, toGemini.body).toBe(200);
    expect(lastBody(setup.gateway.fakes.gemini)).toMatchObject({
      tools: [
        {
          functionDeclarations: [
            { name: 'now', parametersJsonSchema: { type: 'object' } },
            { name: 'lookup', parametersJsonSchema: { type: 'object', ...typeless } },
          ],
        },
      ],
    });
  });

  it("names an alpha chat assistant's stored audio, which a translated call goes without, and relays it as sent", async () => {
    const messages = [
      { role: 'user', content: 'say hello' },
      { role: 'assistant', content: 'hello', audio: { id: 'audio_abc' } },
      { role: 'user', content: 'again' },
    ];
    const translated = await chat({ model: 'via-anthropic', messages });
    expect(translated.statusCode, translated.body).toBe(200);
    expect(translated.headers['x-gateway-dropped-parameters']).toBe('messages.audio');
    const relayed = await chat({ model: 'via-openai', messages });
    expect(relayed.statusCode, relayed.body).toBe(200);
    expect(relayed.headers['x-gateway-dropped-parameters']).toBeUndefined();
    expect(lastBody(setup.gateway.fakes.openai)).toMatchObject({ messages: [{}, { audio: { id: 'audio_abc' } }, {}] });
  });

  it("reads Anthropic's model_context_window_exceeded as an answer cut at a length limit", () => {
    expect(finishReasonOf('model_context_window_exceeded')).toEqual({
      unified: 'length',
      raw: 'model_context_window_exceeded',
    });
  });
});
