import type { RecordedGeneration } from '../domain/generation-route.ts';
import type { LedgerSettlement } from '../storage/ledger-repository.ts';

/** What a settlement is decided from. */
export interface SettlementTerms {
  /** What was held for the generation. */
  holdNanos: bigint;
  /** What the generation cost, from the usage it reported (or the gateway counted). */
  costNanos: bigint;
  /** Only for media billed on the seconds delivered (video, audio made with reference): the first exception. */
  deliveredDuration?: DeliveredDuration;
  /**
   * The upstream read input the gateway was not sent (a Responses call to OpenAI itself naming a stored response,
   * conversation or prompt), which no hold bounds: the second exception, its whole cost claimed past the hold.
   */
  unseenInput?: boolean;
}

/**
 * A delivery longer than the asked length (for which the hold was the estimate) is charged past the hold, but
 * never for more seconds than the gateway itself measured in the delivered file, whatever the provider says it
 * billed, and never past `maxOverrun` times the hold (`limits.maxDurationOverrun`: held duration at held prices).
 */
export interface DeliveredDuration {
  /** The cost of the seconds read from the delivered file's own headers; undefined when they could not be read. */
  measuredCostNanos: bigint | undefined;
  maxOverrun: number;
}

export interface SettlementClaim {
  /** What the ledger is asked to charge. */
  claimNanos: bigint;
  /** What the generation cost, at most `maxRecordedCostNanos`: the record says how much of it was not charged. */
  costNanos: bigint;
}

/**
 * The largest cost a usage record holds (PostgreSQL's bigint of nano-USD, some 9.2 billion USD). An upstream
 * may report any usage: a cost past this is recorded as this, never left unwritten (the statement would fail on
 * it, and with it the charge and the record).
 */
export const maxRecordedCostNanos = 2n ** 63n - 1n;

/**
 * The one settlement rule of requests and media jobs alike. This decides what a settlement asks the ledger to
 * charge (its claim): at most the hold, but for the two exceptions of `SettlementTerms`. The ledger's settlement
 * statement then applies the floors as they stand at that moment (what is still held, what is free beyond every
 * other hold for a claim past its own, the balance, and every cap of the key, a lowered one included) and may
 * charge less.
 * Whatever is not charged of the cost, above the claim or refused by a floor, is written on the usage record
 * as `unchargedUsdCost`. Of the hold, what the charge does not take is released: hold = charged + released
 * + (the part of the hold a floor refused), to the nano.
 */
export function settlementClaim(terms: SettlementTerms): SettlementClaim {
  const { holdNanos, deliveredDuration } = terms;
  if (holdNanos < 0n || terms.costNanos < 0n) throw new RangeError('a hold or a cost cannot be negative');
  const costNanos = terms.costNanos < maxRecordedCostNanos ? terms.costNanos : maxRecordedCostNanos;
  // The ledger charges what lies past the hold only out of what the account and the key have free then.
  if (terms.unseenInput) return { claimNanos: costNanos, costNanos };
  let ceiling = holdNanos;
  if (deliveredDuration?.measuredCostNanos !== undefined) {
    const measured = deliveredDuration.measuredCostNanos;
    const bound = overrunBoundNanos(holdNanos, deliveredDuration.maxOverrun);
    const beyond = measured < bound ? measured : bound;
    if (beyond > ceiling) ceiling = beyond;
  }
  return { claimNanos: costNanos < ceiling ? costNanos : ceiling, costNanos };
}

/** `maxOverrun` times the hold, to the thousandth of the factor, rounded down to a nano. */
export function overrunBoundNanos(holdNanos: bigint, maxOverrun: number): bigint {
  return (holdNanos * BigInt(Math.round(maxOverrun * 1000))) / 1000n;
}

/** The record as the ledger wrote it: its charge, and its usage when less than the cost was charged. */
export function applySettlement(record: RecordedGeneration, settled: LedgerSettlement): void {
  record.chargedNanos = settled.chargedNanos;
  if (settled.shortUsage !== undefined) record.usage = settled.shortUsage;
}
