import { describe, expect, it } from 'vitest';
import { deleteInBatches, retryDelayMs } from '../../src/jobs/webhook-deliveries.ts';

/** A table of `rows` rows from which each call deletes at most the batch asked for. */
function table(rows: number) {
  let left = rows;
  const calls: number[] = [];
  const deleteBatch = async (batch: number) => {
    const deleted = Math.min(batch, left);
    left -= deleted;
    calls.push(deleted);
    return deleted;
  };
  return { deleteBatch, calls, left: () => left };
}

describe('the delivery log sweep', () => {
  it('deletes batch after batch while each one is whole, then stops at the first one that is not', async () => {
    const rows = table(2500);
    expect(await deleteInBatches(rows.deleteBatch, { batch: 1000, maxBatches: 100 })).toBe(2500);
    expect(rows.calls).toEqual([1000, 1000, 500]);
  });

  it('stops after its most batches, leaving the rest to the next sweep', async () => {
    const rows = table(10_000);
    expect(await deleteInBatches(rows.deleteBatch, { batch: 1000, maxBatches: 3 })).toBe(3000);
    expect(rows.left()).toBe(7000);
  });

  it('asks once when nothing is due', async () => {
    const rows = table(0);
    expect(await deleteInBatches(rows.deleteBatch, { batch: 1000, maxBatches: 100 })).toBe(0);
    expect(rows.calls).toEqual([0]);
  });
});

describe('the delivery retry delay', () => {
  it('doubles from the base at each attempt, stops at a day, and waits longer when the receiver asks', () => {
    expect([1, 2, 3].map((attempt) => retryDelayMs(1000, attempt, undefined))).toEqual([1000, 2000, 4000]);
    // The largest base the configuration takes (an hour) reaches a day, not 2^16 hours.
    expect(retryDelayMs(3_600_000, 30, undefined)).toBe(86_400_000);
    expect(retryDelayMs(1000, 1, 30_000)).toBe(30_000);
  });
});
