import { nanosToUsd, usdToNanos } from './money.ts';
import type { VideoResolution } from './video.ts';

/**
 * Prices of one model in integer nano-USD: per million tokens (exact for any price with up to 9 decimals of
 * a dollar per token-million), and for embedding inputs per image, per second of audio or video, per file.
 */
export interface ModelPricing {
  inputNanosPerMTok: bigint | undefined;
  outputNanosPerMTok: bigint | undefined;
  imageNanos?: bigint;
  audioSecondNanos?: bigint;
  videoSecondNanos?: bigint;
  fileNanos?: bigint;
  /** Image generation: per output image, or per output image at each quality (the highest held for `auto`). */
  outputImageNanos?: bigint;
  outputImageByQualityNanos?: Readonly<Record<'low' | 'medium' | 'high', bigint>>;
  /** Text-to-speech: per million characters of the text spoken. */
  characterNanosPerM?: bigint;
  /** Video generation: per output second, or per output second at each resolution. */
  videoOutputSecondNanos?: bigint;
  videoOutputSecondByResolutionNanos?: Readonly<Partial<Record<VideoResolution, bigint>>>;
  /** Generation with reference (audio): per output second. */
  audioOutputSecondNanos?: bigint;
}

/** The USD prices an operator writes in gateway.yaml. */
export interface PricingEntry {
  inputPerMTok?: number;
  outputPerMTok?: number;
  inputPerImage?: number;
  inputPerAudioSecond?: number;
  inputPerVideoSecond?: number;
  inputPerFile?: number;
  perImage?: number;
  perImageByQuality?: { low: number; medium: number; high: number };
  perMCharacters?: number;
  perVideoSecond?: number;
  perVideoSecondByResolution?: Partial<Record<VideoResolution, number>>;
  perAudioSecond?: number;
}

/** The pricing objects of the compatibility model lists, one per kind of output (spec, Model). */
export type PricingKind = 'chatPricing' | 'embeddingPricing' | 'imagePricing' | 'videoPricing' | 'audioPricing';

/** The prices each pricing object shows: those its models are billed by. */
export const pricingFieldsByKind = {
  chatPricing: [
    'inputPerMTok',
    'outputPerMTok',
    'inputPerImage',
    'inputPerAudioSecond',
    'inputPerVideoSecond',
    'inputPerFile',
  ],
  embeddingPricing: ['inputPerMTok', 'inputPerImage', 'inputPerAudioSecond', 'inputPerVideoSecond', 'inputPerFile'],
  imagePricing: ['perImage', 'perImageByQuality'],
  videoPricing: ['perVideoSecond', 'perVideoSecondByResolution'],
  audioPricing: ['perMCharacters', 'perAudioSecond'],
} as const satisfies Record<PricingKind, readonly (keyof PricingEntry)[]>;

export function modelPricingFrom(entry: PricingEntry | undefined): ModelPricing | undefined {
  if (!entry || Object.values(entry).every((price) => price === undefined)) return undefined;
  const nanos = (usd: number | undefined) => (usd === undefined ? undefined : usdToNanos(usd));
  const media = {
    imageNanos: nanos(entry.inputPerImage),
    audioSecondNanos: nanos(entry.inputPerAudioSecond),
    videoSecondNanos: nanos(entry.inputPerVideoSecond),
    fileNanos: nanos(entry.inputPerFile),
    outputImageNanos: nanos(entry.perImage),
    characterNanosPerM: nanos(entry.perMCharacters),
    videoOutputSecondNanos: nanos(entry.perVideoSecond),
    audioOutputSecondNanos: nanos(entry.perAudioSecond),
    videoOutputSecondByResolutionNanos:
      entry.perVideoSecondByResolution &&
      Object.fromEntries(
        Object.entries(entry.perVideoSecondByResolution).flatMap(([resolution, usd]) =>
          usd === undefined ? [] : [[resolution, usdToNanos(usd)]],
        ),
      ),
    outputImageByQualityNanos: entry.perImageByQuality && {
      low: usdToNanos(entry.perImageByQuality.low),
      medium: usdToNanos(entry.perImageByQuality.medium),
      high: usdToNanos(entry.perImageByQuality.high),
    },
  };
  return {
    inputNanosPerMTok: nanos(entry.inputPerMTok),
    outputNanosPerMTok: nanos(entry.outputPerMTok),
    ...Object.fromEntries(Object.entries(media).filter(([, price]) => price !== undefined)),
  };
}

/** The inverse of `modelPricingFrom`: a model's prices in USD under the names gateway.yaml gives them, for display. */
export function pricesInUsd(pricing: ModelPricing): PricingEntry {
  const usd = (nanos: bigint | undefined) => (nanos === undefined ? undefined : nanosToUsd(nanos));
  const byQuality = pricing.outputImageByQualityNanos;
  const byResolution = pricing.videoOutputSecondByResolutionNanos;
  const entry: PricingEntry = {
    inputPerMTok: usd(pricing.inputNanosPerMTok),
    outputPerMTok: usd(pricing.outputNanosPerMTok),
    inputPerImage: usd(pricing.imageNanos),
    inputPerAudioSecond: usd(pricing.audioSecondNanos),
    inputPerVideoSecond: usd(pricing.videoSecondNanos),
    inputPerFile: usd(pricing.fileNanos),
    perImage: usd(pricing.outputImageNanos),
    perImageByQuality: byQuality && {
      low: nanosToUsd(byQuality.low),
      medium: nanosToUsd(byQuality.medium),
      high: nanosToUsd(byQuality.high),
    },
    perMCharacters: usd(pricing.characterNanosPerM),
    perVideoSecond: usd(pricing.videoOutputSecondNanos),
    perVideoSecondByResolution:
      byResolution &&
      Object.fromEntries(
        Object.entries(byResolution).flatMap(([resolution, nanos]) =>
          nanos === undefined ? [] : [[resolution, nanosToUsd(nanos)]],
        ),
      ),
    perAudioSecond: usd(pricing.audioOutputSecondNanos),
  };
  return Object.fromEntries(Object.entries(entry).filter(([, price]) => price !== undefined)) as PricingEntry;
}
