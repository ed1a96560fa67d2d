import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maxRecordedCostNanos, overrunBoundNanos, settlementClaim } from '../../src/billing/settlement.ts';

const nanos = (max: bigint) => fc.bigInt({ min: 0n, max });

describe('the settlement rule', () => {
  it('claims the cost when the hold covers it, and the hold when the cost is larger', () => {
    expect(settlementClaim({ holdNanos: 100n, costNanos: 40n })).toEqual({ claimNanos: 40n, costNanos: 40n });
    expect(settlementClaim({ holdNanos: 100n, costNanos: 400n })).toEqual({ claimNanos: 100n, costNanos: 400n });
  });

  it('claims the whole cost, past the hold, of a call whose upstream read input the gateway was not sent', () => {
    expect(settlementClaim({ holdNanos: 100n, costNanos: 400n, unseenInput: true })).toEqual({
      claimNanos: 400n,
      costNanos: 400n,
    });
    expect(settlementClaim({ holdNanos: 100n, costNanos: 40n, unseenInput: true })).toEqual({
      claimNanos: 40n,
      costNanos: 40n,
    });
    const absurd = 10n ** 30n;
    expect(settlementClaim({ holdNanos: 100n, costNanos: absurd, unseenInput: true })).toEqual({
      claimNanos: maxRecordedCostNanos,
      costNanos: maxRecordedCostNanos,
    });
  });

  it('records a cost past what a record holds (an upstream reporting 1e15 tokens) as the most it holds', () => {
    const absurd = 10n ** 15n * 20_000_000_000n;
    expect(settlementClaim({ holdNanos: 100n, costNanos: absurd })).toEqual({
      claimNanos: 100n,
      costNanos: maxRecordedCostNanos,
    });
    expect(maxRecordedCostNanos).toBe(9_223_372_036_854_775_807n);
  });

  it('charges a delivered duration past the hold only up to what was measured and the overrun bound', () => {
    const delivered = (measuredCostNanos: bigint | undefined) => ({ measuredCostNanos, maxOverrun: 1.1 });
    // The provider claims 100,000 s of a file the gateway measured at 1.28 s, held for 0.904 s (at 0.01 USD/s).
    const hold = 9_040_000n;
    const claimed = 1_000_000_000_000n;
    expect(settlementClaim({ holdNanos: hold, costNanos: claimed, deliveredDuration: delivered(12_800_000n) })).toEqual(
      { claimNanos: 9_944_000n, costNanos: claimed },
    );
    // Measured within the bound: the measured length is the ceiling.
    expect(settlementClaim({ holdNanos: hold, costNanos: claimed, deliveredDuration: delivered(9_500_000n) })).toEqual({
      claimNanos: 9_500_000n,
      costNanos: claimed,
    });
    // Nothing measured (the file could not be read): the hold.
    expect(settlementClaim({ holdNanos: hold, costNanos: claimed, deliveredDuration: delivered(undefined) })).toEqual({
      claimNanos: hold,
      costNanos: claimed,
    });
    // A provider billing less than measured is charged what it billed.
    expect(
      settlementClaim({ holdNanos: hold, costNanos: 9_100_000n, deliveredDuration: delivered(12_800_000n) }),
    ).toEqual({ claimNanos: 9_100_000n, costNanos: 9_100_000n });
  });

  it('never claims past the hold outside the bounded media exception, nor past the cost; what is not claimed is the rest of the cost', () => {
    fc.assert(
      fc.property(
        nanos(10n ** 15n),
        nanos(10n ** 16n),
        fc.option(
          fc.record({
            measuredCostNanos: fc.option(nanos(10n ** 16n), { nil: undefined }),
            maxOverrun: fc.double({ min: 1, max: 10, noNaN: true }),
          }),
          { nil: undefined },
        ),
        (holdNanos, costNanos, deliveredDuration) => {
          const { claimNanos, costNanos: cost } = settlementClaim({
            holdNanos,
            costNanos,
            ...(deliveredDuration ? { deliveredDuration } : {}),
          });
          expect(cost).toBe(costNanos);
          expect(claimNanos >= 0n && claimNanos <= costNanos).toBe(true);
          const measured = deliveredDuration?.measuredCostNanos;
          if (measured === undefined || deliveredDuration === undefined) {
            expect(claimNanos).toBe(costNanos < holdNanos ? costNanos : holdNanos);
          } else {
            const bound = overrunBoundNanos(holdNanos, deliveredDuration.maxOverrun);
            if (claimNanos > holdNanos) {
              expect(claimNanos <= measured && claimNanos <= bound).toBe(true);
            }
            // The exception never lowers a claim the hold covers.
            expect(claimNanos >= (costNanos < holdNanos ? costNanos : holdNanos)).toBe(true);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
