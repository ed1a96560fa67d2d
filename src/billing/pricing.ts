import { divideRoundingUp } from '../domain/money.ts';
import type { ModelPricing } from '../domain/model-pricing.ts';
import type { MediaTally } from '../domain/embedding.ts';
import { GatewayError } from '../domain/errors.ts';

const tokensPerPricingUnit = 1_000_000n;

/**
 * Cost of a text or embedding call: tokens times the per-million price, summed exactly, then rounded up to
 * a whole nano-USD once for the whole call.
 */
export function tokenCost(pricing: ModelPricing, usage: { inputTokens: number; outputTokens: number }): bigint {
  const scaled =
    BigInt(usage.inputTokens) * (pricing.inputNanosPerMTok ?? 0n) +
    BigInt(usage.outputTokens) * (pricing.outputNanosPerMTok ?? 0n);
  return divideRoundingUp(scaled, tokensPerPricingUnit);
}

/**
 * Cost of an embedding call: input tokens at the per-million price plus media at the catalog's per-image,
 * per-second and per-file prices (unset prices cost nothing), rounded up to a whole nano-USD once.
 */
export function embeddingCost(pricing: ModelPricing, inputTokens: number, media: MediaTally): bigint {
  // Everything in nano-USD x 1,000,000: tokens are priced per million, seconds per 1,000 milliseconds.
  const scaled =
    BigInt(inputTokens) * (pricing.inputNanosPerMTok ?? 0n) +
    BigInt(media.images) * (pricing.imageNanos ?? 0n) * tokensPerPricingUnit +
    BigInt(media.files) * (pricing.fileNanos ?? 0n) * tokensPerPricingUnit +
    BigInt(media.audioMs) * (pricing.audioSecondNanos ?? 0n) * 1000n +
    BigInt(media.videoMs) * (pricing.videoSecondNanos ?? 0n) * 1000n;
  return divideRoundingUp(scaled, tokensPerPricingUnit);
}

/** The pricing of a model about to be called, or the spec's 400 before anything is held or sent upstream. */
export function requirePricing(model: { modelId: string; pricing: ModelPricing | undefined }): ModelPricing {
  if (!model.pricing)
    throw new GatewayError(
      'GW_MODEL_NOT_PRICED',
      `model "${model.modelId}" has no configured pricing and cannot be used`,
    );
  return model.pricing;
}
