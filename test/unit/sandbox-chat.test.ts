import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatRequest, ChatStreamEvent, ToolDefinition } from '../../src/domain/chat.ts';
import { countTextTokens } from '../../src/domain/tokenizer.ts';
import { sandboxChat, toolsToCall } from '../../src/providers/sandbox/sandbox-chat.ts';

const ajv = new Ajv({ strict: false });

const weather: ToolDefinition = {
  name: 'get_weather',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string', minLength: 1 },
      unit: { type: 'string', enum: ['c', 'f'] },
      days: { type: 'integer', minimum: 1 },
      where: { type: 'object', properties: { lat: { type: 'number' } }, required: ['lat'] },
    },
    required: ['city', 'unit', 'days', 'where'],
    additionalProperties: false,
  },
};
const time: ToolDefinition = { name: 'get_time', parameters: { type: 'object', properties: {} } };

const request = (text: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  upstreamModel: 'echo',
  messages: [{ role: 'user', content: text }],
  ...extra,
});

async function collect(chat: ChatRequest): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of sandboxChat(chat)) events.push(event);
  return events;
}

/** The calls of an answer, their argument fragments joined. */
function callsOf(events: ChatStreamEvent[]): Array<{ name: string; arguments: unknown }> {
  const calls: Array<{ name: string; text: string }> = [];
  for (const event of events) {
    if (event.type === 'tool-call-start') calls[event.index] = { name: event.name, text: '' };
    if (event.type === 'tool-call-delta') calls[event.index]!.text += event.arguments;
  }
  return calls.map((call) => ({ name: call.name, arguments: JSON.parse(call.text) as unknown }));
}

const textOf = (events: ChatStreamEvent[]) =>
  events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : [])).join('');

describe('sandbox chat: its limits', () => {
  it('echoes a million characters without a space, cut to the output limit, and counts them (linear, as metering is)', async () => {
    const events = await collect(request('x'.repeat(1_000_000), { maxTokens: 10 }));
    const text = textOf(events);
    expect(text.length).toBeGreaterThan(0);
    expect(countTextTokens(text)).toBeLessThanOrEqual(10);
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      finishReason: { unified: 'length' },
      usage: { inputTokens: countTextTokens('x'.repeat(1_000_000)) },
    });
  });
});

describe('sandbox chat: which tools it calls', () => {
  const tools = [weather, time];
  it.each([
    ['no tools', request('call get_weather'), []],
    ['choice none', request('call get_weather', { tools, toolChoice: 'none' }), []],
    ['a named choice', request('hello', { tools, toolChoice: { name: 'get_time' } }), ['get_time']],
    ['required, nothing named: the first tool', request('hello', { tools, toolChoice: 'required' }), ['get_weather']],
    ['required, one named', request('what does get_time say', { tools, toolChoice: 'required' }), ['get_time']],
    ['auto, plain text', request('hello there', { tools }), []],
    ['auto, "call"', request('please call something', { tools }), ['get_weather']],
    ['auto, "use a tool"', request('Use a tool for this', { tools }), ['get_weather']],
    ['auto, names in any case', request('GET_TIME please', { tools }), ['get_time']],
    ['auto, several named', request('get_time and get_weather', { tools }), ['get_weather', 'get_time']],
    [
      'several named, parallel off',
      request('get_time, get_weather', { tools, parallelToolCalls: false }),
      ['get_weather'],
    ],
    ['a name inside a longer word', request('get_timezone', { tools }), []],
  ] as const)('%s', (_, chat, names) => {
    expect(toolsToCall(chat).map((tool) => tool.name)).toEqual(names);
  });

  it('answers in text after tool results, even when a tool is required', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'call get_weather' },
      { role: 'assistant', content: [{ type: 'tool-call', call: { id: 'c1', name: 'get_weather', arguments: '{}' } }] },
      {
        role: 'tool',
        content: [{ type: 'tool-result', result: { callId: 'c1', name: 'get_weather', output: '21C' } }],
      },
    ];
    expect(toolsToCall({ upstreamModel: 'echo', messages, tools, toolChoice: 'required' })).toEqual([]);
  });
});

describe('sandbox chat: answers', () => {
  it('calls tools with arguments valid against their schemas, several in parallel, finishing with tool-calls', async () => {
    const events = await collect(request('get_weather and get_time in Paris', { tools: [weather, time] }));
    const calls = callsOf(events);
    expect(calls.map((call) => call.name)).toEqual(['get_weather', 'get_time']);
    expect(ajv.validate(weather.parameters!, calls[0]!.arguments)).toBe(true);
    expect(calls[0]!.arguments).toMatchObject({ city: 'get_weather and get_time in Paris', unit: 'c', days: 1 });
    expect(calls[1]!.arguments).toEqual({});
    const finish = events.at(-1);
    expect(finish).toMatchObject({ type: 'finish', finishReason: { unified: 'tool-calls' } });
    expect(finish?.type === 'finish' && finish.usage!.outputTokens).toBeGreaterThan(0);
  });

  it('answers text quoting the tool results after a call', async () => {
    const events = await collect({
      upstreamModel: 'echo',
      tools: [weather],
      messages: [
        { role: 'user', content: 'call get_weather' },
        {
          role: 'assistant',
          content: [{ type: 'tool-call', call: { id: 'c1', name: 'get_weather', arguments: '{}' } }],
        },
        {
          role: 'tool',
          content: [{ type: 'tool-result', result: { callId: 'c1', name: 'get_weather', output: '21C' } }],
        },
      ],
    });
    expect(textOf(events)).toBe('get_weather returned 21C');
    expect(events.at(-1)).toMatchObject({ finishReason: { unified: 'stop' } });
  });

  it('quotes every result of the last turn when each comes in a message of its own (Chat Completions)', async () => {
    const call = (id: string, name: string) => ({ type: 'tool-call' as const, call: { id, name, arguments: '{}' } });
    const result = (callId: string, name: string, output: string): ChatMessage => ({
      role: 'tool',
      content: [{ type: 'tool-result', result: { callId, name, output } }],
    });
    const events = await collect({
      upstreamModel: 'echo',
      tools: [weather, time],
      messages: [
        { role: 'user', content: 'call get_time first' },
        { role: 'assistant', content: [call('c0', 'get_time')] },
        result('c0', 'get_time', 'noon'),
        { role: 'user', content: 'get_weather and get_time' },
        { role: 'assistant', content: [call('c1', 'get_weather'), call('c2', 'get_time')] },
        result('c1', 'get_weather', 'warm'),
        result('c2', 'get_time', 'late'),
      ],
    });
    expect(textOf(events)).toBe('get_weather returned warm\nget_time returned late');
  });

  it('answers JSON valid against a json_schema response format, its strings made of the prompt', async () => {
    const schema = {
      type: 'object',
      properties: {
        answer: { type: 'string' },
        score: { type: 'number', minimum: 2 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
      },
      required: ['answer', 'score', 'tags'],
      additionalProperties: false,
    };
    const events = await collect(
      request('rate this', { responseFormat: { type: 'json_schema', name: 'rating', schema } }),
    );
    const value: unknown = JSON.parse(textOf(events));
    expect(ajv.validate(schema, value)).toBe(true);
    expect(value).toEqual({ answer: 'rate this', score: 2, tags: ['rate this'] });
  });

  it('answers a JSON object in JSON mode, and echoes free text otherwise', async () => {
    expect(JSON.parse(textOf(await collect(request('hi', { responseFormat: { type: 'json_object' } }))))).toEqual({
      text: 'hi',
    });
    expect(textOf(await collect(request('hi', { responseFormat: { type: 'text' } })))).toBe('hi');
  });

  it('answers a value of the object schema the prompt gives in JSON mode, the last one written', async () => {
    const schema = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] };
    const messages: ChatMessage[] = [
      {
        role: 'system',
        content: `Answer like {"type": "cat"} or {"draft": true}, then: JSON schema: {"type": "object", "properties": {"old": {"type": "string"}}} Use this one: ${JSON.stringify(schema)} {unbalanced`,
      },
      { role: 'user', content: 'lookup weather in Paris, not {"properties": {"other": {}}' },
    ];
    const answer = await collect({ upstreamModel: 'echo', messages, responseFormat: { type: 'json_object' } });
    expect(JSON.parse(textOf(answer))).toEqual({ query: 'lookup weather in Paris, not {"properties": {"other": {}}' });
  });
});
