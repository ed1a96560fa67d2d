import type { NativeImageInput } from '../../gateway/image-request-check.ts';
import { outputNoLongerArchived, type ImageResultView } from '../../gateway/image-generation.ts';
import type { StreamedImage } from '../../gateway/image-streaming.ts';
import {
  imageBackgrounds,
  imageQualities,
  type ImageBackground,
  type ImageQuality,
  type ImageUsage,
} from '../../domain/image.ts';
import type { ImagesGenerateRequest } from '../../protocols/openai/images.ts';

const isQuality = (value: string | undefined): value is ImageQuality =>
  (imageQualities as readonly string[]).includes(value ?? '');
const isBackground = (value: string | undefined): value is ImageBackground =>
  (imageBackgrounds as readonly string[]).includes(value ?? '');

/**
 * An alpha images request for a translated provider (ModelArk, the sandbox): the prompt as the one text part,
 * `n` as numberOfImages, `size` when it is `WxH` (`auto` is the provider's default anyway). Fields the
 * model does not take are dropped, not refused: the compatibility surfaces honour what the model supports.
 */
export function alphaImageInput(body: ImagesGenerateRequest): NativeImageInput {
  return {
    modelId: body.model,
    content: [{ type: 'text', text: body.prompt }],
    numberOfImages: body.n,
    ...(isPixelSize(body.size) ? { size: body.size } : {}),
    ...(body.output_format !== undefined ? { outputFormat: body.output_format } : {}),
    ...(isQuality(body.quality) ? { quality: body.quality } : {}),
    ...(isBackground(body.background) ? { background: body.background } : {}),
    ...(body.output_compression !== undefined ? { outputCompression: body.output_compression } : {}),
    fieldNames: { numberOfImages: 'n', outputFormat: 'output_format', outputCompression: 'output_compression' },
  };
}

const isPixelSize = (value: string | undefined): value is string =>
  value !== undefined && /^[1-9]\d{0,5}x[1-9]\d{0,5}$/.test(value);

/**
 * Fields of the request no translated provider takes, named back to the client as dropped: those it has no
 * place for, and a `quality` or `size` of a form it cannot carry (dall-e-3's `hd`, a size not `WxH`; `auto`
 * is what a provider does anyway, so it is carried).
 */
export function untranslatedFields(body: ImagesGenerateRequest): string[] {
  const dropped: string[] = (['style', 'moderation', 'partial_images', 'user'] as const).filter(
    (field) => body[field] !== undefined,
  );
  if (body.quality !== undefined && !isQuality(body.quality)) dropped.push('quality');
  if (body.size !== undefined && body.size !== 'auto' && !isPixelSize(body.size)) dropped.push('size');
  return dropped;
}

/** A finished job's images as an answer reads them: its creation time and each image's archived bytes. */
export interface FinishedImages {
  created: number;
  bytesOf: (index: number) => Promise<Buffer>;
}

/** The OpenAI ImagesResponse of a finished job: each image as its signed archive link, or as base64 when asked. */
export async function imagesResponseOf(
  result: ImageResultView,
  { created, responseFormat, bytesOf }: FinishedImages & { responseFormat: 'url' | 'b64_json' | undefined },
): Promise<Record<string, unknown>> {
  const data = await Promise.all(
    result.images.map(async (image, index) => {
      if (responseFormat === 'b64_json') return { b64_json: (await bytesOf(index)).toString('base64') };
      if (!('downloadUrl' in image)) throw outputNoLongerArchived();
      return { url: image.downloadUrl };
    }),
  );
  const usage = result.usage;
  return {
    created,
    data,
    ...(usage.inputTokens !== undefined || usage.outputTokens !== undefined ? { usage: wireImageUsage(usage) } : {}),
  };
}

/** Token usage as OpenAI's images answers and events carry it. */
function wireImageUsage(usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number }): object {
  return {
    input_tokens: usage.inputTokens ?? 0,
    output_tokens: usage.outputTokens ?? 0,
    total_tokens: usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0),
  };
}

/**
 * A finished job's images as OpenAI's image stream, for a client that asked `stream: true` of a model that makes
 * images as jobs: one `image_generation.completed` per image with its base64, the last carrying the usage.
 */
export async function* imageEventsOf(
  result: ImageResultView,
  { created, outputFormat, bytesOf }: FinishedImages & { outputFormat: string },
): AsyncGenerator<[string, Record<string, unknown>]> {
  const type = 'image_generation.completed';
  for (const [index] of result.images.entries()) {
    const last = index === result.images.length - 1;
    yield [
      type,
      {
        type,
        b64_json: (await bytesOf(index)).toString('base64'),
        created_at: created,
        output_format: outputFormat,
        ...(last ? { usage: wireImageUsage(result.usage) } : {}),
      },
    ];
  }
}

/**
 * A translated image stream in OpenAI's events: `image_generation.completed` per image, carrying its base64.
 * Each image is held back until the next event, so the last one can carry the usage the provider reports
 * at its end, as OpenAI's last completed event does.
 */
export class ImageEventEncoder {
  private held: Extract<StreamedImage, { type: 'image' }> | undefined;

  constructor(
    private readonly created: number,
    private readonly outputFormat: string,
  ) {}

  encode(event: StreamedImage): Array<[string, Record<string, unknown>]> {
    const out: Array<[string, Record<string, unknown>]> = [];
    if (this.held) out.push(this.completed(this.held, event.type === 'finish' ? event.usage : undefined));
    this.held = event.type === 'image' ? event : undefined;
    return out;
  }

  private completed(
    image: Extract<StreamedImage, { type: 'image' }>,
    usage: ImageUsage | undefined,
  ): [string, Record<string, unknown>] {
    const type = 'image_generation.completed';
    return [
      type,
      {
        type,
        b64_json: image.base64,
        created_at: this.created,
        output_format: this.outputFormat,
        ...(image.size ? { size: image.size } : {}),
        ...(usage ? { usage: wireImageUsage(usage) } : {}),
      },
    ];
  }
}
