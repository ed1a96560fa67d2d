import { describe, expect, it } from 'vitest';
import {
  imageCostNanos,
  imageHoldNanos,
  imagePriceSnapshot,
  imageUnitNanos,
  maxLayerImages,
} from '../../src/billing/image-pricing.ts';
import { embeddingCost, requirePricing } from '../../src/billing/pricing.ts';
import { GatewayError } from '../../src/domain/errors.ts';
import type { ModelPricing } from '../../src/domain/model-pricing.ts';
import { pricingHash } from '../../src/domain/price-version.ts';

/** Prices with no token price: what an image or media-only model is configured with. */
const untokened = { inputNanosPerMTok: undefined, outputNanosPerMTok: undefined };

describe('image pricing', () => {
  const byQuality = imagePriceSnapshot({
    modelId: 'gpt-image',
    pricing: {
      ...untokened,
      outputImageByQualityNanos: { low: 11_000_000n, medium: 42_000_000n, high: 167_000_000n },
    },
  });
  const perImage = imagePriceSnapshot({
    modelId: 'seedream',
    pricing: { ...untokened, outputImageNanos: 35_000_000n },
  });

  it('freezes the prices by quality when the model has them, over a flat price', () => {
    expect(byQuality).toEqual({ kind: 'by-quality', low: '11000000', medium: '42000000', high: '167000000' });
    expect(
      imagePriceSnapshot({
        modelId: 'both',
        pricing: { ...untokened, outputImageNanos: 1n, outputImageByQualityNanos: { low: 2n, medium: 3n, high: 4n } },
      }),
    ).toMatchObject({ kind: 'by-quality' });
    expect(perImage).toEqual({ kind: 'per-image', nanos: '35000000' });
  });

  it('refuses a model with no image price, naming it', () => {
    expect(() => imagePriceSnapshot({ modelId: 'text-only', pricing: { ...untokened } })).toThrow(
      /model "text-only" has no configured image pricing/,
    );
  });

  it('prices auto, or no quality, at high until the provider says what it rendered', () => {
    expect(imageUnitNanos(byQuality, 'low')).toBe(11_000_000n);
    expect(imageUnitNanos(byQuality, 'medium')).toBe(42_000_000n);
    expect(imageUnitNanos(byQuality, 'high')).toBe(167_000_000n);
    expect(imageUnitNanos(byQuality, 'auto')).toBe(167_000_000n);
    expect(imageUnitNanos(byQuality, undefined)).toBe(167_000_000n);
    // A flat price is the price whatever the quality.
    expect(imageUnitNanos(perImage, 'low')).toBe(35_000_000n);
  });

  it('holds for every image asked, or for the 17 a layer decomposition may return', () => {
    expect(imageHoldNanos(byQuality, { numberOfImages: 3, quality: 'medium' })).toBe(126_000_000n);
    expect(imageHoldNanos(perImage, { numberOfImages: 2 })).toBe(70_000_000n);
    expect(maxLayerImages).toBe(17);
    expect(imageHoldNanos(perImage, { numberOfImages: 1, layers: { resolution: '2K' } })).toBe(595_000_000n);
  });

  it('charges the images delivered at the quality rendered', () => {
    expect(imageCostNanos(byQuality, 2, 'low')).toBe(22_000_000n);
    expect(imageCostNanos(perImage, 4, undefined)).toBe(140_000_000n);
    expect(imageCostNanos(perImage, 0, undefined)).toBe(0n);
  });
});

describe('embedding pricing', () => {
  const pricing: ModelPricing = {
    inputNanosPerMTok: 130_000n,
    outputNanosPerMTok: undefined,
    imageNanos: 100_000n,
    audioSecondNanos: 25_000n,
    videoSecondNanos: 50_000n,
    fileNanos: 1_000n,
  };
  const none = { images: 0, audioMs: 0, videoMs: 0, files: 0 };

  it('prices tokens per million, rounded up once to a whole nano-USD', () => {
    expect(embeddingCost(pricing, 1_000_000, none)).toBe(130_000n);
    expect(embeddingCost(pricing, 10, none)).toBe(2n); // 1.3 nano-USD
    expect(embeddingCost(pricing, 0, none)).toBe(0n);
  });

  it('adds images and files at their unit price, audio and video per second of their milliseconds', () => {
    expect(embeddingCost(pricing, 0, { ...none, images: 2 })).toBe(200_000n);
    expect(embeddingCost(pricing, 0, { ...none, files: 3 })).toBe(3_000n);
    expect(embeddingCost(pricing, 0, { ...none, audioMs: 2_000 })).toBe(50_000n);
    expect(embeddingCost(pricing, 0, { ...none, videoMs: 1_500 })).toBe(75_000n);
    // 0.3 nano-USD of a token and 0.3 of a millisecond of audio: summed exactly, then rounded up once to 1, not 1 + 1.
    const fractions = { ...untokened, inputNanosPerMTok: 300_000n, audioSecondNanos: 300n };
    expect(embeddingCost(fractions, 1, { ...none, audioMs: 1 })).toBe(1n);
  });

  it('costs nothing for media the model has no price for', () => {
    expect(embeddingCost({ ...untokened }, 1_000, { images: 4, audioMs: 9_000, videoMs: 9_000, files: 2 })).toBe(0n);
  });
});

describe('the pricing a call needs', () => {
  it('answers the model pricing, or refuses the model with the spec code before anything is held', () => {
    const pricing: ModelPricing = { inputNanosPerMTok: 1n, outputNanosPerMTok: 2n };
    expect(requirePricing({ modelId: 'priced', pricing })).toBe(pricing);
    let failure: unknown;
    try {
      requirePricing({ modelId: 'unpriced', pricing: undefined });
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({ code: 'GW_MODEL_NOT_PRICED' });
  });
});

describe('the version hash of a price', () => {
  it('is the same for the same prices in any key order, at every depth, and ignores undefined fields', () => {
    const a = { perImage: 0.04, byQuality: { low: 0.01, high: 0.17 }, inputPerMTok: undefined };
    const b = { byQuality: { high: 0.17, low: 0.01 }, perImage: 0.04 };
    expect(pricingHash(a)).toBe(pricingHash(b));
    expect(pricingHash(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes with any price, and with the order of a list', () => {
    const base = pricingHash({ perImage: 0.04, tiers: [1, 2] });
    expect(pricingHash({ perImage: 0.05, tiers: [1, 2] })).not.toBe(base);
    expect(pricingHash({ perImage: 0.04, tiers: [2, 1] })).not.toBe(base);
    expect(pricingHash({ perImage: 0.04, tiers: [1, 2], outputPerMTok: 0 })).not.toBe(base);
  });
});
