import { GatewayError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { ModelPricing } from '../domain/model-pricing.ts';
import type { HoldOutcome, LedgerRepository } from '../storage/ledger-repository.ts';
import { requirePricing, tokenCost } from './pricing.ts';
import { Reservation, type ReservationContext } from './reservation.ts';

export { Reservation, type GenerationStatus, type Modality, type SettledGeneration, type Settlement } from './reservation.ts';

/** Reservations above about 9.2 million USD (a thousandth of PostgreSQL's bigint range) are refused outright, so held sums cannot overflow. */
const maxHoldNanos = 9_223_372_036_854_775n;

export interface ReserveInput {
  accountId: string;
  apiKeyId: string | null;
  amountNanos: bigint;
  modelId: string;
  /**
   * When the reservation does not fit: what would fit in the credits that are free (the smaller of the
   * account's available balance and the key's cap headroom), said in the request's own terms.
   */
  whatFits?: (freeNanos: bigint) => string | undefined;
}

/**
 * The one way any generation path touches money: estimate, then reserve; the reservation then settles or
 * releases itself. Reservations are admitted atomically against the account's available balance and
 * every cap of the key.
 */
export class CreditLedger {
  private readonly context: ReservationContext;

  constructor(
    private readonly ledger: LedgerRepository,
    private readonly instanceId: string,
    reportFailure: (error: unknown, reservation: Reservation) => void,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.context = { repository: ledger, clock, newGenerationId: () => newId('gen'), reportFailure };
  }

  /** Cost of token usage at the model's prices; estimates and reservations both come from here. */
  tokenCost(model: { modelId: string; pricing: ModelPricing | undefined }, usage: { inputTokens: number; outputTokens: number }): bigint {
    return tokenCost(requirePricing(model), usage);
  }

  async reserve(input: ReserveInput): Promise<Reservation> {
    // More than any balance can hold (a client asking for absurd output limits): refused before it reaches SQL.
    if (input.amountNanos > maxHoldNanos) throw await this.refusal('balance', input);
    const reservation = new Reservation(newId('hold'), input.accountId, input.apiKeyId, input.amountNanos, input.modelId, this.context);
    const outcome = await this.ledger.hold({
      holdId: reservation.id,
      accountId: input.accountId,
      apiKeyId: input.apiKeyId,
      amountNanos: input.amountNanos,
      instanceId: this.instanceId,
      now: this.clock(),
    });
    if (outcome !== 'ok') throw await this.refusal(outcome, input);
    return reservation;
  }

  private async refusal(outcome: Exclude<HoldOutcome, 'ok'>, input: ReserveInput): Promise<GatewayError> {
    const error = refusal(outcome, input.amountNanos);
    if (!input.whatFits || outcome === 'key_inactive') return error;
    // Only refusals pay for this read: admitted requests never wait for it.
    const free = await this.ledger.freeCredits(input.accountId, input.apiKeyId, this.clock());
    const fits = input.whatFits(free);
    return fits ? new GatewayError(error.code, `${error.message}; ${fits}`) : error;
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
