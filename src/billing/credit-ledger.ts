import { GatewayError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { ModelPricing } from '../domain/model-pricing.ts';
import type { HoldOutcome, LedgerRepository } from '../storage/ledger-repository.ts';
import { requirePricing, tokenCost } from './pricing.ts';

/** The spec's usage-record modalities; embeddings are recorded as `text` (they are billed on input tokens). */
export type Modality = 'text' | 'image' | 'video' | 'audio';
export type GenerationStatus = 'succeeded' | 'failed' | 'aborted' | 'cancelled';

/** Credits reserved for one request until it settles or is released. */
export interface Hold {
  readonly id: string;
  readonly accountId: string;
  readonly apiKeyId: string | null;
  readonly amountNanos: bigint;
  readonly modelId: string;
  readonly startedAt: number;
}

export interface Settlement {
  costNanos: bigint;
  modality: Modality;
  status: GenerationStatus;
  request?: unknown;
  usage?: unknown;
}

export interface SettledGeneration {
  generationId: string;
  costNanos: bigint;
  /** False when the hold had already been reconciled away; the charge was still applied. */
  holdWasOutstanding: boolean;
}

/** Reservations above about 9.2 million USD (a thousandth of PostgreSQL's bigint range) are refused outright, so held sums cannot overflow. */
const maxHoldNanos = 9_223_372_036_854_775n;

/**
 * The one way any generation path touches money: estimate, hold, settle, release. Holds are admitted
 * atomically against the account's available balance and every cap of the key.
 */
export class CreditLedger {
  /** Holds already settled or released here: a second settlement would charge the usage twice. */
  private readonly ended = new WeakSet<Hold>();

  constructor(
    private readonly ledger: LedgerRepository,
    private readonly instanceId: string,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Cost of token usage at the model's prices; estimates and reservations both come from here. */
  tokenCost(model: { modelId: string; pricing: ModelPricing | undefined }, usage: { inputTokens: number; outputTokens: number }): bigint {
    return tokenCost(requirePricing(model), usage);
  }

  async hold(input: { accountId: string; apiKeyId: string | null; amountNanos: bigint; modelId: string }): Promise<Hold> {
    // More than any balance can hold (a client asking for absurd output limits): refused before it reaches SQL.
    if (input.amountNanos > maxHoldNanos) throw refusal('balance', input.amountNanos);
    const hold: Hold = { id: newId('hold'), ...input, startedAt: Date.now() };
    const outcome = await this.ledger.hold({
      holdId: hold.id,
      accountId: input.accountId,
      apiKeyId: input.apiKeyId,
      amountNanos: input.amountNanos,
      instanceId: this.instanceId,
      now: this.clock(),
    });
    if (outcome !== 'ok') throw refusal(outcome, input.amountNanos);
    return hold;
  }

  async settle(hold: Hold, settlement: Settlement): Promise<SettledGeneration> {
    if (settlement.costNanos < 0n) throw new RangeError('a cost cannot be negative');
    this.end(hold);
    const generationId = newId('gen');
    const holdWasOutstanding = await this.ledger.settle({
      holdId: hold.id,
      accountId: hold.accountId,
      apiKeyId: hold.apiKeyId,
      costNanos: settlement.costNanos,
      now: this.clock(),
      generation: {
        id: generationId,
        modality: settlement.modality,
        model: hold.modelId,
        status: settlement.status,
        request: settlement.request,
        usage: settlement.usage,
        durationMs: Date.now() - hold.startedAt,
      },
    }).catch((error: unknown) => {
      // Nothing was written: the hold may still be released (or settled) by the caller.
      this.ended.delete(hold);
      throw error;
    });
    return { generationId, costNanos: settlement.costNanos, holdWasOutstanding };
  }

  /** Gives the reservation back without charging or recording anything. */
  async release(hold: Hold): Promise<void> {
    this.end(hold);
    await this.ledger.release(hold.id).catch((error: unknown) => {
      this.ended.delete(hold);
      throw error;
    });
  }

  private end(hold: Hold): void {
    if (this.ended.has(hold)) throw new Error(`hold ${hold.id} was already settled or released`);
    this.ended.add(hold);
  }
}

function refusal(outcome: Exclude<HoldOutcome, 'ok'>, amountNanos: bigint): GatewayError {
  switch (outcome) {
    case 'balance':
      return new GatewayError(
        'GW_INSUFFICIENT_BALANCE',
        `insufficient credit balance: this request needs ${nanosToUsd(amountNanos)} USD of available credits`,
      );
    case 'key_inactive':
      return new GatewayError('GW_INVALID_CREDENTIALS', 'the API key is revoked or disabled');
    default:
      return new GatewayError('GW_SPEND_CAP_REACHED', `the API key's ${outcome} spend limit is reached`);
  }
}
