/** Price of the benchmark's chat models (bench-chat, bench-slow-chat), USD per million tokens: the gateway's catalog and the billing check share it. */
export const chatPricing = { inputPerMTok: 0.15, outputPerMTok: 0.6 };

/** Nano-USD per token of a price in USD per million tokens (1e9 nanos / 1e6 tokens), exact for prices with at most three decimals. */
export const nanosPerToken = (usdPerMTok: number): bigint => BigInt(Math.round(usdPerMTok * 1000));
