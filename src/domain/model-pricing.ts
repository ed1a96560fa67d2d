import { usdToNanos } from './money.ts';

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
}

/** The USD prices an operator writes in gateway.yaml. */
export interface PricingEntry {
  inputPerMTok?: number;
  outputPerMTok?: number;
  inputPerImage?: number;
  inputPerAudioSecond?: number;
  inputPerVideoSecond?: number;
  inputPerFile?: number;
}

export function modelPricingFrom(entry: PricingEntry | undefined): ModelPricing | undefined {
  if (!entry || Object.values(entry).every((price) => price === undefined)) return undefined;
  const nanos = (usd: number | undefined) => (usd === undefined ? undefined : usdToNanos(usd));
  const media = {
    imageNanos: nanos(entry.inputPerImage),
    audioSecondNanos: nanos(entry.inputPerAudioSecond),
    videoSecondNanos: nanos(entry.inputPerVideoSecond),
    fileNanos: nanos(entry.inputPerFile),
  };
  return {
    inputNanosPerMTok: nanos(entry.inputPerMTok),
    outputNanosPerMTok: nanos(entry.outputPerMTok),
    ...Object.fromEntries(Object.entries(media).filter(([, price]) => price !== undefined)),
  };
}
