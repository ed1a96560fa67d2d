import { describe, expect, it } from 'vitest';
import { Reservation, type HeldCredit, type Settlement } from '../../src/billing/reservation.ts';
import type { LedgerSettlement, SettleInput } from '../../src/storage/ledger-repository.ts';

const terms = { id: 'hold-1', accountId: 'account-1', apiKeyId: 'key-1', amountNanos: 1_000n, modelId: 'model-1' };
const settlement: Settlement = { costNanos: 400n, modality: 'text', status: 'succeeded' };

/** A reservation whose credit records when the ledger was asked to settle it, in `events`. */
function reservationRecording(
  events: string[],
  settled?: () => Promise<LedgerSettlement>,
  newGenerationId: () => string = () => 'generation-1',
) {
  const inputs: Array<Omit<SettleInput, 'holdId'>> = [];
  const credit: HeldCredit = {
    settle: (input) => {
      events.push('ledger asked to settle');
      inputs.push(input);
      return settled?.() ?? Promise.resolve({ held: true, chargedNanos: input.claimNanos, shortUsage: undefined });
    },
    release: () => {
      events.push('credit given back');
    },
  };
  const failures: unknown[] = [];
  const reservation = new Reservation(terms, credit, {
    clock: () => new Date('2026-01-01T00:00:00Z'),
    newGenerationId,
    reportFailure: (error) => failures.push(error),
  });
  return { reservation, inputs, failures };
}

describe('a reservation settled in the background', () => {
  it('ends at once, and asks the ledger only after the promise callbacks under way have run', async () => {
    const events: string[] = [];
    const { reservation, inputs } = reservationRecording(events);
    // As a meter does at the end of an upstream body: the relay's own callbacks then write the answer's last bytes.
    await Promise.resolve().then(async () => {
      reservation.settleInBackground(settlement);
      events.push('settled in the background');
      expect(reservation.isEnded).toBe(true);
      await null;
      await null;
      events.push('answer written');
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(['settled in the background', 'answer written', 'ledger asked to settle']);
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({ claimNanos: 400n, costNanos: 400n });
    expect(reservation.recorded).toMatchObject({ generationId: 'generation-1', chargedNanos: 400n });
  });

  it('refuses a second end and a negative cost at the call, not later', () => {
    const { reservation } = reservationRecording([]);
    expect(() => reservation.settleInBackground({ ...settlement, costNanos: -1n })).toThrow(RangeError);
    expect(reservation.isEnded).toBe(false);
    reservation.settleInBackground(settlement);
    expect(() => reservation.settleInBackground(settlement)).toThrow(/already settled or released/);
  });

  it('reports a settlement storage refused, and still runs what waits for the end', async () => {
    const refusal = new Error('storage is down');
    const { reservation, failures } = reservationRecording([], () => Promise.reject(refusal));
    const ended = new Promise<void>((resolve) => reservation.whenEnded(resolve));
    reservation.settleInBackground(settlement);
    await ended;
    expect(failures).toEqual([refusal]);
    expect(reservation.recorded).toBeUndefined();
  });

  it('gives the credit back and ends when its record cannot be made, reporting why', async () => {
    const events: string[] = [];
    const broken = new Error('no generation id');
    const { reservation, inputs, failures } = reservationRecording(events, undefined, () => {
      throw broken;
    });
    const ended = new Promise<void>((resolve) => reservation.whenEnded(resolve));
    reservation.settleInBackground(settlement);
    await ended;
    expect(events).toEqual(['credit given back']);
    expect(inputs).toEqual([]);
    expect(failures).toEqual([broken]);
    expect(reservation.recorded).toBeUndefined();
  });
});
