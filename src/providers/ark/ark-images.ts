import type {
  GeneratedImage,
  ImageFailure,
  ImageGenerationRequest,
  ImageGenerationResult,
  ImageSource,
  ImageStreamEvent,
  ImageUsage,
  LayerBox,
} from '../../domain/image.ts';
import {
  isSeedreamAnswer,
  type SeedreamAnswer,
  isSeedreamStreamEvent,
  seedreamStreamTerminator,
  type SeedreamItem,
  type SeedreamRequest,
} from '../../protocols/ark/images.ts';
import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import { decodeSse } from '../shared/sse-decoder.ts';
import { checkedEvent } from '../shared/wire-data.ts';
import type { CallOptions, ImageAdapter } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { checked } from '../shared/wire-data.ts';

function imageField(source: ImageSource): string {
  return source.kind === 'url' ? source.url : `data:${source.mediaType};base64,${source.data}`;
}

/**
 * The Seedream body: reference images as URLs or data URLs, several outputs as a sequential group. `maxTokens`
 * is not sent (ModelArk has no such field), nor the fields of other families (quality, background,
 * compression), which the gateway refuses before they reach here.
 */
export function seedreamBody(request: ImageGenerationRequest): SeedreamRequest {
  const images = request.images.map(imageField);
  const body: SeedreamRequest = { model: request.upstreamModel, prompt: request.prompt ?? '', response_format: 'url' };
  if (images.length > 0) body.image = images.length === 1 ? images[0]! : images;
  if (request.layers) {
    body.layer_decomposition = true;
    body.resolution = request.layers.resolution;
  } else {
    if (request.size !== undefined) body.size = request.size;
    if (request.numberOfImages > 1) {
      body.sequential_image_generation = 'auto';
      body.sequential_image_generation_options = { max_images: request.numberOfImages };
    } else body.sequential_image_generation = 'disabled';
  }
  if (request.outputFormat === 'png' || request.outputFormat === 'jpeg') body.output_format = request.outputFormat;
  if (request.guidanceScale !== undefined) body.guidance_scale = request.guidanceScale;
  if (request.watermark !== undefined) body.watermark = request.watermark;
  if (request.optimizePromptMode !== undefined) body.optimize_prompt_options = { mode: request.optimizePromptMode };
  return body;
}

function box(given: SeedreamItem['bounding_box']): LayerBox | undefined {
  // The box in pixels of the base image: the SDK's `absolute`, or a bare array of them.
  const values = Array.isArray(given) ? given : given?.absolute;
  if (values?.length !== 4 || !values.every(Number.isFinite)) return undefined;
  return [values[0]!, values[1]!, values[2]!, values[3]!];
}

function generated(
  item: SeedreamItem,
  { layers, format }: { layers: boolean; format: string },
): GeneratedImage | undefined {
  const output: ImageSource | undefined = item.url
    ? { kind: 'url', url: item.url }
    : item.b64_json
      ? { kind: 'inline', mediaType: layers && item.z_index ? 'image/png' : `image/${format}`, data: item.b64_json }
      : undefined;
  if (!output) return undefined;
  const image: GeneratedImage = { output, ...(item.size ? { size: item.size } : {}) };
  if (layers) {
    const zIndex = item.z_index ?? 0;
    image.layer =
      zIndex === 0
        ? { zIndex }
        : { zIndex, box: box(item.bounding_box), name: item.name, description: item.description };
  }
  return image;
}

/** BytePlus ModelArk Seedream: one synchronous call; each item of the answer is an image or the error of one. */
export async function arkImages(
  http: UpstreamHttp,
  request: ImageGenerationRequest,
  options: CallOptions,
): Promise<ImageGenerationResult> {
  const answer = checked(
    await http.postForJson(options.target, {
      path: '/images/generations',
      headers: { authorization: options.target.apiKey.bearer() },
      body: seedreamBody(request),
      signal: options.signal,
    }),
    isSeedreamAnswer,
    'an image generation answer',
  );
  const layers = request.layers !== undefined;
  const images: GeneratedImage[] = [];
  const failures: ImageFailure[] = [];
  answer.data.forEach((item, index) => {
    const image = item.error ? undefined : generated(item, { layers, format: request.outputFormat ?? 'jpeg' });
    if (image) images.push(image);
    else
      failures.push({
        index,
        code: item.error?.code ?? 'NoImage',
        message: item.error?.message ?? 'the provider returned an item without an image',
      });
  });
  return { images, failures, usage: usageOf(answer.usage) };
}

function usageOf(usage: SeedreamAnswer['usage']): ImageUsage {
  return {
    ...(usage?.generated_images !== undefined ? { generatedImages: usage.generated_images } : {}),
    ...(usage?.output_tokens !== undefined ? { outputTokens: usage.output_tokens } : {}),
    ...(usage?.total_tokens !== undefined ? { totalTokens: usage.total_tokens } : {}),
  };
}

/**
 * The same call with `stream: true`: Seedream answers one event per finished or failed image, then the
 * completion with usage, then `data: [DONE]`. A stream that ends without its completion is a protocol failure.
 */
export async function* arkImageStream(
  http: UpstreamHttp,
  request: ImageGenerationRequest,
  options: CallOptions,
): AsyncGenerator<ImageStreamEvent> {
  const response = await http.postJson(options.target, {
    path: '/images/generations',
    headers: { authorization: options.target.apiKey.bearer() },
    body: { ...seedreamBody(request), stream: true },
  });
  let finished = false;
  for await (const { data } of decodeSse(response.body, options.target.maxEventCharacters)) {
    if (data === seedreamStreamTerminator) break;
    const event = checkedEvent(data, isSeedreamStreamEvent);
    if (event.type === 'image_generation.partial_succeeded') {
      const image = generated(event, { layers: false, format: request.outputFormat ?? 'jpeg' });
      if (image) yield { type: 'image', index: event.image_index, image };
      else
        yield {
          type: 'failure',
          failure: {
            index: event.image_index,
            code: 'NoImage',
            message: 'the provider sent an image event without an image',
          },
        };
    } else if (event.type === 'image_generation.partial_failed') {
      yield {
        type: 'failure',
        failure: { index: event.image_index, code: event.error.code, message: event.error.message },
      };
    } else {
      finished = true;
      yield { type: 'finish', usage: usageOf(event.usage) };
    }
  }
  if (!finished)
    throw new UpstreamUnreachableError('protocol', 'the upstream image stream ended before its completion event');
}

export function arkImageAdapter(http: UpstreamHttp): ImageAdapter {
  return {
    layers: true,
    imageUrls: true,
    generate: (request, options) => arkImages(http, request, options),
    stream: (request, options) => arkImageStream(http, request, options),
  };
}
