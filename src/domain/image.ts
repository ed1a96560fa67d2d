/** Canonical image generation: what an image adapter is asked, and what it answers. */

import Type, { type Static } from 'typebox';

/** An input image as an adapter receives it: a public URL (passed on or fetched), or bytes. */
export type ImageSource = { kind: 'url'; url: string } | { kind: 'inline'; mediaType: string; data: string };

export const imageOutputFormats = ['png', 'jpeg', 'webp'] as const;
export type ImageOutputFormat = (typeof imageOutputFormats)[number];

export const imageQualities = ['auto', 'high', 'medium', 'low'] as const;
export type ImageQuality = (typeof imageQualities)[number];

export const imageBackgrounds = ['transparent', 'opaque', 'auto'] as const;
export type ImageBackground = (typeof imageBackgrounds)[number];

export const layerResolutions = ['1K', '1.5K', '2K', 'auto'] as const;
export type LayerResolution = (typeof layerResolutions)[number];

/** Every field is already validated against the spec and the model's capabilities. */
export interface ImageGenerationRequest {
  upstreamModel: string;
  /** The text parts joined by blank lines; absent when the request has none (allowed in layer mode). */
  prompt?: string;
  /** Reference images, in the order of the request's content. */
  images: readonly ImageSource[];
  /** Output images asked for (at least 1); models may make fewer. */
  numberOfImages: number;
  size?: string;
  guidanceScale?: number;
  outputFormat?: ImageOutputFormat;
  quality?: ImageQuality;
  background?: ImageBackground;
  outputCompression?: number;
  watermark?: boolean;
  optimizePromptMode?: 'standard' | 'fast';
  maxTokens?: number;
  /** Layer decomposition: one input image split into a base image and layers. */
  layers?: { resolution: LayerResolution };
}

/** An input image as a job stores it: assets stay references to the archive until the job runs. */
export const StoredImageSourceSchema = Type.Union([
  Type.Object({ kind: Type.Literal('url'), url: Type.String() }),
  Type.Object({ kind: Type.Literal('inline'), mediaType: Type.String(), data: Type.String() }),
  Type.Object({ kind: Type.Literal('asset'), objectKey: Type.String(), mediaType: Type.String() }),
]);
export type StoredImageSource = Static<typeof StoredImageSourceSchema>;

/**
 * The adapter's request as an image job stores it: without the upstream model (the job row keeps it), with
 * stored image sources, and no prompt key when there is no prompt (JSON keeps no `undefined`).
 */
export const StoredImageRequestSchema = Type.Object({
  prompt: Type.Optional(Type.String()),
  images: Type.Array(StoredImageSourceSchema),
  numberOfImages: Type.Integer({ minimum: 1 }),
  size: Type.Optional(Type.String()),
  guidanceScale: Type.Optional(Type.Number()),
  outputFormat: Type.Optional(Type.Enum(imageOutputFormats)),
  quality: Type.Optional(Type.Enum(imageQualities)),
  background: Type.Optional(Type.Enum(imageBackgrounds)),
  outputCompression: Type.Optional(Type.Number()),
  watermark: Type.Optional(Type.Boolean()),
  optimizePromptMode: Type.Optional(Type.Enum(['standard', 'fast'])),
  maxTokens: Type.Optional(Type.Number()),
  layers: Type.Optional(Type.Object({ resolution: Type.Enum(layerResolutions) })),
});
export type StoredImageRequest = Static<typeof StoredImageRequestSchema>;

/** A layer's box: `[left, top, right, bottom]` in pixels of the base image. */
export type LayerBox = [number, number, number, number];

export interface GeneratedImage {
  output: ImageSource;
  /** `WxH` when the provider says. */
  size?: string;
  /** Layer decomposition only: `zIndex` 0 is the base image, which has no box, name or description. */
  layer?: { zIndex: number; box?: LayerBox; name?: string; description?: string };
}

/** An output image the provider reports it could not make (a partly failed group). */
export interface ImageFailure {
  index: number;
  code: string;
  message: string;
}

/** The spec's `ImageResult.usage` keys, as the provider reported them. */
export interface ImageUsage {
  generatedImages?: number;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  inputImageTokens?: number;
  outputImageTokens?: number;
}

export interface ImageGenerationResult {
  images: GeneratedImage[];
  failures: ImageFailure[];
  usage: ImageUsage;
  /** The quality the provider says it rendered at, where it says (priced per quality). */
  quality?: string;
}

/** A streamed generation, image by image as the provider finishes each, ending with the usage. */
export type ImageStreamEvent =
  | { type: 'image'; index: number; image: GeneratedImage }
  | { type: 'failure'; failure: ImageFailure }
  | { type: 'finish'; usage: ImageUsage };
