import { describe, expect, it } from 'vitest';
import { durationCostNanos } from '../../src/billing/duration-pricing.ts';
import { referenceSecondsEstimate } from '../../src/billing/spoken-length.ts';

describe('prices per second of output', () => {
  it('charges to the millisecond, a started millisecond whole, rounded up once to a nano-USD', () => {
    expect(durationCostNanos(54_000_000n, 5.042)).toBe(272_268_000n);
    expect(durationCostNanos(54_000_000n, 5.0421)).toBe(272_322_000n);
    expect(durationCostNanos(1n, 0.001)).toBe(1n);
    expect(durationCostNanos(3n, 0.0005)).toBe(1n);
    expect(durationCostNanos(1_000_000n, 0)).toBe(0n);
    expect(durationCostNanos(1_000_000n, -3)).toBe(0n);
  });

  it('prices a length too long to count in milliseconds as the longest there is, never failing on it', () => {
    // 1e308 seconds, in milliseconds, is past every number: the largest whole number of them.
    expect(durationCostNanos(1_000n, 1e308)).toBe(BigInt(Number.MAX_SAFE_INTEGER));
  });

  it('does not turn the binary blur of a decimal length into another millisecond', () => {
    // 0.07 × 29 + 1 is 3.0300000000000002 in binary: still 3,030 ms.
    expect(durationCostNanos(4_000_000n, 0.07 * 29 + 1)).toBe(12_120_000n);
    expect(durationCostNanos(4_000_000n, 2.34)).toBe(9_360_000n);
  });
});

describe('the spoken length a generation with reference is held for', () => {
  it('counts letters and digits, CJK characters longer, skips the @Audio tags and punctuation, and adds a second', () => {
    expect(referenceSecondsEstimate('@Audio1 welcomes the listeners to the show.')).toBe(3.03);
    expect(referenceSecondsEstimate('你好世界')).toBe(2);
    expect(referenceSecondsEstimate('!!! ...')).toBe(1);
  });

  it('is shorter at a faster speech rate and longer at a slower one', () => {
    expect(referenceSecondsEstimate('你好世界', 100)).toBe(1.5);
    expect(referenceSecondsEstimate('你好世界', -50)).toBe(3);
  });
});
