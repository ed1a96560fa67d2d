import {
  usageRecord,
  type EndingHold,
  type GenerationRoute,
  type RecordedGeneration,
} from '../domain/generation-route.ts';
import type { LedgerSettlement, SettleInput } from '../storage/ledger-repository.ts';
import { applySettlement, settlementClaim, type SettlementClaim } from './settlement.ts';

/** The spec's usage-record modalities; embeddings are recorded as `text` (they are billed on input tokens). */
export type Modality = 'text' | 'image' | 'video' | 'audio';
export type GenerationStatus = 'succeeded' | 'failed' | 'aborted' | 'cancelled';

export interface Settlement {
  costNanos: bigint;
  modality: Modality;
  status: GenerationStatus;
  request?: unknown;
  usage?: unknown;
  /** How the generation reached its upstream (operators only). */
  route?: GenerationRoute;
  /** The price version of the model's prices the cost was reckoned at. */
  priceVersion?: string;
  /** The upstream read input the gateway was not sent: the cost is claimed past the hold (billing/settlement.ts). */
  unseenInput?: boolean;
}

export interface SettledGeneration {
  generationId: string;
  /**
   * What was charged: the cost, at most the reservation (but for the exceptions of billing/settlement.ts), and never
   * past the balance or a cap at settlement.
   */
  costNanos: bigint;
  /** False when the hold had already been reconciled away; the charge was still applied (within what was free). */
  holdWasOutstanding: boolean;
}

/** Where a reservation's credit is held: a hold row of its own, or a share of this process's lease. */
export interface HeldCredit {
  /**
   * Charges the claim within the ledger's floors and writes the record, sent again while storage refuses it for a
   * passing reason (billing/ledger-writes.ts), the credit held until then. When storage refuses it for good,
   * nothing is charged and the credit is given back as by a release.
   */
  settle(input: Omit<SettleInput, 'holdId'>): Promise<LedgerSettlement>;
  release(): Promise<void> | void;
}

/** What a reservation needs of the ledger besides its credit: the clock and where failures are told. */
export interface ReservationContext {
  clock: () => Date;
  newGenerationId: () => string;
  /** A settlement or release that storage refused for good (a settlement's hold was then released, if storage let it). */
  reportFailure: (error: unknown, reservation: Reservation) => void;
  /** A usage record was written: announced to the process (metrics, rate limits) once storage has it. */
  onRecorded?: (generation: RecordedGeneration) => void;
}

/**
 * Credits held for one request, and the one owner of that hold's life: it ends exactly once, settled or
 * released. A settlement follows the settlement rule (billing/settlement.ts): at most the amount held, whatever
 * usage an upstream reported (but for its exceptions), and never past the balance or a cap as they stand at
 * settlement; the record keeps the reported usage and says what was not charged. A settlement storage refuses for
 * now is sent again until written, the hold kept meanwhile; one refused for good releases the hold rather than
 * leave it until a restart.
 */
/** What was held, for whom and for which model: a reservation's terms. */
export interface HoldTerms {
  id: string;
  accountId: string;
  apiKeyId: string | null;
  amountNanos: bigint;
  modelId: string;
  /** When the generation began (ms since the epoch); now by default. */
  startedAt?: number;
}

export class Reservation implements EndingHold {
  private ended = false;
  private record: RecordedGeneration | undefined;
  private readonly onEnd: Array<() => void> = [];

  readonly id: string;
  readonly accountId: string;
  readonly apiKeyId: string | null;
  readonly amountNanos: bigint;
  readonly modelId: string;
  readonly startedAt: number;

  constructor(
    hold: HoldTerms,
    private readonly credit: HeldCredit,
    private readonly context: ReservationContext,
  ) {
    this.id = hold.id;
    this.accountId = hold.accountId;
    this.apiKeyId = hold.apiKeyId;
    this.amountNanos = hold.amountNanos;
    this.modelId = hold.modelId;
    this.startedAt = hold.startedAt ?? Date.now();
  }

  get isEnded(): boolean {
    return this.ended;
  }

  get recorded(): RecordedGeneration | undefined {
    return this.record;
  }

  /** Runs `callback` once the reservation has ended, however it ends. */
  whenEnded(callback: () => void): void {
    if (this.ended) callback();
    else this.onEnd.push(callback);
  }

  async settle(settlement: Settlement): Promise<SettledGeneration> {
    this.endWith(settlement);
    return this.settleEnded(settlement);
  }

  /**
   * Settles without waiting; failures are reported. The reservation ends now; the settlement starts on the next
   * tick, which, called from a promise callback (a meter ending with its upstream's body), comes after every
   * promise callback under way: the answer's last bytes, which those write, are not held up by the usage record
   * and the statement to storage. The hold covers the cost until the settlement replaces it, and the settlement
   * is in storage's queue before the next event (a client's next request) is read.
   */
  settleInBackground(settlement: Settlement): void {
    this.endWith(settlement);
    process.nextTick(() => this.settleEnded(settlement).catch(() => undefined));
  }

  private endWith(settlement: Settlement): void {
    if (settlement.costNanos < 0n) throw new RangeError('a cost cannot be negative');
    this.end();
  }

  private async settleEnded(settlement: Settlement): Promise<SettledGeneration> {
    let prepared: SettlementClaim & { record: RecordedGeneration; now: Date };
    try {
      const claim = settlementClaim({
        holdNanos: this.amountNanos,
        costNanos: settlement.costNanos,
        unseenInput: settlement.unseenInput === true,
      });
      prepared = { ...claim, record: this.recordOf(settlement, claim.claimNanos), now: this.context.clock() };
    } catch (error) {
      // Nothing is charged without its record: the credit is given back, as when storage refuses the settlement,
      // so that neither the hold nor what waits for the end is left behind.
      try {
        await this.credit.release();
      } catch (releaseError) {
        this.context.reportFailure(releaseError, this);
      }
      this.context.reportFailure(error, this);
      this.finish();
      throw error;
    }
    const { claimNanos, costNanos, record, now } = prepared;
    const { generationId } = record;
    let settled: LedgerSettlement;
    try {
      settled = await this.credit.settle({ claimNanos, costNanos, now, generation: record });
    } catch (error) {
      this.context.reportFailure(error, this);
      this.finish();
      throw error;
    }
    // The log line and metrics carry the record as written.
    applySettlement(record, settled);
    // After the record is written, and outside the storage failure path: a log line or metric never makes a
    // written record look refused. Before the end callbacks, so that those waiting for the end find the record.
    this.record = record;
    try {
      this.context.onRecorded?.(record);
    } finally {
      this.finish();
    }
    return { generationId, costNanos: settled.chargedNanos, holdWasOutstanding: settled.held };
  }

  private recordOf(settlement: Settlement, claimNanos: bigint): RecordedGeneration {
    return usageRecord({
      generationId: this.context.newGenerationId(),
      accountId: this.accountId,
      apiKeyId: this.apiKeyId,
      modality: settlement.modality,
      model: this.modelId,
      status: settlement.status,
      request: settlement.request,
      usage: settlement.usage,
      route: settlement.route,
      ...(settlement.priceVersion === undefined ? {} : { priceVersion: settlement.priceVersion }),
      startedAt: this.startedAt,
      endedAt: Date.now(),
      claimNanos,
    });
  }

  /** Gives the reservation back without charging or recording anything; storage failing to do so is reported. */
  async release(): Promise<void> {
    this.end();
    try {
      await this.credit.release();
    } catch (error) {
      this.context.reportFailure(error, this);
      throw error;
    } finally {
      this.finish();
    }
  }

  private end(): void {
    if (this.ended) throw new Error(`hold ${this.id} was already settled or released`);
    this.ended = true;
  }

  private finish(): void {
    for (const callback of this.onEnd.splice(0)) callback();
  }
}
