import { GatewayError } from './errors.ts';

/**
 * Money is integer nano-USD (1 USD = 1e9 nanos) everywhere inside the gateway.
 * Conversion to and from a USD `number` happens only at the edges (HTTP, config, CLI).
 */
export type Nanos = bigint;

export const NANOS_PER_USD = 1_000_000_000n;

/** Largest USD amount accepted anywhere a client or operator types a number of dollars. */
export const MAX_USD_AMOUNT = 1_000_000_000;

/**
 * Converts a USD amount to nanos through its decimal representation, so 0.1 becomes exactly
 * 100_000_000 and not the binary float's neighbour; anything below a nano is rounded half away from zero.
 */
export function usdToNanos(usd: number): Nanos {
  if (!Number.isFinite(usd)) throw new RangeError(`not a finite USD amount: ${usd}`);
  if (Math.abs(usd) > MAX_USD_AMOUNT) throw new RangeError(`USD amount out of range: ${usd}`);
  const negative = usd < 0;
  const [whole = '0', fraction = ''] = Math.abs(usd).toFixed(10).split('.');
  const nineDigits = fraction.slice(0, 9);
  const roundUp = (fraction[9] ?? '0') >= '5';
  let nanos = BigInt(whole) * NANOS_PER_USD + BigInt(nineDigits || '0') + (roundUp ? 1n : 0n);
  if (negative) nanos = -nanos;
  return nanos;
}

/** One nano-USD, the smallest amount the ledger holds. */
export const ONE_NANO_USD = 1e-9;

/** Whether a USD amount is a whole number of nanos (at most nine decimals), which the ledger holds exactly. */
export function isWholeNanoUsd(usd: number): boolean {
  return Number(usdToNanos(usd)) / 1e9 === usd;
}

/**
 * A USD amount a client or operator typed (a cap, a grant), in nanos. A non-zero amount below one nano would
 * be stored as 0 without a word, so it is refused with a 400 naming `field`; so is 0 where it means nothing
 * (a credit grant), while a cap of 0 is a real cap ("nothing may be spent").
 */
export function typedUsdToNanos(usd: number, field: string, zero: 'allowed' | 'refused'): Nanos {
  if (usd === 0) {
    if (zero === 'allowed') return 0n;
    throw new GatewayError('GW_VALIDATION', `${field} must not be 0`);
  }
  if (Math.abs(usd) < ONE_NANO_USD) {
    throw new GatewayError('GW_VALIDATION', `${field} is smaller than one nano-USD (0.000000001): it cannot be stored`);
  }
  // Rounded, a finer amount would be stored as another one than was typed, without a word.
  if (!isWholeNanoUsd(usd))
    throw new GatewayError('GW_VALIDATION', `${field}: ${usd} USD is not a whole number of nano-USD (0.000000001)`);
  return usdToNanos(usd);
}

/** USD number for JSON output; exact for any amount below 9 million USD, which covers every balance we store. */
export function nanosToUsd(nanos: Nanos): number {
  return Number(nanos) / 1e9;
}

/**
 * An amount of nanos as people write USD, for messages: exact, without trailing zeros, never in exponent form
 * (`nanosToUsd(1n)` prints as `1e-9`).
 */
export function usdText(nanos: Nanos): string {
  const sign = nanos < 0n ? '-' : '';
  const magnitude = nanos < 0n ? -nanos : nanos;
  const fraction = (magnitude % NANOS_PER_USD).toString().padStart(9, '0').replace(/0+$/, '');
  return `${sign}${magnitude / NANOS_PER_USD}${fraction === '' ? '' : `.${fraction}`}`;
}

/** Integer division rounding toward positive infinity, for costs: a fraction of a nano is charged as one. */
export function divideRoundingUp(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  if (numerator <= 0n) return -(-numerator / denominator);
  return (numerator + denominator - 1n) / denominator;
}
