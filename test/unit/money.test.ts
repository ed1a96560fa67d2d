import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { divideRoundingUp, nanosToUsd, usdText, usdToNanos } from '../../src/domain/money.ts';
import { tokenCost } from '../../src/billing/pricing.ts';
import { modelPricingFrom } from '../../src/domain/model-pricing.ts';

describe('money conversions', () => {
  it('converts decimal USD exactly, not through the binary float', () => {
    expect(usdToNanos(0.1)).toBe(100_000_000n);
    expect(usdToNanos(0.3)).toBe(300_000_000n);
    expect(usdToNanos(0.1) + usdToNanos(0.2)).toBe(usdToNanos(0.3));
    expect(usdToNanos(1e-9)).toBe(1n);
    expect(usdToNanos(-2.5)).toBe(-2_500_000_000n);
    expect(usdToNanos(0.0000000015)).toBe(2n);
    expect(usdToNanos(123456.789)).toBe(123_456_789_000_000n);
  });

  it('refuses amounts that are not finite or are out of range', () => {
    expect(() => usdToNanos(Number.NaN)).toThrow(RangeError);
    expect(() => usdToNanos(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => usdToNanos(2e9)).toThrow(RangeError);
  });

  it('round-trips every amount with at most nine decimals', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000_000_000, max: 1_000_000_000_000 }), (nanos) => {
        expect(usdToNanos(nanosToUsd(BigInt(nanos)))).toBe(BigInt(nanos));
      }),
    );
  });

  it('writes amounts for messages in decimals, exactly, at any size', () => {
    expect(usdText(1n)).toBe('0.000000001');
    expect(usdText(0n)).toBe('0');
    expect(usdText(50_000_000n)).toBe('0.05');
    expect(usdText(-2_500_000_000n)).toBe('-2.5');
    expect(usdText(1_000_000_000_000_000_001n)).toBe('1000000000.000000001');
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000_000_000, max: 1_000_000_000_000 }), (nanos) => {
        const text = usdText(BigInt(nanos));
        expect(text).toMatch(/^-?\d+(\.\d*[1-9])?$/);
        expect(usdToNanos(Number(text))).toBe(BigInt(nanos));
      }),
    );
  });

  it('rounds costs up to a whole nano', () => {
    expect(divideRoundingUp(10n, 3n)).toBe(4n);
    expect(divideRoundingUp(9n, 3n)).toBe(3n);
    expect(divideRoundingUp(0n, 3n)).toBe(0n);
    expect(divideRoundingUp(-10n, 3n)).toBe(-3n);
    expect(() => divideRoundingUp(1n, 0n)).toThrow(RangeError);
  });
});

describe('token pricing', () => {
  it('charges tokens at per-million prices, summed before rounding', () => {
    const pricing = modelPricingFrom({ inputPerMTok: 0.15, outputPerMTok: 0.6 })!;
    // 0.15 USD per million tokens is 150 nano-USD per token.
    expect(tokenCost(pricing, { inputTokens: 1, outputTokens: 0 })).toBe(150n);
    expect(tokenCost(pricing, { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBe(750_000_000n);
    expect(tokenCost(pricing, { inputTokens: 1234, outputTokens: 567 })).toBe(525_300n);
  });

  it('prices sub-cent-per-million rates exactly', () => {
    const pricing = modelPricingFrom({ inputPerMTok: 0.0375 })!;
    expect(pricing.inputNanosPerMTok).toBe(37_500_000n);
    expect(tokenCost(pricing, { inputTokens: 2_000_000, outputTokens: 10 })).toBe(75_000_000n);
    // 37.5 nano-USD per token: three tokens are 112.5 nanos, charged as 113.
    expect(tokenCost(pricing, { inputTokens: 3, outputTokens: 0 })).toBe(113n);
  });

  it('a model with neither price has no pricing', () => {
    expect(modelPricingFrom({})).toBeUndefined();
    expect(modelPricingFrom(undefined)).toBeUndefined();
  });
});
