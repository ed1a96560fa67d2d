import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../src/domain/chat.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { createAnthropicAdapter } from '../../src/providers/anthropic/anthropic-adapter.ts';
import type { ServedModel } from '../../src/providers/provider-adapter.ts';
import { servedAs } from '../../src/providers/shared/served-model.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { fakeAnthropicKey, startAnthropicFake } from '../fakes/anthropic-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import {
  answerText,
  askFake,
  chatRecorded,
  deltaText,
  meteredText,
  relayRecorded,
  requestBody,
  servedData,
  servedEvents,
  shapeDifferences,
  sseEvents,
  streamDifferences,
  type VendorFixture,
  vendorFixture,
} from '../support/vendor-fixtures.ts';

/**
 * Anthropic's documented answers (test/fixtures/vendor/anthropic) replayed from a loopback upstream against the
 * Anthropic adapter and its relay meter, and the Anthropic fake held to the same answers' shapes.
 */
const fixture = (name: string) => vendorFixture('anthropic', name);
const http = new UpstreamHttp();
const adapter = createAnthropicAdapter(http);
afterAll(() => http.close());

const chat = async (recorded: VendorFixture, extra: Partial<ChatRequest> = {}) => {
  const request = {
    upstreamModel: 'claude-opus-4-6',
    messages: [{ role: 'user', content: 'Hello' }],
    ...extra,
  } as const;
  const { result } = await chatRecorded(adapter.text!, recorded, { basePath: '/v1', request });
  return result;
};

const relayed = async (recorded: VendorFixture, served?: ServedModel) => {
  const body = requestBody(recorded);
  const { result } = await relayRecorded(adapter.text!, recorded, {
    operation: 'messages',
    basePath: '/v1',
    upstreamModel: String(body.model),
    ...(served ? { servedAs: served } : {}),
  });
  return result;
};

describe('Anthropic messages replayed from the documentation', () => {
  it('streams the documented text answer: text deltas, an end_turn stop, input and cumulative output tokens', async () => {
    const events = await chat(fixture('message-stream'));
    expect(deltaText(events)).toBe('Hello!');
    expect(events.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'stop', raw: 'end_turn' },
      usage: { inputTokens: 25, outputTokens: 15 },
    });
  });

  it('streams the documented tool use: the text before it, the call from input_json_delta pieces, a tool_use stop', async () => {
    const events = await chat(fixture('message-tool-use-stream'), {
      tools: [{ name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } }],
    });
    expect(deltaText(events)).toBe("Okay, let's check the weather for San Francisco, CA:");
    expect(events.filter((event) => event.type === 'tool-call-start')).toEqual([
      { type: 'tool-call-start', index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' },
    ]);
    const pieces = events.flatMap((event) => (event.type === 'tool-call-delta' ? [event.arguments] : []));
    expect(JSON.parse(pieces.join(''))).toEqual({ location: 'San Francisco, CA', unit: 'fahrenheit' });
    expect(events.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_use' },
      usage: { inputTokens: 472, outputTokens: 89 },
    });
  });

  it('fails a stream on the documented error event, naming the upstream error', async () => {
    const error = await chat(fixture('stream-error')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamUnreachableError);
    expect(error).toMatchObject({ reason: 'protocol', message: expect.stringContaining('Overloaded') });
  });

  it("raises the documented error answer with its status and Anthropic's own body", async () => {
    const recorded = fixture('error-not-found');
    const error = await chat(recorded).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ status: 404 });
    expect(JSON.parse(error instanceof UpstreamHttpError ? error.body : '')).toEqual(recorded.response.body);
  });

  it('relays the documented stream unchanged and meters input from message_start, output from message_delta', async () => {
    const recorded = fixture('message-stream');
    const { reading, relayed: bytes } = await relayed(recorded);
    expect(bytes).toBe(answerText(recorded));
    expect(reading).toMatchObject({ complete: true, sawError: false, usage: { inputTokens: 25, outputTokens: 15 } });
    expect(meteredText(reading)).toBe('Hello!');
  });

  it('meters the documented tool-use stream, counting the call input as output', async () => {
    const { reading } = await relayed(fixture('message-tool-use-stream'));
    expect(reading).toMatchObject({ complete: true, usage: { inputTokens: 472, outputTokens: 89 } });
    expect(meteredText(reading)).toContain('{"location": "San Francisco, CA", "unit": "fahrenheit"}');
  });

  it('relays the documented error event and reads it as an error, the answer not complete', async () => {
    const { reading } = await relayed(fixture('stream-error'));
    expect(reading).toMatchObject({ complete: false, sawError: true });
  });

  it('relays the documented Message whole and meters its usage', async () => {
    const recorded = fixture('message');
    const { reading, relayed: bytes } = await relayed(recorded);
    expect(JSON.parse(bytes)).toEqual(recorded.response.body);
    expect(reading).toMatchObject({ complete: true, usage: { inputTokens: 2095, outputTokens: 503 } });
  });

  it("refuses the tool-use guide's abbreviated Message: without its type and usage it is no Message to bill", async () => {
    const error = await relayed(fixture('message-tool-use')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamUnreachableError);
    expect(error).toMatchObject({ reason: 'protocol' });
  });
});

describe('Anthropic answers relayed naming the catalog model', () => {
  for (const name of ['message-stream', 'message-tool-use-stream']) {
    it(`renames the model of message_start in ${name}, and passes the rest as the vendor sent it`, async () => {
      const recorded = fixture(name);
      const served = servedAs('messages', 'catalog-model');
      const { relayed: bytes } = await relayed(recorded, served);
      const { expected, relayed: events } = servedEvents(answerText(recorded), bytes, { events: sseEvents, served });
      expect(events).toEqual(expected);
      expect(bytes).toContain('"catalog-model"');
    });
  }

  it('renames the model of the documented Message', async () => {
    const recorded = fixture('message');
    const served = servedAs('messages', 'catalog-model');
    const { relayed: bytes } = await relayed(recorded, served);
    expect(JSON.parse(bytes)).toEqual(servedData(answerText(recorded), served.fields, 'catalog-model'));
  });
});

describe('the Anthropic fake answers as the documentation does', () => {
  let fake: FakeServer;
  beforeAll(async () => {
    fake = await startAnthropicFake();
  });
  afterAll(() => fake.close());
  const ask = (recorded: VendorFixture, body?: unknown) =>
    askFake(fake, recorded, { headers: { 'x-api-key': fakeAnthropicKey, 'anthropic-version': '2023-06-01' }, body });

  /** Usage fields the Messages reference lists that the documented examples leave out. */
  const usageFields = {
    '$.usage.cache_creation_input_tokens': 'listed by the Messages reference (Usage)',
    '$.usage.cache_read_input_tokens': 'listed by the Messages reference (Usage)',
    '$.usage.service_tier': 'listed by the Messages reference (Usage)',
    '$.message.usage.cache_creation_input_tokens': 'listed by the Messages reference (Usage)',
    '$.message.usage.cache_read_input_tokens': 'listed by the Messages reference (Usage)',
    '$.message.usage.service_tier': 'listed by the Messages reference (Usage)',
  };

  it('answers a Message with the documented fields', async () => {
    const recorded = fixture('message');
    const answer = await ask(recorded);
    expect(answer.status).toBe(200);
    expect(shapeDifferences([recorded.response.body], [JSON.parse(answer.text)], { extra: usageFields })).toEqual([]);
  });

  it('answers a tool use with the fields of the tool-use guide', async () => {
    const recorded = fixture('message-tool-use');
    const answer = await ask(recorded);
    const abbreviated = {
      '$.type': 'the guide abbreviates the Message; the Messages reference always has it',
      '$.stop_sequence': 'the guide abbreviates the Message; the Messages reference always has it',
      '$.usage': 'the guide abbreviates the Message; the Messages reference always has it',
    };
    expect(
      shapeDifferences([recorded.response.body], [JSON.parse(answer.text)], {
        extra: abbreviated,
        opaque: ['$.content[].input'],
      }),
    ).toEqual([]);
  });

  for (const name of ['message-stream', 'message-tool-use-stream']) {
    it(`streams as the documentation's ${name} does: named events in order, and their fields`, async () => {
      const recorded = fixture(name);
      const answer = await ask(recorded);
      expect(answer.contentType).toContain('text/event-stream');
      expect(
        streamDifferences(answerText(recorded), answer.text, {
          events: sseEvents,
          kindOf: (event) => `${event.name}`,
          rules: { extra: usageFields },
        }),
      ).toEqual([]);
    });
  }

  it('answers an error status with the documented error body', async () => {
    const recorded = fixture('error-not-found');
    const answer = await ask(recorded, { ...requestBody(recorded), model: 'fake-error-404' });
    expect(answer.status).toBe(404);
    expect(shapeDifferences([recorded.response.body], [JSON.parse(answer.text)])).toEqual([]);
  });

  it('sends the documented error event mid-stream', async () => {
    const recorded = fixture('stream-error');
    const answer = await ask(recorded, { ...requestBody(recorded), model: 'fake-stream-error' });
    const errors = (text: string) =>
      sseEvents(text).flatMap((event): unknown[] => (event.name === 'error' ? [JSON.parse(event.data)] : []));
    expect(errors(answer.text)).toHaveLength(1);
    expect(shapeDifferences(errors(answerText(recorded)), errors(answer.text))).toEqual([]);
  });
});
