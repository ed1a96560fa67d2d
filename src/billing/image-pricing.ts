import { GatewayError } from '../domain/errors.ts';
import type { ImagePriceSnapshot } from '../domain/media-job.ts';
import type { ModelPricing } from '../domain/model-pricing.ts';

/** The most images one layer decomposition returns: a base image and 16 layers. */
export const maxLayerImages = 17;

export type { ImagePriceSnapshot } from '../domain/media-job.ts';

/** The image prices of a model about to be called, or the spec's 400 when it has none. */
export function imagePriceSnapshot(model: { modelId: string; pricing: ModelPricing | undefined }): ImagePriceSnapshot {
  const pricing = model.pricing;
  if (pricing?.outputImageByQualityNanos) {
    const { low, medium, high } = pricing.outputImageByQualityNanos;
    return { kind: 'by-quality', low: String(low), medium: String(medium), high: String(high) };
  }
  if (pricing?.outputImageNanos !== undefined) return { kind: 'per-image', nanos: String(pricing.outputImageNanos) };
  throw new GatewayError(
    'GW_MODEL_NOT_PRICED',
    `model "${model.modelId}" has no configured image pricing and cannot be used`,
  );
}

/**
 * The price of one output image. Priced by quality, `auto` (or none) is priced at `high` until the provider
 * says what it rendered, so the hold covers whatever it picks.
 */
export function imageUnitNanos(snapshot: ImagePriceSnapshot, quality: string | undefined): bigint {
  if (snapshot.kind === 'per-image') return BigInt(snapshot.nanos);
  if (quality === 'low' || quality === 'medium') return BigInt(snapshot[quality]);
  return BigInt(snapshot.high);
}

/**
 * What an image request holds, and what its estimate shows: every image it may return at the price of the
 * quality asked. A layer decomposition may return up to 17 images, whose count the model picks, so it
 * holds for 17 and is charged for those returned.
 */
export function imageHoldNanos(
  snapshot: ImagePriceSnapshot,
  request: { numberOfImages: number; quality?: string; layers?: unknown },
): bigint {
  const images = request.layers ? maxLayerImages : request.numberOfImages;
  return imageUnitNanos(snapshot, request.quality) * BigInt(images);
}

/** What a finished job is charged: each delivered image at the price of the quality rendered (or asked). */
export function imageCostNanos(snapshot: ImagePriceSnapshot, images: number, quality: string | undefined): bigint {
  return imageUnitNanos(snapshot, quality) * BigInt(images);
}
