import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest, ChatStreamEvent } from '../../src/domain/chat.ts';
import { createOpenAiAdapter } from '../../src/providers/openai/openai-adapter.ts';
import type { ProviderTarget, RelayOperation } from '../../src/providers/provider-adapter.ts';
import { servedAs } from '../../src/providers/shared/served-model.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeOpenAiKey, startOpenAiFake } from '../fakes/openai-fake.ts';
import {
  answerText,
  askFake,
  chatRecorded,
  deltaText,
  meteredText,
  relayRecorded,
  replayed,
  requestBody,
  servedData,
  servedEvents,
  shapeDifferences,
  sseEvents,
  streamDifferences,
  type VendorFixture,
  vendorFixture,
  type WrittenEvent,
} from '../support/vendor-fixtures.ts';

/**
 * OpenAI's documented answers (test/fixtures/vendor/openai) replayed from a loopback upstream against the OpenAI
 * adapter and its relay meters, and the OpenAI fake held to the same answers' shapes.
 */
const fixture = (name: string) => vendorFixture('openai', name);
const http = new UpstreamHttp();
const adapter = createOpenAiAdapter(http);
afterAll(() => http.close());

const onOpenAi = <T>(recorded: VendorFixture, call: (target: ProviderTarget) => Promise<T>) =>
  replayed(recorded, '/v1', call);

const chat = (recorded: VendorFixture, extra: Partial<ChatRequest> = {}) => {
  const request = { upstreamModel: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello!' }], ...extra } as const;
  return chatRecorded(adapter.text!, recorded, { basePath: '/v1', request });
};

const finishOf = (events: ChatStreamEvent[]) => {
  const finish = events.at(-1);
  if (finish?.type !== 'finish') throw new Error(`the stream ended with ${JSON.stringify(finish)}, not a finish`);
  return finish;
};

const relayed = (recorded: VendorFixture, operation: RelayOperation) =>
  relayRecorded(adapter.text!, recorded, {
    operation,
    basePath: '/v1',
    upstreamModel: String(requestBody(recorded).model),
  });

describe('OpenAI chat completions replayed from the documentation', () => {
  it('streams the documented chunks as text and a stop finish, with no usage when none was asked for', async () => {
    const { result: events } = await chat(fixture('chat-completion-stream'));
    expect(deltaText(events)).toBe('Hello');
    expect(finishOf(events)).toEqual({
      type: 'finish',
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: undefined,
    });
  });

  it('reads the usage chunk (empty choices) that ends a stream with include_usage', async () => {
    const { result: events, sent } = await chat(fixture('chat-completion-stream-usage'));
    expect(sent[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(deltaText(events)).toBe('Hello');
    expect(finishOf(events)).toMatchObject({
      finishReason: { unified: 'stop' },
      usage: { inputTokens: 19, outputTokens: 10 },
    });
  });

  it('streams a tool call: its id and name first, then its arguments in fragments, and a tool-calls finish', async () => {
    const { result: events } = await chat(fixture('chat-completion-tool-call-stream'), {
      tools: [{ name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } }],
    });
    expect(events.filter((event) => event.type === 'tool-call-start')).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather' },
    ]);
    const fragments = events.flatMap((event) => (event.type === 'tool-call-delta' ? [event.arguments] : []));
    expect(JSON.parse(fragments.join(''))).toEqual({ location: 'Paris, France' });
    expect(deltaText(events)).toBe('');
    expect(finishOf(events).finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_calls' });
  });

  it('relays the documented JSON answer whole and meters its usage and text', async () => {
    const recorded = fixture('chat-completion');
    const { result } = await relayed(recorded, 'chat-completions');
    expect(JSON.parse(result.relayed)).toEqual(recorded.response.body);
    expect(result.reading).toMatchObject({
      complete: true,
      sawError: false,
      usage: { inputTokens: 19, outputTokens: 10 },
    });
    expect(meteredText(result.reading)).toBe('Hello! How can I assist you today?');
  });

  it('relays the documented tool-call answer and counts the call as output', async () => {
    const { result } = await relayed(fixture('chat-completion-tool-call'), 'chat-completions');
    expect(result.reading).toMatchObject({ complete: true, usage: { inputTokens: 82, outputTokens: 17 } });
    expect(meteredText(result.reading)).toBe('get_current_weather{\n"location": "Boston, MA"\n}');
  });

  it('meters the documented stream with the usage chunk as it relays it unchanged', async () => {
    const recorded = fixture('chat-completion-stream-usage');
    const { result } = await relayed(recorded, 'chat-completions');
    expect(result.relayed).toBe(answerText(recorded));
    expect(result.reading).toMatchObject({
      complete: true,
      sawTerminator: true,
      sawError: false,
      usage: { inputTokens: 19, outputTokens: 10 },
    });
  });
});

describe('OpenAI Responses replayed from the documentation', () => {
  it('relays the documented Response and meters its usage', async () => {
    const recorded = fixture('responses');
    const { result } = await relayed(recorded, 'responses');
    expect(JSON.parse(result.relayed)).toEqual(recorded.response.body);
    expect(result.reading).toMatchObject({ complete: true, usage: { inputTokens: 36, outputTokens: 87 } });
  });

  it('relays the documented function_call Response and meters its usage', async () => {
    const recorded = fixture('responses-function-call');
    const { result } = await relayed(recorded, 'responses');
    expect(JSON.parse(result.relayed)).toEqual(recorded.response.body);
    expect(result.reading).toMatchObject({ complete: true, usage: { inputTokens: 291, outputTokens: 23 } });
  });

  it('relays the documented event stream and reads its usage from response.completed', async () => {
    const recorded = fixture('responses-stream');
    const { result } = await relayed(recorded, 'responses');
    expect(result.relayed).toBe(answerText(recorded));
    expect(result.reading).toMatchObject({
      complete: true,
      sawError: false,
      usage: { inputTokens: 37, outputTokens: 11 },
    });
  });
});

describe('OpenAI answers relayed naming the catalog model', () => {
  for (const [name, operation] of [
    ['chat-completion-stream-usage', 'chat-completions'],
    ['chat-completion-tool-call-stream', 'chat-completions'],
    ['responses-stream', 'responses'],
  ] as const) {
    it(`renames the model of every event of ${name}, and passes the rest as the vendor sent it`, async () => {
      const recorded = fixture(name);
      const served = servedAs(operation, 'catalog-model');
      const { result } = await relayRecorded(adapter.text!, recorded, {
        operation,
        basePath: '/v1',
        upstreamModel: String(requestBody(recorded).model),
        servedAs: served,
      });
      const { expected, relayed } = servedEvents(answerText(recorded), result.relayed, { events: sseEvents, served });
      expect(relayed).toEqual(expected);
      expect(result.relayed).toContain('"catalog-model"');
    });
  }

  it('renames the model of the documented JSON answer', async () => {
    const recorded = fixture('chat-completion');
    const served = servedAs('chat-completions', 'catalog-model');
    const { result } = await relayRecorded(adapter.text!, recorded, {
      operation: 'chat-completions',
      basePath: '/v1',
      upstreamModel: 'gpt-5.4',
      servedAs: served,
    });
    expect(JSON.parse(result.relayed)).toEqual(servedData(answerText(recorded), served.fields, 'catalog-model'));
  });
});

describe('OpenAI embeddings and images replayed from the documentation', () => {
  it('takes the documented embeddings answer as one vector per input, with its input tokens', async () => {
    const { result, sent } = await onOpenAi(fixture('embeddings'), (target) =>
      adapter.embeddings!.embed(
        {
          upstreamModel: 'text-embedding-ada-002',
          inputs: [{ parts: [{ type: 'text', text: 'The food was delicious and the waiter...' }] }],
        },
        { target },
      ),
    );
    expect(sent[0]?.body).toEqual({
      model: 'text-embedding-ada-002',
      input: ['The food was delicious and the waiter...'],
      encoding_format: 'float',
    });
    expect(result).toEqual({ vectors: [[0.0023064255, -0.009327292, -0.0028842222]], inputTokens: 8 });
  });

  it('takes the documented image answer as one inline image with its token usage', async () => {
    const { result } = await onOpenAi(fixture('images-b64'), (target) =>
      adapter.images!.generate(
        {
          upstreamModel: 'gpt-image-1.5',
          prompt: 'A cute baby sea otter',
          images: [],
          numberOfImages: 1,
          size: '1024x1024',
        },
        { target },
      ),
    );
    expect(result.images).toEqual([{ output: { kind: 'inline', mediaType: 'image/png', data: '...' } }]);
    expect(result.usage).toEqual({
      inputTokens: 50,
      outputTokens: 50,
      totalTokens: 100,
      inputImageTokens: 40,
      generatedImages: 1,
    });
  });

  for (const [name, streaming] of [
    ['images-b64', false],
    ['images-stream', true],
  ] as const) {
    it(`meters the relayed ${streaming ? 'image event stream' : 'image answer'}: one image and its usage`, async () => {
      const recorded = fixture(name);
      const { result } = await onOpenAi(recorded, async (target) => {
        const body = requestBody(recorded);
        const exchange = await adapter.images!.relay!({ upstreamModel: 'gpt-image-1.5', body }, { target });
        const meter = adapter.images!.relayMeter!({ streaming, maxEventCharacters: target.maxEventCharacters });
        for await (const chunk of exchange.body) meter.push(chunk);
        return meter.reading();
      });
      expect(result).toEqual({
        images: 1,
        complete: true,
        usage: { inputTokens: 50, outputTokens: 50, totalTokens: 100, inputImageTokens: 40 },
      });
    });
  }
});

/** A chat chunk's kind: a role, content, a call's start or its arguments, a finish, the usage chunk, the terminator. */
function chatChunkKind(event: WrittenEvent): string {
  if (!event.data.startsWith('{')) return event.data;
  const chunk: unknown = JSON.parse(event.data);
  const choice =
    typeof chunk === 'object' && chunk !== null && 'choices' in chunk && Array.isArray(chunk.choices)
      ? (chunk.choices[0] as unknown)
      : undefined;
  if (typeof choice !== 'object' || choice === null) return 'usage';
  if ('finish_reason' in choice && choice.finish_reason) return 'finish';
  const delta = 'delta' in choice && typeof choice.delta === 'object' && choice.delta !== null ? choice.delta : {};
  if ('role' in delta) return 'role';
  if ('tool_calls' in delta && Array.isArray(delta.tool_calls))
    return delta.tool_calls.some((call: unknown) => typeof call === 'object' && call !== null && 'id' in call)
      ? 'tool-call'
      : 'tool-arguments';
  return 'content';
}

/** A Responses event's kind: its name, which is also its `type`. */
const namedKind = (event: WrittenEvent) => `${event.name ?? '(unnamed)'}`;

describe('the OpenAI fake answers as the documentation does', () => {
  let fake: FakeServer;
  beforeAll(async () => {
    fake = await startOpenAiFake();
  });
  afterAll(() => fake.close());
  const ask = (recorded: VendorFixture, body?: unknown) =>
    askFake(fake, recorded, { headers: { authorization: `Bearer ${fakeOpenAiKey}` }, body });

  /**
   * Where the fake may differ from the examples, each with its reason: fields an example shows that an answer may
   * leave out, and fields an example leaves out that the reference lists for the object.
   */
  const chatRules = {
    optional: {
      '$.obfuscation': 'random padding OpenAI adds to stream chunks, which clients ignore',
      '$.service_tier': 'only when the request names a service tier',
      '$.usage.prompt_tokens_details': 'OpenAI-only detail; compatible upstreams leave it out',
      '$.usage.completion_tokens_details': 'OpenAI-only detail; compatible upstreams leave it out',
    },
    extra: {
      '$.system_fingerprint': 'listed by the chat completion and chunk object references; the Default example has none',
      '$.choices[].message.refusal': 'listed by the chat completion object reference (null when there is no refusal)',
      '$.choices[].message.annotations': 'listed by the chat completion object reference',
      '$.choices[].delta.refusal': 'listed by the chunk object reference (null when there is no refusal)',
    },
  };
  /** The first chunk of a streamed call: the delta's content is nullable in the chunk reference, and null beside a call. */
  const toolStreamRules = {
    ...chatRules,
    extra: { ...chatRules.extra, '$.choices[].delta.content': 'nullable in the chunk object reference' },
  };

  it('answers a chat completion with the documented fields', async () => {
    const recorded = fixture('chat-completion');
    const answer = await ask(recorded);
    expect(answer.status).toBe(200);
    expect(shapeDifferences([recorded.response.body], [JSON.parse(answer.text)], chatRules)).toEqual([]);
  });

  it('answers a tool call with the documented fields', async () => {
    const recorded = fixture('chat-completion-tool-call');
    const answer = await ask(recorded);
    expect(shapeDifferences([recorded.response.body], [JSON.parse(answer.text)], chatRules)).toEqual([]);
  });

  for (const name of ['chat-completion-stream', 'chat-completion-stream-usage', 'chat-completion-tool-call-stream']) {
    it(`streams as the documentation's ${name} does: chunk kinds in order, and their fields`, async () => {
      const recorded = fixture(name);
      const answer = await ask(recorded);
      expect(answer.contentType).toContain('text/event-stream');
      expect(
        streamDifferences(answerText(recorded), answer.text, {
          events: sseEvents,
          kindOf: chatChunkKind,
          rules: name.includes('tool-call') ? toolStreamRules : chatRules,
        }),
      ).toEqual([]);
    });
  }

  it('answers a Response with the documented fields', async () => {
    const recorded = fixture('responses');
    const answer = await ask(recorded);
    expect(shapeDifferences([recorded.response.body], [JSON.parse(answer.text)], { opaque: ['$.metadata'] })).toEqual(
      [],
    );
  });

  it('answers a function call Response with the documented fields', async () => {
    const recorded = fixture('responses-function-call');
    const answer = await ask(recorded);
    const rules = {
      extra: { '$.usage.input_tokens_details': "in the Text input example's usage" },
      opaque: ['$.metadata', '$.tools'],
    };
    expect(shapeDifferences([recorded.response.body], [JSON.parse(answer.text)], rules)).toEqual([]);
  });

  it('streams Responses events in the documented order and shapes', async () => {
    const recorded = fixture('responses-stream');
    const answer = await ask(recorded);
    expect(
      streamDifferences(answerText(recorded), answer.text, {
        events: sseEvents,
        kindOf: namedKind,
        rules: {
          extra: {
            '$.sequence_number': 'every streamed event carries one (Responses streaming events reference)',
            '$.logprobs': 'listed for output_text.delta and .done by the streaming events reference',
            '$.response.completed_at': 'listed by the Response object reference, and in the Text input example',
            '$.response.usage.input_tokens_details': "in the Text input example's usage",
          },
          opaque: ['$.response.metadata'],
        },
      }),
    ).toEqual([]);
  });

  /** What the images reference lists beside `data` and `usage`, which the Generate image example leaves out. */
  const imageFields = {
    '$.created_at': 'listed by the image generation streaming events reference',
    '$.size': 'listed by the ImagesResponse reference',
    '$.quality': 'listed by the ImagesResponse reference',
    '$.background': 'listed by the ImagesResponse reference',
    '$.output_format': 'listed by the ImagesResponse reference',
  };

  it('answers embeddings with the documented fields', async () => {
    const recorded = fixture('embeddings');
    const answer = await ask(recorded);
    expect(shapeDifferences([recorded.response.body], [JSON.parse(answer.text)])).toEqual([]);
  });

  it('answers an image with the documented fields', async () => {
    const recorded = fixture('images-b64');
    const answer = await ask(recorded);
    expect(shapeDifferences([recorded.response.body], [JSON.parse(answer.text)], { extra: imageFields })).toEqual([]);
  });

  describe('refuses what the API refuses, in its words', () => {
    const image = `data:image/png;base64,${Buffer.from('not a picture').toString('base64')}`;
    const refusal = (answer: { status: number; text: string }) => ({
      status: answer.status,
      ...JSON.parse(answer.text),
    });
    const content = (part: object) => [
      { role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, part] },
    ];

    it("a Chat Completions image_url part in a Response's input (the Responses API takes input_image)", async () => {
      const recorded = fixture('responses');
      const body = requestBody(recorded);
      const chatStyle = await ask(recorded, {
        ...body,
        input: content({ type: 'image_url', image_url: { url: image } }),
      });
      expect(refusal(chatStyle)).toEqual({
        status: 400,
        error: {
          message:
            "Invalid value: 'image_url'. Supported values are: 'input_text', 'input_image', 'input_audio', " +
            "'output_text', 'refusal', 'input_file', 'computer_screenshot', 'summary_text', and 'encrypted_content'.",
          type: 'invalid_request_error',
          param: 'input[0].content[1].type',
          code: 'invalid_value',
        },
      });
      const responsesStyle = await ask(recorded, {
        ...body,
        input: content({ type: 'input_image', image_url: image }),
      });
      expect(responsesStyle.status).toBe(200);
    });

    it('response_format for a GPT image model (only DALL·E takes it)', async () => {
      const recorded = fixture('images-b64');
      const answer = await ask(recorded, { ...requestBody(recorded), response_format: 'b64_json' });
      expect(refusal(answer)).toEqual({
        status: 400,
        error: {
          message: "Unknown parameter: 'response_format'.",
          type: 'invalid_request_error',
          param: 'response_format',
          code: 'unknown_parameter',
        },
      });
    });
  });

  it('streams image events in the documented order and shapes', async () => {
    const recorded = fixture('images-stream');
    const answer = await ask(recorded);
    expect(
      streamDifferences(answerText(recorded), answer.text, {
        events: sseEvents,
        kindOf: namedKind,
        rules: { extra: imageFields },
      }),
    ).toEqual([]);
  });
});
