import { createHash } from 'node:crypto';
import type { GeneratedImage, ImageGenerationRequest, ImageGenerationResult, LayerBox } from '../../domain/image.ts';
import { UpstreamHttpError } from '../../domain/upstream-failure.ts';
import type { CallOptions, ImageAdapter } from '../provider-adapter.ts';
import { actOutTrigger, jobTrigger } from './job-triggers.ts';
import { encodePng } from './png.ts';

/** Largest side of a sandbox image: small enough to generate in a millisecond, large enough to look at. */
const maxSide = 64;

/** The requested `WxH` scaled to fit `maxSide`, keeping its aspect ratio. */
function dimensions(size: string | undefined): { width: number; height: number } {
  const match = /^(\d+)x(\d+)$/.exec(size ?? '');
  if (!match) return { width: maxSide, height: maxSide };
  const [width, height] = [Number(match[1]), Number(match[2])];
  const scale = maxSide / Math.max(width, height);
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** Two colours drawn from the prompt and the image's index: the same request always makes the same picture. */
function palette(seed: string): [[number, number, number, number], [number, number, number, number]] {
  const hash = createHash('sha256').update(seed).digest();
  return [
    [hash[0]!, hash[1]!, hash[2]!, 255],
    [hash[3]!, hash[4]!, hash[5]!, 255],
  ];
}

function stripes(seed: string, width: number, height: number): Buffer {
  const [first, second] = palette(seed);
  return encodePng(width, height, (x, y) => (((x + y) >> 3) % 2 === 0 ? first : second));
}

function inline(png: Buffer): GeneratedImage['output'] {
  return { kind: 'inline', mediaType: 'image/png', data: png.toString('base64') };
}

const layerNames = [
  { name: 'background', description: 'the backdrop behind every other element' },
  { name: 'subject', description: 'the main subject in the middle of the picture' },
  { name: 'caption', description: 'the text band along the bottom edge' },
] as const;

/** A base image and three layers, each tightly cropped to its box within the base. */
function decompose(request: ImageGenerationRequest): ImageGenerationResult {
  const { width, height } = { width: maxSide, height: maxSide };
  const seed = `${request.prompt ?? ''}|layers`;
  const boxes: LayerBox[] = [
    [0, 0, width, height],
    [Math.floor(width / 4), Math.floor(height / 4), Math.floor((3 * width) / 4), Math.floor((3 * height) / 4)],
    [0, Math.floor((4 * height) / 5), width, height],
  ];
  const images: GeneratedImage[] = [
    { output: inline(stripes(`${seed}|base`, width, height)), size: `${width}x${height}`, layer: { zIndex: 0 } },
  ];
  boxes.forEach((box, index) => {
    const [left, top, right, bottom] = box;
    images.push({
      output: inline(stripes(`${seed}|${index}`, right - left, bottom - top)),
      size: `${right - left}x${bottom - top}`,
      layer: { zIndex: index + 1, box, ...layerNames[index]! },
    });
  });
  return { images, failures: [], usage: { generatedImages: images.length } };
}

async function generate(request: ImageGenerationRequest, options: CallOptions): Promise<ImageGenerationResult> {
  if (request.upstreamModel !== 'image' && !(request.upstreamModel === 'image-layers' && request.layers)) {
    const body = JSON.stringify({
      error: {
        message: `The sandbox has no image model "${request.upstreamModel}"`,
        type: 'invalid_request_error',
        code: 'model_not_found',
      },
    });
    throw new UpstreamHttpError(404, body, { contentType: 'application/json' });
  }
  await actOutTrigger(jobTrigger(request.prompt ?? ''), options.signal);
  if (request.upstreamModel === 'image-layers') return decompose(request);
  const { width, height } = dimensions(request.size);
  const images = Array.from({ length: request.numberOfImages }, (_, index) => ({
    output: inline(stripes(`${request.prompt ?? ''}|${index}|${request.images.length}`, width, height)),
    size: `${width}x${height}`,
  }));
  return { images, failures: [], usage: { generatedImages: images.length } };
}

/**
 * Small deterministic PNGs, and layer decompositions, made in process: the whole job path without an upstream.
 * Prompt options (`guidanceScale`, `watermark`, `optimizePromptOptions`) are taken, as ModelArk takes them, and
 * change nothing; trigger words of the prompt make the job fail or run slow (job-triggers.ts).
 */
export const sandboxImages: ImageAdapter = { layers: true, imageUrls: true, generate };
