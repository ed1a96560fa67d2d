import { GatewayError } from '../domain/errors.ts';
import type { SpeechPriceSnapshot } from '../domain/media-job.ts';
import { divideRoundingUp } from '../domain/money.ts';
import type { ModelPricing } from '../domain/model-pricing.ts';

export type { SpeechPriceSnapshot } from '../domain/media-job.ts';

export function speechPriceSnapshot(model: {
  modelId: string;
  pricing: ModelPricing | undefined;
}): SpeechPriceSnapshot {
  const nanos = model.pricing?.characterNanosPerM;
  if (nanos === undefined)
    throw new GatewayError(
      'GW_MODEL_NOT_PRICED',
      `model "${model.modelId}" has no configured text-to-speech pricing and cannot be used`,
    );
  return { kind: 'per-m-characters', nanos: String(nanos) };
}

/** Characters as the price counts them: Unicode code points of the text (an emoji or a CJK character is one). */
export function billedCharacters(text: string): number {
  return [...text].length;
}

/**
 * Cost of speaking `characters` characters, rounded up once to a whole nano-USD. The estimate, the hold and
 * the charge are all this, of the same text, so they are equal.
 */
export function speechCostNanos(snapshot: SpeechPriceSnapshot, characters: number): bigint {
  return divideRoundingUp(BigInt(characters) * BigInt(snapshot.nanos), 1_000_000n);
}
