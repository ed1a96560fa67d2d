import { usdToNanos } from './money.ts';
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
      entry.perVideoSecondByResolution && Object.fromEntries(Object.entries(entry.perVideoSecondByResolution).flatMap(([resolution, usd]) => (usd === undefined ? [] : [[resolution, usdToNanos(usd)]]))),
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
