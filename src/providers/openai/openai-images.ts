import { FormData } from 'undici';
import type { GeneratedImage, ImageGenerationRequest, ImageGenerationResult, ImageUsage } from '../../domain/image.ts';
import {
  isImagesAnswer,
  isImagesStreamEvent,
  type ImagesAnswer,
  type ImagesUsage,
} from '../../protocols/openai/images.ts';
import type {
  CallOptions,
  ImageAdapter,
  ImageRelayMeter,
  ImageRelayMeterOptions,
  ImageRelayReading,
  ImageRelayRequest,
  RawExchange,
} from '../provider-adapter.ts';
import { checkedRelay } from '../shared/checked-relay.ts';
import { JsonCopy } from '../shared/json-copy.ts';
import { dataOf, sseSplitter } from '../shared/stream-splitters.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { checked, checkedEvent } from '../shared/wire-data.ts';

/** Largest images answer relayed whole: ten large images of base64 fit. */
const maxImagesAnswerBytes = 96 * 1024 * 1024;

/** The fields of a generation this family takes; the rest (watermark, guidance, prompt optimisation, maxTokens) are other families'. */
function fields(request: ImageGenerationRequest): Record<string, string | number> {
  const body: Record<string, string | number> = {
    model: request.upstreamModel,
    prompt: request.prompt ?? '',
    n: request.numberOfImages,
  };
  if (request.size !== undefined) body.size = request.size;
  if (request.quality !== undefined) body.quality = request.quality;
  if (request.background !== undefined) body.background = request.background;
  if (request.outputFormat !== undefined) body.output_format = request.outputFormat;
  if (request.outputCompression !== undefined) body.output_compression = request.outputCompression;
  return body;
}

export function imageUsageOf(usage: ImagesUsage | undefined): ImageUsage {
  if (!usage) return {};
  return {
    ...(usage.input_tokens !== undefined ? { inputTokens: usage.input_tokens } : {}),
    ...(usage.output_tokens !== undefined ? { outputTokens: usage.output_tokens } : {}),
    ...(usage.total_tokens !== undefined ? { totalTokens: usage.total_tokens } : {}),
    ...(usage.input_tokens_details?.image_tokens !== undefined
      ? { inputImageTokens: usage.input_tokens_details.image_tokens }
      : {}),
  };
}

function resultOf(answer: ImagesAnswer, format: string): ImageGenerationResult {
  const images: GeneratedImage[] = [];
  for (const item of answer.data) {
    if (item.b64_json)
      images.push({
        output: { kind: 'inline', mediaType: `image/${format}`, data: item.b64_json },
        ...(answer.size ? { size: answer.size } : {}),
      });
    else if (item.url)
      images.push({ output: { kind: 'url', url: item.url }, ...(answer.size ? { size: answer.size } : {}) });
  }
  return {
    images,
    failures: [],
    usage: { ...imageUsageOf(answer.usage), generatedImages: images.length },
    ...(answer.quality ? { quality: answer.quality } : {}),
  };
}

/**
 * OpenAI Images: a generation from the prompt (`/images/generations`, JSON), or, with reference images, an
 * edit (`/images/edits`, multipart with `image[]` parts). The gateway sends bytes only: URL images are
 * fetched before they reach this adapter.
 */
export async function openAiImages(
  http: UpstreamHttp,
  request: ImageGenerationRequest,
  options: CallOptions,
): Promise<ImageGenerationResult> {
  const headers = { authorization: options.target.apiKey.bearer() };
  let answer: object;
  if (request.images.length === 0) {
    answer = await http.postForJson(options.target, {
      path: '/images/generations',
      headers,
      body: fields(request),
      signal: options.signal,
    });
  } else {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields(request))) form.append(name, String(value));
    request.images.forEach((image, index) => {
      if (image.kind !== 'inline') throw new RangeError('the OpenAI images protocol takes reference images as bytes');
      form.append(
        'image[]',
        new Blob([Buffer.from(image.data, 'base64')], { type: image.mediaType }),
        `image-${index}.${image.mediaType.split('/')[1] ?? 'png'}`,
      );
    });
    answer = await http.postFormForJson(options.target, {
      path: '/images/edits',
      headers,
      form,
      signal: options.signal,
    });
  }
  return resultOf(checked(answer, isImagesAnswer, 'an images answer'), request.outputFormat ?? 'png');
}

/** Alpha images to an OpenAI-protocol upstream: the body as given, its model rewritten, the answer relayed once its start is checked. */
export async function relayOpenAiImages(
  http: UpstreamHttp,
  request: ImageRelayRequest,
  options: CallOptions,
): Promise<RawExchange> {
  // `provider` is the gateway's routing object, not a field of the images protocol.
  const { provider: _provider, ...given } = request.body;
  const body: Record<string, unknown> = { ...given, model: request.upstreamModel };
  const response = await http.postJson(options.target, {
    path: '/images/generations',
    headers: { authorization: options.target.apiKey.bearer() },
    body,
  });
  const shapes = {
    answer: isImagesAnswer,
    event: isImagesStreamEvent,
    what: 'an images answer',
    maxAnswerBytes: maxImagesAnswerBytes,
  };
  return checkedRelay(
    response,
    shapes,
    body.stream === true ? { split: sseSplitter(options.target.maxEventCharacters) } : undefined,
  );
}

/** Counts the images a relayed answer carried: `data[]` of the JSON body, or the stream's `image_generation.completed` events. */
export function openAiImagesMeter({ streaming, maxEventCharacters, whole }: ImageRelayMeterOptions): ImageRelayMeter {
  if (!streaming) {
    const copy = new JsonCopy(maxImagesAnswerBytes, whole);
    return {
      push: (chunk) => copy.push(chunk),
      reading: (): ImageRelayReading => {
        const answer = copy.parse();
        if (!isImagesAnswer(answer)) return { images: 0, complete: false, usage: {} };
        const images = answer.data.filter((item) => item.b64_json || item.url).length;
        return {
          images,
          complete: true,
          usage: imageUsageOf(answer.usage),
          ...(answer.quality ? { quality: answer.quality } : {}),
        };
      },
    };
  }
  const split = sseSplitter(maxEventCharacters);
  const reading: ImageRelayReading = { images: 0, complete: false, usage: {} };
  return {
    push: (chunk) => {
      for (const data of dataOf(split(chunk))) {
        if (data === '[DONE]') continue;
        const event = checkedEvent(data, isImagesStreamEvent);
        if (event.type !== 'image_generation.completed') continue;
        reading.images += 1;
        reading.complete = true;
        if (event.quality) reading.quality = event.quality;
        if (event.usage) reading.usage = imageUsageOf(event.usage);
      }
    },
    reading: () => ({ ...reading }),
  };
}

export function openAiImageAdapter(http: UpstreamHttp): ImageAdapter {
  return {
    layers: false,
    imageUrls: false,
    generate: (request, options) => openAiImages(http, request, options),
    relay: (request, options) => relayOpenAiImages(http, request, options),
    relayMeter: openAiImagesMeter,
  };
}
