import type { LayerBox } from '../domain/image.ts';

export type { ArchivedImage, StoredImageResult } from '../domain/media-job-results.ts';

/** The spec's normalized box: each coordinate scaled to 0..1000 of the base image and truncated at 1000. */
export function normalizedBox(box: LayerBox, width: number, height: number): LayerBox {
  const scale = (value: number, size: number) => Math.min(1000, Math.max(0, Math.trunc((value * 1000) / size)));
  return [scale(box[0], width), scale(box[1], height), scale(box[2], width), scale(box[3], height)];
}
