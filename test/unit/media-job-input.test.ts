/**
 * The stored JSON of each kind of media job read back through its schemas: the shapes the gateway queues
 * are read into their kind's types, and shapes of another kind, of an earlier shape or with a wrong value
 * are refused with what and where, never taken on a guess.
 */
import { describe, expect, it } from 'vitest';
import {
  outputProblem,
  readJobInput,
  readStoredJob,
  recordedPrompt,
  resultOutputs,
  type StoredJobFields,
} from '../../src/domain/media-job.ts';

const image: StoredJobFields = {
  kind: 'image',
  request: {
    prompt: 'a lighthouse',
    images: [
      { kind: 'url', url: 'https://example.com/a.png' },
      { kind: 'inline', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      { kind: 'asset', objectKey: 'images/gen_1/0.png', mediaType: 'image/png' },
    ],
    numberOfImages: 2,
    quality: 'high',
    layers: { resolution: '1K' },
  },
  recordedRequest: {
    operation: 'image-generation',
    model: 'seedream',
    content: [{ type: 'text', text: 'a lighthouse' }],
  },
  priceSnapshot: { kind: 'by-quality', low: '1000', medium: '2000', high: '30000000' },
};

const video: StoredJobFields = {
  kind: 'video',
  request: {
    content: [
      { type: 'text', text: 'waves' },
      { type: 'image', role: 'firstFrame', source: { kind: 'asset', objectKey: 'a', mediaType: 'image/png' } },
      { type: 'video', source: { kind: 'url', url: 'https://example.com/v.mp4' } },
    ],
    duration: 5,
    resolution: '720p',
  },
  recordedRequest: { operation: 'video-generation', model: 'seedance', content: [{ type: 'text', text: 'waves' }] },
  priceSnapshot: {
    kind: 'per-second-by-resolution',
    nanos: { '480p': '1000000', '720p': '2000000' },
    resolution: '720p',
  },
};

const speech: StoredJobFields = {
  kind: 'audio',
  request: {
    product: 'text-to-speech',
    resourceId: 'seed-tts-1.0',
    voiceType: 'zh_female_cancan_mars_bigtts',
    text: 'hello',
    format: 'mp3',
    sampleRate: 24000,
    contextTexts: ['warmly'],
  },
  recordedRequest: { operation: 'text-to-speech', voiceType: 'zh_female_cancan_mars_bigtts', characters: 5 },
  priceSnapshot: { kind: 'per-m-characters', nanos: '60000000000' },
};

const reference: StoredJobFields = {
  kind: 'audio',
  request: {
    product: 'generation-with-reference',
    textPrompt: 'say hello',
    references: [{ speaker: 'S1', audioUrl: 'https://example.com/a.wav' }],
    format: 'wav',
  },
  recordedRequest: { operation: 'generation-with-reference', format: 'wav' },
  priceSnapshot: { kind: 'per-second', nanos: '10000000' },
};

describe('reading a media job stored input', () => {
  it.each([
    ['image', image, image],
    ['video', video, video],
    // The two audio products are told apart by `product`, each with its own kind of price.
    ['text-to-speech', speech, { ...speech, product: 'text-to-speech' }],
    ['reference audio', reference, { ...reference, product: 'generation-with-reference' }],
  ])('reads the %s shape the gateway queues into its kind', (_name, stored, read) => {
    expect(readJobInput(stored)).toEqual(read);
  });

  it.each<[string, StoredJobFields, RegExp]>([
    [
      'an image quality this release does not know',
      { ...image, request: { ...(image.request as object), quality: 'ultra' } },
      /^the request stored with this image job .* \(\/quality must be equal to one of the allowed values\)$/,
    ],
    [
      'an image request without its count',
      { ...image, request: { images: [] } },
      /^the request stored with this image job .*numberOfImages/,
    ],
    [
      'an image source of a kind not stored',
      { ...image, request: { images: [{ kind: 'file', path: '/etc/passwd' }], numberOfImages: 1 } },
      /^the request stored with this image job .*\/images\/0/,
    ],
    [
      'a price that is not a whole number of nano-USD',
      { ...image, priceSnapshot: { kind: 'per-image', nanos: '0.5' } },
      /^the price snapshot stored with this image job .*\/nanos must match pattern/,
    ],
    [
      'a price stored as a JSON number',
      { ...image, priceSnapshot: { kind: 'per-image', nanos: 30000000 } },
      /^the price snapshot stored with this image job /,
    ],
    [
      "a video's price snapshot of an image",
      { ...video, priceSnapshot: image.priceSnapshot },
      /^the price snapshot stored with this video job /,
    ],
    [
      'a video content part of an unknown type',
      { ...video, request: { content: [{ type: 'audio', source: { kind: 'url', url: 'x' } }] } },
      /^the request stored with this video job .*\/content\/0/,
    ],
    [
      'a video resolution this release does not know',
      { ...video, request: { content: [], resolution: '8k' } },
      /^the request stored with this video job .*\/resolution/,
    ],
    [
      "a video's recorded request of another operation",
      { ...video, recordedRequest: { operation: 'image-generation' } },
      /^the recorded request stored with this video job .*\/operation/,
    ],
    [
      'a recorded request that is no object',
      { ...image, recordedRequest: 'image-generation' },
      /^the recorded request stored with this image job /,
    ],
    [
      'a text-to-speech request of an earlier shape',
      { ...speech, request: { product: 'text-to-speech', input: 'hello' } },
      /^the request stored with this audio job /,
    ],
    [
      'text-to-speech priced per second',
      { ...speech, priceSnapshot: reference.priceSnapshot },
      /^the price snapshot stored with this audio job .*\/kind/,
    ],
    [
      'a reference audio priced per character',
      { ...reference, priceSnapshot: speech.priceSnapshot },
      /^the price snapshot stored with this audio job .*\/kind/,
    ],
    ['a request that is null', { ...reference, request: null }, /^the request stored with this audio job /],
  ])('refuses %s, saying what and where', (_name, stored, reason) => {
    const read = readJobInput(stored);
    expect('problem' in read && read.problem).toMatch(reason);
  });
});

const imageResult = {
  images: [
    { assetId: 'asset_1', objectKey: 'images/gen_1/0.png', mediaType: 'image/png', zIndex: 0 },
    {
      assetId: 'asset_2',
      objectKey: 'images/gen_1/1.png',
      mediaType: 'image/png',
      boundingBox: { absolute: [0, 0, 10, 10], normalized: [0, 0, 500, 500] },
    },
  ],
  usage: { generatedImages: 2, usdCost: 0.06, unchargedUsdCost: 0.01 },
};
const imageAnswer = {
  images: [{ output: { kind: 'stored', objectKey: 'images/gen_1/0.png', mediaType: 'image/png' }, size: '1024x1024' }],
  failures: [{ index: 1, code: 'Blocked', message: 'refused' }],
  usage: { generatedImages: 1 },
};
const videoResult = {
  assetId: 'asset_v',
  objectKey: 'videos/gen_2/video.mp4',
  mediaType: 'video/mp4',
  bytes: 1234,
  durationSeconds: 5,
  usage: { completionTokens: 0, totalTokens: 0, usdCost: 0.25, durationSeconds: 5, providerUsage: {} },
};
const tried = [
  { providerId: 'busy', upstreamModel: 'voice', outcome: 'failed', reason: 'upstream answered 503', status: 503 },
];
const audioAnswer = { assetId: 'asset_a', objectKey: 'audio/gen_3/speech.mp3', mediaType: 'audio/mpeg', bytes: 9 };

describe("reading a media job's stored outcome", () => {
  it('reads each kind with its answer and result, or none yet', () => {
    expect(readStoredJob({ ...image, fallbacks: [], upstreamResult: imageAnswer, result: imageResult })).toMatchObject({
      kind: 'image',
      upstreamResult: imageAnswer,
      result: imageResult,
    });
    expect(readStoredJob({ ...video, fallbacks: [], upstreamResult: null, result: videoResult })).toMatchObject({
      result: videoResult,
    });
    expect(readStoredJob({ ...speech, fallbacks: tried, upstreamResult: audioAnswer, result: null })).toMatchObject({
      product: 'text-to-speech',
      fallbacks: tried,
      upstreamResult: audioAnswer,
      result: null,
    });
  });

  it('refuses a list of rows tried of another shape', () => {
    const read = readStoredJob({ ...image, fallbacks: [{ providerId: 'p' }], upstreamResult: null, result: null });
    expect('problem' in read && read.problem).toMatch(/^the list of rows tried stored with this image job /);
  });

  it.each<[string, unknown, unknown, RegExp]>([
    [
      "an image answer of the provider's own shape",
      { data: [{ url: 'x' }] },
      null,
      /^the provider's answer stored with this image job .*\/ must have required properties images/,
    ],
    [
      'an image result whose usage has no cost',
      null,
      { images: [], usage: {} },
      /^the result stored with this image job .*\/usage/,
    ],
    ['a video result as an image one', null, videoResult, /^the result stored with this image job /],
    // biome-ignore lint/complexity/useMaxParams: it.each spreads each case's columns
  ])('refuses %s', (_name, upstreamResult, result, reason) => {
    const read = readStoredJob({ ...image, fallbacks: [], upstreamResult, result });
    expect('problem' in read && read.problem).toMatch(reason);
  });

  it('checks what is written: a result of another kind, or with a value JSON cannot hold', () => {
    expect(outputProblem('video', 'result', videoResult)).toBeUndefined();
    expect(outputProblem('video', 'result', imageResult)).toMatch(
      /^the result of this video job is not of its kind's shape/,
    );
    expect(outputProblem('audio', 'upstreamResult', { ...audioAnswer, bytes: Number.NaN })).toMatch(/\/bytes/);
  });

  it('lists the asset ids of a result in output order, none for a result it cannot read', () => {
    expect(resultOutputs('image', imageResult).map((output) => output.assetId)).toEqual(['asset_1', 'asset_2']);
    expect(resultOutputs('video', videoResult).map((output) => output.assetId)).toEqual(['asset_v']);
    expect(resultOutputs('audio', imageResult)).toEqual([]);
  });

  it("says of each output what the media view shows: a layer's place, a duration, a transcript", () => {
    const layered = {
      ...imageResult,
      images: [
        imageResult.images[0],
        { ...imageResult.images[1], zIndex: 1, name: 'cat', boundingBox: imageResult.images[1]?.boundingBox },
      ],
    };
    expect(resultOutputs('image', layered)).toEqual([
      { assetId: 'asset_1', layer: { zIndex: 0 } },
      { assetId: 'asset_2', layer: { zIndex: 1, box: [0, 0, 10, 10], name: 'cat' } },
    ]);
    // Without zIndex an image is one of n, not a layer.
    expect(resultOutputs('image', imageResult)[1]).toEqual({ assetId: 'asset_2' });
    expect(resultOutputs('video', { ...videoResult, measuredSeconds: 4.96 })).toEqual([
      { assetId: 'asset_v', durationSeconds: 4.96 },
    ]);
    const spoken = { ...audioAnswer, durationSeconds: 0.78, subtitle: { text: 'Hello there', sentences: [] } };
    const { bytes: _bytes, ...audioResult } = spoken;
    expect(resultOutputs('audio', audioResult)).toEqual([
      { assetId: 'asset_a', durationSeconds: 0.78, transcript: 'Hello there' },
    ]);
  });
});

describe('the prompt of a recorded request', () => {
  it('joins the text parts of its content', () => {
    expect(
      recordedPrompt({
        operation: 'video-generation',
        content: [
          { type: 'text', text: 'one' },
          { type: 'image_url', image_url: { url: 'x' } },
          { type: 'text', text: 'two' },
        ],
      }),
    ).toBe('one\ntwo');
  });

  it.each([
    ['no content', { operation: 'text-to-speech', characters: 5 }],
    ['content without text', { content: [{ type: 'image_url' }] }],
    ['content of another shape', { content: 'a prompt' }],
    ['no object', null],
  ])('is absent for %s', (_name, recorded) => {
    expect(recordedPrompt(recorded)).toBeUndefined();
  });
});
