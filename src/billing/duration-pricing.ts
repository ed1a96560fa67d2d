import { GatewayError } from '../domain/errors.ts';
import type { DurationPriceSnapshot } from '../domain/media-job.ts';
import { divideRoundingUp } from '../domain/money.ts';
import type { ModelPricing } from '../domain/model-pricing.ts';
import { videoResolutions, type VideoResolution } from '../domain/video.ts';

export type { DurationPriceSnapshot } from '../domain/media-job.ts';

type Priced = { modelId: string; pricing: ModelPricing | undefined };

export function videoPriceSnapshot(model: Priced): DurationPriceSnapshot {
  const byResolution = model.pricing?.videoOutputSecondByResolutionNanos;
  if (byResolution && Object.keys(byResolution).length > 0) {
    return {
      kind: 'per-second-by-resolution',
      nanos: Object.fromEntries(Object.entries(byResolution).map(([resolution, nanos]) => [resolution, String(nanos)])),
    };
  }
  const nanos = model.pricing?.videoOutputSecondNanos;
  if (nanos === undefined)
    throw new GatewayError(
      'GW_MODEL_NOT_PRICED',
      `model "${model.modelId}" has no configured video pricing and cannot be used`,
    );
  return { kind: 'per-second', nanos: String(nanos) };
}

export function audioSecondPriceSnapshot(model: Priced): DurationPriceSnapshot {
  const nanos = model.pricing?.audioOutputSecondNanos;
  if (nanos === undefined)
    throw new GatewayError(
      'GW_MODEL_NOT_PRICED',
      `model "${model.modelId}" has no configured per-second audio pricing and cannot be used`,
    );
  return { kind: 'per-second', nanos: String(nanos) };
}

/**
 * The price of one second at `resolution`. Priced by resolution, a request that names none is priced at the
 * dearest listed (the provider picks), and one that names an unlisted resolution is refused before anything
 * is held.
 */
export function secondNanos(snapshot: DurationPriceSnapshot, resolution: string | undefined, modelId: string): bigint {
  if (snapshot.kind === 'per-second') return BigInt(snapshot.nanos);
  const listed = videoResolutions.filter((candidate) => snapshot.nanos[candidate] !== undefined);
  if (resolution === undefined)
    return listed
      .map((candidate) => BigInt(snapshot.nanos[candidate]!))
      .reduce((most, price) => (price > most ? price : most), 0n);
  const price = snapshot.nanos[resolution as VideoResolution];
  if (price === undefined)
    throw new GatewayError(
      'GW_PARAMETER_OUT_OF_RANGE',
      `model "${modelId}" has no price for resolution "${resolution}" (priced: ${listed.join(', ')})`,
    );
  return BigInt(price);
}

/** Whether the snapshot has a price for `resolution` (a delivered resolution outside the table is billed as held). */
export function pricesResolution(snapshot: DurationPriceSnapshot, resolution: string): boolean {
  return snapshot.kind === 'per-second' || snapshot.nanos[resolution as VideoResolution] !== undefined;
}

/**
 * `seconds` of output at `perSecondNanos`, to the millisecond (a part of a millisecond counts whole, once
 * below a microsecond, where binary fractions blur, is set aside), rounded up once to a whole nano-USD.
 */
export function durationCostNanos(perSecondNanos: bigint, seconds: number): bigint {
  const milliseconds = Math.ceil(Math.round(seconds * 1_000_000) / 1000);
  // A length too long to write in milliseconds (a provider's 1e308 seconds) is the longest there is, never none.
  const whole = milliseconds > 0 ? Math.min(milliseconds, Number.MAX_SAFE_INTEGER) : 0;
  return divideRoundingUp(perSecondNanos * BigInt(whole), 1000n);
}
