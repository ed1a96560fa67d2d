import { usdToNanos } from './money.ts';

/** Prices of one model in integer nano-USD per million tokens (exact for any price with up to 9 decimals of a dollar per token-million). */
export interface ModelPricing {
  inputNanosPerMTok: bigint | undefined;
  outputNanosPerMTok: bigint | undefined;
}

/** The USD prices an operator writes in gateway.yaml. */
export interface PricingEntry {
  inputPerMTok?: number;
  outputPerMTok?: number;
}

export function modelPricingFrom(entry: PricingEntry | undefined): ModelPricing | undefined {
  if (!entry || (entry.inputPerMTok === undefined && entry.outputPerMTok === undefined)) return undefined;
  const perMTok = (usd: number | undefined) => (usd === undefined ? undefined : usdToNanos(usd));
  return { inputNanosPerMTok: perMTok(entry.inputPerMTok), outputNanosPerMTok: perMTok(entry.outputPerMTok) };
}
