import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { heldOutputLimit } from '../../src/gateway/output-limits.ts';
import { openAiImagesMeter } from '../../src/providers/openai/openai-images.ts';
import { openAiRelayMeter } from '../../src/providers/openai/openai-relay.ts';
import type { RawExchange } from '../../src/providers/provider-adapter.ts';
import { checkedRelay } from '../../src/providers/shared/checked-relay.ts';
import { servedAs } from '../../src/providers/shared/served-model.ts';
import { isChatCompletion, isChatCompletionChunk } from '../../src/protocols/openai/chat-completions.ts';
import { isImagesAnswer, isImagesStreamEvent } from '../../src/protocols/openai/images.ts';

// A chat completion as OpenAI's API reference shows one (the text shortened).
const completion = {
  id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
  object: 'chat.completion',
  created: 1741569952,
  model: 'gpt-4.1-2025-04-14',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Hello! How can I assist you today?', refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: {
    prompt_tokens: 19,
    completion_tokens: 10,
    total_tokens: 29,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0 },
  },
  service_tier: 'default',
};
const text = JSON.stringify(completion);
const shapes = { answer: isChatCompletion, event: isChatCompletionChunk, what: 'a chat completion' };

/** The answer arriving in two pieces, as a body read off a socket may. */
function upstreamAnswer(answerText = text) {
  const bytes = Buffer.from(answerText);
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Readable.from([bytes.subarray(0, 100), bytes.subarray(100)]),
  };
}

/** What the meter relays of the exchange's body, and what it read, as the relay drives it. */
async function metered(exchange: RawExchange, body: AsyncIterable<Uint8Array> = exchange.body) {
  const meter = openAiRelayMeter('chat-completions', {
    streaming: false,
    maxEventCharacters: 1_000_000,
    limit: heldOutputLimit(1_000),
    servedAs: servedAs('chat-completions', 'catalog-chat'),
    whole: exchange.whole,
  });
  const relayed: Uint8Array[] = [];
  for await (const chunk of body) relayed.push(meter.push(chunk));
  relayed.push(meter.end());
  return { relayed: JSON.parse(Buffer.concat(relayed).toString('utf8')) as unknown, reading: meter.reading() };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a whole answer checked before it is relayed', () => {
  it('is parsed once: its meter reads what the check read', async () => {
    const parse = vi.spyOn(JSON, 'parse');
    const exchange = await checkedRelay(upstreamAnswer(), shapes, undefined);
    const { relayed, reading } = await metered(exchange);
    // The one parse of the answer, and the test's own parse of what was relayed.
    expect(parse).toHaveBeenCalledTimes(2);
    expect(relayed).toEqual({ ...completion, model: 'catalog-chat' });
    expect(reading.usage).toMatchObject({ inputTokens: 19, outputTokens: 10 });
    expect(reading.complete).toBe(true);
  });

  it('is parsed by its meter when the meter is given other bytes than those read', async () => {
    const exchange = await checkedRelay(upstreamAnswer(), shapes, undefined);
    const parse = vi.spyOn(JSON, 'parse');
    const copies = async function* () {
      for await (const chunk of exchange.body) yield Buffer.from(chunk);
    };
    const { relayed, reading } = await metered(exchange, copies());
    expect(parse).toHaveBeenCalledTimes(2);
    expect(relayed).toEqual({ ...completion, model: 'catalog-chat' });
    expect(reading.usage).toMatchObject({ inputTokens: 19, outputTokens: 10 });
  });

  it('is parsed once on the images relay too: its meter counts the images the check read', async () => {
    // An ImagesResponse as OpenAI's API reference shows one (the image's base64 shortened).
    const images = {
      created: 1713833628,
      data: [{ b64_json: 'iVBORw0KGgo=' }],
      usage: {
        total_tokens: 100,
        input_tokens: 50,
        output_tokens: 50,
        input_tokens_details: { text_tokens: 10, image_tokens: 40 },
      },
    };
    const parse = vi.spyOn(JSON, 'parse');
    const exchange = await checkedRelay(
      upstreamAnswer(JSON.stringify(images)),
      { answer: isImagesAnswer, event: isImagesStreamEvent, what: 'an images answer' },
      undefined,
    );
    const meter = openAiImagesMeter({ streaming: false, maxEventCharacters: 1_000_000, whole: exchange.whole });
    for await (const chunk of exchange.body) meter.push(chunk);
    const reading = meter.reading();
    expect(parse).toHaveBeenCalledTimes(1);
    expect(reading).toMatchObject({ images: 1, complete: true });
  });

  it("is refused as a protocol failure when it is not the protocol's answer, and its body is let go of", async () => {
    const answer = { ...upstreamAnswer(), body: Readable.from([Buffer.from('{"choices": "none"}')]) };
    await expect(checkedRelay(answer, shapes, undefined)).rejects.toThrow(/does not follow its protocol/);
    expect(answer.body.destroyed).toBe(true);
  });
});
