import type { ImageFailure, ImageUsage, LayerBox } from '../domain/image.ts';

/** One output of an image job, archived: what the job row keeps, without links (those expire and are made when read). */
export interface ArchivedImage {
  assetId: string;
  objectKey: string;
  mediaType: string;
  /** The provider's own URL, when it answered with one (it expires). */
  providerUrl?: string;
  zIndex?: number;
  boundingBox?: { absolute: LayerBox; normalized: LayerBox };
  name?: string;
  description?: string;
}

/** What a succeeded image job keeps as its result. */
export interface StoredImageResult {
  images: ArchivedImage[];
  usage: ImageUsage & { usdCost: number };
  /** Outputs the provider reported as failed, or that could not be archived. */
  failures?: ImageFailure[];
}

/** The spec's normalized box: each coordinate scaled to 0..1000 of the base image and truncated at 1000. */
export function normalizedBox(box: LayerBox, width: number, height: number): LayerBox {
  const scale = (value: number, size: number) => Math.min(1000, Math.max(0, Math.trunc((value * 1000) / size)));
  return [scale(box[0], width), scale(box[1], height), scale(box[2], width), scale(box[3], height)];
}
