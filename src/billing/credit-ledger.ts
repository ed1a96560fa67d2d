import { GatewayError } from '../domain/errors.ts';
import type { RecordedGeneration } from '../domain/generation-route.ts';
import { newId } from '../domain/ids.ts';
import { usdText } from '../domain/money.ts';
import type { ModelPricing } from '../domain/model-pricing.ts';
import type { StorageEvent } from '../storage/storage-events.ts';
import type { HoldOutcome, LedgerRepository, LedgerSettlement, SettleInput } from '../storage/ledger-repository.ts';
import { CreditLeases, type LeaseOptions } from './credit-leases.ts';
import { LedgerWrites, type RefusedWrite } from './ledger-writes.ts';
import { PendingSettlements } from './pending-settlements.ts';
import { secondsUntilWindowEnds } from '../domain/spend-windows.ts';
import { requirePricing, tokenCost } from './pricing.ts';
import { Reservation, type HeldCredit, type ReservationContext } from './reservation.ts';

export {
  Reservation,
  type GenerationStatus,
  type Modality,
  type SettledGeneration,
  type Settlement,
} from './reservation.ts';

/** Reservations above about 9.2 million USD (a thousandth of PostgreSQL's bigint range) are refused outright, so held sums cannot overflow. */
const maxHoldNanos = 9_223_372_036_854_775n;

export interface ReserveInput {
  accountId: string;
  apiKeyId: string | null;
  amountNanos: bigint;
  modelId: string;
  /**
   * When the reservation does not fit: what the credits that are free (the smaller of the account's available
   * balance and the key's cap headroom) cover, said in the request's own terms after how much they are
   * (`which covers an output limit of at most 466 tokens`).
   */
  whatFits?: (freeNanos: bigint) => string | undefined;
}

export interface CreditLedgerOptions {
  /** Leases of credit admitted in memory; without, each reservation is a hold row of its own. */
  leases?: Omit<LeaseOptions, 'horizonMs'>;
  /** Storage refused a settlement or a release for good (the credit of a refused settlement was given back). */
  reportFailure: (error: unknown, reservation: Reservation) => void;
  /** Storage refused a settlement or a release for now: it is sent again, its hold kept meanwhile. */
  reportRefusedWrite?: (error: unknown, next: RefusedWrite) => void;
  /** The waits before a refused settlement or release is sent again, before it is left for the hold reconciler. */
  writeRetryMs?: readonly number[];
  /** Storage refused to give back leased credit; it stays held until this process stops or is swept. */
  reportLeaseFailure: (error: unknown) => void;
  /** A usage record was written: announced once storage has it. */
  onRecorded?: (generation: RecordedGeneration) => void;
  /**
   * How long a read of an account's money waits for this process's settlements of it still being written
   * (absent: 0, the read answers with what is written).
   */
  settlementWaitMs?: number;
  clock?: () => Date;
}

/** Extensions cover this long of a lease's recent admissions. */
const leaseHorizonMs = 1_000;

/**
 * The one way any generation path touches money: estimate, then reserve; the reservation then settles or
 * releases itself. Reservations are admitted against the account's available balance and every cap of
 * the key: out of this process's credit leases (see `CreditLeases`), or each as an atomic hold.
 */
export class CreditLedger {
  private readonly context: ReservationContext;
  private readonly clock: () => Date;
  private readonly leases: CreditLeases | undefined;
  private readonly askPeers: ((accountId: string) => Promise<void>) | undefined;
  private readonly pending: PendingSettlements;
  private readonly writes: LedgerWrites;

  constructor(
    private readonly ledger: LedgerRepository,
    private readonly instanceId: string,
    options: CreditLedgerOptions,
  ) {
    this.clock = options.clock ?? (() => new Date());
    this.context = {
      clock: this.clock,
      newGenerationId: () => newId('gen'),
      reportFailure: options.reportFailure,
      ...(options.onRecorded ? { onRecorded: options.onRecorded } : {}),
    };
    this.askPeers = options.leases?.askPeers;
    this.pending = new PendingSettlements(options.settlementWaitMs ?? 0);
    this.writes = new LedgerWrites({
      onRefused: options.reportRefusedWrite ?? (() => undefined),
      ...(options.writeRetryMs ? { retryMs: options.writeRetryMs } : {}),
    });
    this.leases =
      options.leases && options.leases.maxLeaseNanos > 0n
        ? new CreditLeases({
            repository: ledger,
            writes: this.writes,
            instanceId,
            options: { ...options.leases, horizonMs: leaseHorizonMs },
            clock: this.clock,
            onError: options.reportLeaseFailure,
          })
        : undefined;
  }

  /**
   * A key whose state or caps changed stops admitting out of credit leased under the old ones; an account
   * whose request another process refused, or whose credit an operator took away, gets its unused leased
   * credit back.
   */
  handleEvent(event: StorageEvent): void {
    if (event.type === 'key-changed') this.leases?.retireKey(event.keyId);
    else if (event.type === 'give-back-credit') void this.leases?.giveBackAccount(event.accountId);
  }

  /** Gives back at once the leased credit no request is using (graceful stop; reading exact held sums). */
  async giveBackUnused(): Promise<void> {
    await this.leases?.giveBackUnused();
  }

  /**
   * Gives back the account's unused leased credit, of this process and (through `askPeers`) of the others:
   * a hold row of its own (a media job) refused for credit that leases keep for quick requests asks first.
   */
  async freeLeasedCredit(accountId: string): Promise<void> {
    if (!this.leases) return;
    await this.leases.giveBackAccount(accountId);
    await this.askPeers?.(accountId);
  }

  /**
   * Admission of work that holds nothing, or comes before the request that holds is read (a prompt's tokens
   * counted, a large body parsed): the balance above zero and no cap of the key reached.
   */
  admitsWork({ accountId, apiKeyId }: { accountId: string; apiKeyId: string | null }): Promise<void> {
    return this.admits({ accountId, apiKeyId, amountNanos: 1n });
  }

  /**
   * Admission ahead of a hold, for a request whose checks cost more than a key lookup (looking up the hosts of
   * its reference URLs): refused as its hold would be when the balance or a cap leaves less than `amountNanos`
   * now. A read without locks; the hold that follows stays the real check.
   */
  async admits({ accountId, apiKeyId, amountNanos }: Pick<ReserveInput, 'accountId' | 'apiKeyId' | 'amountNanos'>) {
    const short = async () =>
      (await this.ledger.headroom(accountId, apiKeyId, this.clock())).find(({ nanos }) => nanos < amountNanos);
    let refusing = await short();
    if (refusing) {
      // As a job's hold does: credit leased for quick requests may be what stands in the way.
      await this.freeLeasedCredit(accountId);
      refusing = await short();
    }
    if (refusing) throw await this.refusal(refusing.limit, { accountId, apiKeyId, amountNanos });
  }

  /**
   * Before storage closes: the settlements this process has sent are written (a database writes even a long
   * queue of them within seconds; `settlementsWithinMs` bounds a broken one), then leased credit goes back.
   */
  async close({ settlementsWithinMs = 30_000 }: { settlementsWithinMs?: number } = {}): Promise<void> {
    // The hold reconciler has stopped: what was left for it is sent once more here.
    await this.writes.resend();
    await this.pending.drained(settlementsWithinMs);
    await this.leases?.close();
  }

  /** Cost of token usage at the model's prices; estimates and reservations both come from here. */
  tokenCost(
    model: { modelId: string; pricing: ModelPricing | undefined },
    usage: { inputTokens: number; outputTokens: number },
  ): bigint {
    return tokenCost(requirePricing(model), usage);
  }

  async reserve(input: ReserveInput): Promise<Reservation> {
    // More than any balance can hold (a client asking for absurd output limits): refused before it reaches SQL.
    if (input.amountNanos > maxHoldNanos) throw await this.refusal('balance', input);
    const holdId = newId('hold');
    let credit: HeldCredit;
    if (this.leases) {
      const admitted = await this.leases.admit(input.accountId, input.apiKeyId, input.amountNanos);
      if (typeof admitted === 'string') throw await this.refusal(admitted, input);
      credit = admitted;
    } else {
      const outcome = await this.ledger.hold({
        holdId,
        accountId: input.accountId,
        apiKeyId: input.apiKeyId,
        amountNanos: input.amountNanos,
        instanceId: this.instanceId,
        now: this.clock(),
      });
      if (outcome !== 'ok') throw await this.refusal(outcome, input);
      credit = new HoldRow(this.ledger, this.writes, holdId);
    }
    const { accountId, apiKeyId, amountNanos, modelId } = input;
    return new Reservation(
      { id: holdId, accountId, apiKeyId, amountNanos, modelId },
      this.pendingUntilWritten(accountId, credit),
      this.context,
    );
  }

  /**
   * Resolves once the settlements of the account this process has sent are written (at most
   * `settlementWaitMs`): a read of the account's balance, spend or usage that waits for it shows the charge
   * of every answer this process has already given. Other processes' settlements show once they write them.
   */
  settledFor(accountId: string): Promise<void> {
    return this.pending.settled(accountId);
  }

  /** The same for every account: what a read across accounts waits for. */
  settledForAll(): Promise<void> {
    return this.pending.settledAll();
  }

  /** Credit whose settlement counts as pending for the account from the moment it is sent until it is written. */
  private pendingUntilWritten(accountId: string, credit: HeldCredit): HeldCredit {
    return {
      settle: (input) => this.pending.track(accountId, credit.settle(input)),
      release: () => credit.release(),
    };
  }

  /**
   * Sends once more the settlements and releases storage refused past their retries (the hold reconciler's
   * heartbeat): their holds stay until they are written.
   */
  resendRefusedWrites(): Promise<void> {
    return this.writes.resend();
  }

  /** This process's credit leases, and the credit in them (for metrics). */
  leaseHoldings(): { leases: number; leasedNanos: bigint } {
    return this.leases?.holdings() ?? { leases: 0, leasedNanos: 0n };
  }

  /**
   * The client's error for a hold refused (`holdRefusal`), saying how much the account and the key have free and,
   * by `whatFits`, what that covers: the one message of every refusal, a request's as a media job's.
   */
  async refusal(
    outcome: Exclude<HoldOutcome, 'ok'>,
    input: Pick<ReserveInput, 'accountId' | 'apiKeyId' | 'amountNanos' | 'whatFits'>,
  ): Promise<GatewayError> {
    // A key gone has nothing to offer; admission of work (one nano) is refused only when nothing at all is free.
    if (outcome === 'key_inactive' || input.amountNanos <= 1n)
      return holdRefusal(outcome, { amountNanos: input.amountNanos, freeNanos: 0n }, this.clock());
    // Only refusals pay for this read: admitted requests never wait for it.
    const free = await this.ledger.freeCredits(input.accountId, input.apiKeyId, this.clock());
    const error = holdRefusal(outcome, { amountNanos: input.amountNanos, freeNanos: free }, this.clock());
    const covers = input.whatFits?.(free);
    const available = `${usdText(free)} USD is available${covers ? `, ${covers}` : ''}`;
    return new GatewayError(error.code, `${error.message}; ${available}`, error.details).retryAfter(
      error.retryAfterSeconds,
    );
  }
}

/**
 * A reservation held as a row of its own. Its settlement and its release are sent through `writes`, as a lease's
 * settlements are: sent again while storage refuses them for a passing reason, the hold kept meanwhile, so that
 * a time-out or a dropped connection never leaves the generation uncharged or the hold in place.
 */
class HoldRow implements HeldCredit {
  constructor(
    private readonly ledger: LedgerRepository,
    private readonly writes: LedgerWrites,
    private readonly holdId: string,
  ) {}

  async settle(input: Omit<SettleInput, 'holdId'>): Promise<LedgerSettlement> {
    try {
      return await this.writes.write(() => this.ledger.settle({ ...input, holdId: this.holdId }));
    } catch (error) {
      // Refused for good, the settlement changed nothing: release rather than leave the hold until a restart.
      await this.release().catch(() => undefined);
      throw error;
    }
  }

  async release(): Promise<void> {
    await this.writes.write(() => this.ledger.release(this.holdId));
  }
}

/**
 * The client's error for a hold storage refused: 403 for the balance, 429 for a cap, 401 for a key gone
 * meanwhile. A cap that a new window lifts says when in `retry-after`; the total cap never lifts.
 */
export function holdRefusal(
  outcome: Exclude<HoldOutcome, 'ok'>,
  { amountNanos, freeNanos }: { amountNanos: bigint; freeNanos: bigint },
  now: Date,
): GatewayError {
  // Admission of work asks for one nano: refused, nothing at all is free. A real hold may be refused with some
  // credit left that does not cover it, which is not a limit "reached".
  const admission = amountNanos <= 1n;
  const reached = admission || freeNanos <= 0n;
  const needs = `the ${usdText(amountNanos)} USD this request needs`;
  switch (outcome) {
    case 'balance':
      return new GatewayError(
        'GW_INSUFFICIENT_BALANCE',
        admission
          ? 'insufficient credit balance: the account has no available credits'
          : `insufficient credit balance: this request needs ${usdText(amountNanos)} USD of available credits`,
      );
    case 'key_inactive':
      return new GatewayError('GW_INVALID_CREDENTIALS', 'the API key is revoked or disabled');
    case 'total':
      return new GatewayError(
        'GW_SPEND_CAP_REACHED',
        reached
          ? "the API key's total spend limit is reached"
          : `the API key's total spend limit does not leave ${needs}`,
      );
    default: {
      const retryAfterSeconds = secondsUntilWindowEnds(outcome, now);
      const limit = `the API key's ${outcome} spend limit`;
      return new GatewayError(
        'GW_SPEND_CAP_REACHED',
        `${reached ? `${limit} is reached` : `${limit} does not leave ${needs}`}: it starts afresh in ${retryAfterSeconds} seconds`,
      ).retryAfter(retryAfterSeconds);
    }
  }
}
