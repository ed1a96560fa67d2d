import { eq, sql } from 'drizzle-orm';
import Type, { type Static } from 'typebox';
import type { RecordedGeneration } from '../domain/generation-route.ts';
import { integerText, preparedStatement, rowShape } from './checked-rows.ts';
import { queryRows, type Database, type Storage } from './database.ts';
import { currentSpend } from '../domain/spend-windows.ts';
import { accounts, apiKeys, gatewayInstances, generations, holds } from './schema.ts';
import { serverErrorOf } from './logged-errors.ts';
import { StatementBatcher } from './statement-batcher.ts';

/** What gw_hold (and gw_lease_extend) answer: admitted, or the floor that refused. */
export const holdOutcome = Type.Enum(['ok', 'balance', 'daily', 'weekly', 'monthly', 'total', 'key_inactive']);
export type HoldOutcome = Static<typeof holdOutcome>;

/** What one floor of a hold (the balance, or a cap of the key) leaves for a new hold. */
export interface Headroom {
  limit: Exclude<HoldOutcome, 'ok' | 'key_inactive'>;
  nanos: bigint;
}

export interface HoldInput {
  holdId: string;
  accountId: string;
  apiKeyId: string | null;
  amountNanos: bigint;
  instanceId: string;
  now: Date;
}

export interface SettleInput {
  /** The hold row, or (settled from a lease) the lease. */
  holdId: string;
  /** What the settlement asks to charge (see billing/settlement.ts); the floors may charge less. */
  claimNanos: bigint;
  /**
   * Settled from a lease, what it takes of the lease's row when that is less than the claim (a claim past the
   * credit the lease promised the request): the rest is charged, if it can be, out of what is free beyond every
   * hold. The claim when absent.
   */
  shareNanos?: bigint;
  /**
   * With `shareNanos`, the part of it the lease promised the request: the settlement is reported held when the
   * lease's row still held that much (it then takes what it has of the share, the rest claimed as above).
   */
  promisedNanos?: bigint;
  /** What the generation cost: what is not charged of it is written on the record. */
  costNanos: bigint;
  now: Date;
  /** The usage record to write (its charge is the ledger's to decide). */
  generation: Omit<RecordedGeneration, 'chargedNanos'>;
}

/** What the ledger did with a settlement. */
export interface LedgerSettlement {
  /** The credit was still held (false: it had been released as orphaned, and was charged out of free credit). */
  held: boolean;
  chargedNanos: bigint;
  /** The usage as written when less than the cost was charged (it then says `unchargedUsdCost`); else undefined. */
  shortUsage: unknown;
}

export interface LeaseExtension {
  leaseId: string;
  accountId: string;
  apiKeyId: string | null;
  /** Refused, taking nothing, unless at least this much is free. */
  minNanos: bigint;
  /** Taken when free: the lease's preferred size. */
  wantNanos: bigint;
  instanceId: string;
  now: Date;
}

export interface LeaseGrant {
  outcome: HoldOutcome;
  grantedNanos: bigint;
  /** On a refusal: what the refusing row (the key for a cap, else the account) has held by every process. */
  heldNanos: bigint;
}

/** The owner of every media job's hold: never a process, so no sweep of dead processes releases it. */
export const mediaJobHoldOwner = 'media-job';

/** A non-negative count of nano-USD as gw_ functions answer it in JSON or as text. */
const nanosText = Type.String({ pattern: '^[0-9]+$' });

const holdAnswer = rowShape('gw_hold', Type.Object({ outcome: holdOutcome }));

const holdBatch = preparedStatement({
  name: 'gw_hold_batch',
  text: 'SELECT gw_hold_batch($1::jsonb, $2) AS outcomes',
  row: Type.Object({ outcomes: Type.Array(holdOutcome) }),
});

/**
 * Per extension: its outcome, the credit granted, and (refused) what the refusing row holds: a column's value,
 * which no constraint keeps from going negative, so read with its sign.
 */
const leaseExtendBatch = preparedStatement({
  name: 'gw_lease_extend_batch',
  text: 'SELECT gw_lease_extend_batch($1::jsonb, $2) AS grants',
  row: Type.Object({ grants: Type.Array(Type.Tuple([holdOutcome, nanosText, integerText])) }),
});

/** Per settlement: whether its credit was held, the charge, and the usage of a short charge. */
const settleBatch = preparedStatement({
  name: 'gw_settle_batch',
  text: 'SELECT gw_settle_batch($1::jsonb) AS settled',
  row: Type.Object({ settled: Type.Array(Type.Tuple([Type.Boolean(), nanosText, Type.Unknown()])) }),
});

const leaseShrink = rowShape('gw_lease_shrink', Type.Object({ returned: nanosText }));

const holdsByKindRows = rowShape(
  'holds by kind',
  Type.Object({ kind: Type.String(), holds: integerText, nanos: integerText }),
);

const releaseAnswer = rowShape('gw_release', Type.Object({ released: Type.Boolean() }));

const releasedOrphans = rowShape('gw_release_orphaned_holds', Type.Object({ released: Type.Integer() }));

/** Largest batch one ledger statement carries, and statements of one kind running at once per process. */
const batchLimits = { maxBatch: 64, maxInFlight: 4 };
/**
 * Settlements are sent after their answers, so no request waits for them: one statement at a time carries
 * everything that arrived while the one before ran. Batches of one account's settlements would queue on its
 * rows' locks anyway, and each statement costs this process and the database more than an item of a batch
 * (bench/RESULTS.md: four at a time made batches so small that the database spent about twice the CPU per
 * request, and this process more too). The price: a statement waiting on a row lock holds back this process's
 * other settlements until it ends; the largest batch stays at 64, so that a failed batch's items retried one
 * by one, and the rows a batch locks, are no more than before. A settlement that finds none running waits 2 ms
 * for others: at one connection that made two or three settlements one statement, and spent 3-7% less CPU per
 * request, the database's and this process's (bench/RESULTS.md); the hold covers the cost meanwhile, and a read
 * of the account's money waits for it as for any settlement on its way.
 */
const settlementLimits = { maxBatch: 64, maxInFlight: 1, lingerMs: 2 };

/**
 * Whether the database itself answered a statement's error, which rolled its transaction back; an error of the
 * connection (lost, timed out) leaves unknown whether it committed.
 */
const answeredByDatabase = (error: unknown): boolean => serverErrorOf(error) !== undefined;

/** Where settlements are taken from: the hold rows of their own (`lease: false`) or the account's leases. */
interface SettlementSource {
  lease: boolean;
}

/**
 * The SQL side of the credit ledger: each money operation is one call of a function from the migrations.
 * Holds and settlements that arrive while others are running are sent together as one batch call.
 */
export class LedgerRepository {
  private readonly holds: StatementBatcher<HoldInput, HoldOutcome>;
  private readonly settlements: StatementBatcher<SettleInput, LedgerSettlement>;
  private readonly leaseExtensions: StatementBatcher<LeaseExtension, LeaseGrant>;
  private readonly leaseSettlements: StatementBatcher<SettleInput, LedgerSettlement>;

  private readonly db: Database;
  private readonly prepared: Storage['prepared'];

  constructor(storage: Pick<Storage, 'db' | 'prepared'>) {
    this.db = storage.db;
    this.prepared = (statement, values) => storage.prepared(statement, values);
    this.holds = new StatementBatcher(
      (input) => this.holdOne(input),
      (inputs) => this.holdMany(inputs),
      batchLimits,
    );
    this.settlements = this.settlementBatcher({ lease: false });
    // An extension adds to its lease: sent twice, it would hold the credit twice.
    this.leaseExtensions = new StatementBatcher(
      (input) => this.extendMany([input]).then(([grant]) => grant!),
      (inputs) => this.extendMany(inputs),
      { ...batchLimits, retriesAfter: answeredByDatabase },
    );
    this.leaseSettlements = this.settlementBatcher({ lease: true });
  }

  hold(input: HoldInput): Promise<HoldOutcome> {
    return this.holds.submit(input);
  }

  /** Charges the claim within the floors and writes the record, whether or not the hold was still outstanding. */
  settle(input: SettleInput): Promise<LedgerSettlement> {
    return this.settlements.submit(input);
  }

  /**
   * One hold on its own, also the retry of a batch that failed. A batch whose commit went through but whose
   * answer was lost leaves its holds in place; the retry then finds its hold there and counts it as admitted
   * instead of failing on the duplicate id (the failed statement changed nothing).
   */
  private async holdOne(input: HoldInput): Promise<HoldOutcome> {
    try {
      const [row] = await queryRows(
        this.db,
        sql`SELECT gw_hold(${input.holdId}, ${input.accountId}, ${input.apiKeyId}, ${input.amountNanos}, ${input.instanceId}, ${input.now.toISOString()}::timestamptz) AS outcome`,
        holdAnswer,
      );
      if (!row) throw new Error('gw_hold answered no row');
      return row.outcome;
    } catch (error) {
      const [existing] = await this.db.select({ id: holds.id }).from(holds).where(eq(holds.id, input.holdId));
      if (existing) return 'ok';
      throw error;
    }
  }

  private async holdMany(inputs: HoldInput[]): Promise<HoldOutcome[]> {
    // One batch belongs to one process, so one instance id serves every hold in it.
    const items = inputs.map((input) => ({
      hold: input.holdId,
      account: input.accountId,
      key: input.apiKeyId,
      amount: String(input.amountNanos),
      now: input.now.toISOString(),
    }));
    const [row] = await this.prepared(holdBatch, [JSON.stringify(items), inputs[0]!.instanceId]);
    return row?.outcomes ?? [];
  }

  /** Adds free credit to this process's lease (creating it); batched with other extensions. */
  extendLease(input: LeaseExtension): Promise<LeaseGrant> {
    return this.leaseExtensions.submit(input);
  }

  /** Charges a request out of its lease and writes its record (`held` false when the lease no longer held the claim). */
  settleFromLease(input: SettleInput): Promise<LedgerSettlement> {
    return this.leaseSettlements.submit(input);
  }

  /** Gives back up to `amountNanos` of a lease; answers what was given back. */
  async shrinkLease(leaseId: string, amountNanos: bigint): Promise<bigint> {
    const [row] = await queryRows(
      this.db,
      sql`SELECT gw_lease_shrink(${leaseId}, ${amountNanos})::text AS returned`,
      leaseShrink,
    );
    return BigInt(row?.returned ?? 0);
  }

  private async extendMany(inputs: LeaseExtension[]): Promise<LeaseGrant[]> {
    const items = inputs.map((input) => ({
      lease: input.leaseId,
      account: input.accountId,
      key: input.apiKeyId,
      min: String(input.minNanos),
      want: String(input.wantNanos),
      now: input.now.toISOString(),
    }));
    // One batch belongs to one process, so one instance id serves every lease in it.
    const [row] = await this.prepared(leaseExtendBatch, [JSON.stringify(items), inputs[0]!.instanceId]);
    return (row?.grants ?? []).map(([outcome, granted, held]) => ({
      outcome,
      grantedNanos: BigInt(granted),
      heldNanos: BigInt(held),
    }));
  }

  /** Settlements out of hold rows of their own, or out of leases: one statement either way, alone or batched. */
  private settlementBatcher(source: SettlementSource): StatementBatcher<SettleInput, LedgerSettlement> {
    return new StatementBatcher(
      (input) => this.settleOne(input, source),
      (inputs) => this.settleMany(inputs, source),
      settlementLimits,
    );
  }

  /**
   * One settlement on its own, also the retry of a batch that failed. A batch whose commit went through but whose
   * answer was lost has written its records; the retry then fails on the record's id, and the settlement is
   * answered as it was made (the record's charge) instead of failing, so that nobody counts its charge as
   * still held. The record is this settlement's when it was written for the same account and key at the same
   * moment, and the hold row of its own (a lease's stays) is gone.
   */
  private async settleOne(input: SettleInput, source: SettlementSource): Promise<LedgerSettlement> {
    try {
      const [settled] = await this.settleMany([input], source);
      return settled!;
    } catch (error) {
      const made = await this.settledBefore(input, source);
      if (made === undefined) throw error;
      return { held: true, chargedNanos: made, shortUsage: undefined };
    }
  }

  /** The charge of the record this settlement wrote before, if it did. */
  private async settledBefore(input: SettleInput, { lease }: SettlementSource): Promise<bigint | undefined> {
    const { generationId, accountId, apiKeyId } = input.generation;
    const [made] = await this.db
      .select({
        accountId: generations.accountId,
        apiKeyId: generations.apiKeyId,
        at: generations.createdAt,
        charged: generations.usdCostNanos,
      })
      .from(generations)
      .where(eq(generations.id, generationId));
    if (
      !made ||
      made.accountId !== accountId ||
      made.apiKeyId !== apiKeyId ||
      made.at.getTime() !== input.now.getTime()
    )
      return undefined;
    if (!lease) {
      const [hold] = await this.db.select({ id: holds.id }).from(holds).where(eq(holds.id, input.holdId));
      if (hold) return undefined;
    }
    return made.charged;
  }

  private async settleMany(inputs: SettleInput[], { lease }: SettlementSource): Promise<LedgerSettlement[]> {
    const items = inputs.map((input) => ({
      lease,
      hold: input.holdId,
      account: input.generation.accountId,
      key: input.generation.apiKeyId,
      claim: String(input.claimNanos),
      ...(input.shareNanos === undefined ? {} : { share: String(input.shareNanos) }),
      ...(input.promisedNanos === undefined ? {} : { promised: String(input.promisedNanos) }),
      cost: String(input.costNanos),
      now: input.now.toISOString(),
      generation: input.generation.generationId,
      modality: input.generation.modality,
      model: input.generation.model,
      status: input.generation.status,
      request: input.generation.request ?? null,
      usage: input.generation.usage ?? null,
      durationMs: input.generation.durationMs,
      route: input.generation.route ?? null,
      priceVersion: input.generation.priceVersion ?? null,
    }));
    const [row] = await this.prepared(settleBatch, [JSON.stringify(items)]);
    if (!row) throw new Error('gw_settle_batch answered no row');
    return row.settled.map(([held, charged, shortUsage]) => ({
      held,
      chargedNanos: BigInt(charged),
      shortUsage: shortUsage ?? undefined,
    }));
  }

  /**
   * Hold rows by kind, with their sums: a media job's (owned by no process), a credit lease (an `lease_` id),
   * or a request's own hold row.
   */
  async holdsByKind(): Promise<Array<{ kind: string; count: number; nanos: bigint }>> {
    const rows = await queryRows(
      this.db,
      sql`SELECT CASE WHEN instance_id = ${mediaJobHoldOwner} THEN 'media-job' WHEN id LIKE 'lease\_%' THEN 'lease' ELSE 'request' END AS kind,
                 count(*)::text AS holds, COALESCE(sum(amount_nanos), 0)::text AS nanos
            FROM holds GROUP BY 1`,
      holdsByKindRows,
    );
    return rows.map((row) => ({ kind: row.kind, count: Number(row.holds), nanos: BigInt(row.nanos) }));
  }

  /**
   * Credits a new hold could take now: the account's balance less its holds, and less again where a cap
   * of the key leaves less headroom (never below zero). Read without locks: it explains a refusal.
   */
  async freeCredits(accountId: string, apiKeyId: string | null, now: Date): Promise<bigint> {
    let free: bigint | undefined;
    for (const { nanos } of await this.headroom(accountId, apiKeyId, now))
      if (free === undefined || nanos < free) free = nanos;
    return free !== undefined && free > 0n ? free : 0n;
  }

  /**
   * What a new hold could take now under each floor a hold meets: the account's balance less its holds, then
   * each cap of the key less its spend and holds (may be negative). Read without locks, in the order
   * `gw_hold` checks them.
   */
  async headroom(accountId: string, apiKeyId: string | null, now: Date): Promise<Headroom[]> {
    const [account] = await this.db
      .select({ balance: accounts.balanceNanos, held: accounts.heldNanos })
      .from(accounts)
      .where(eq(accounts.id, accountId));
    const floors: Headroom[] = [{ limit: 'balance', nanos: account ? account.balance - account.held : 0n }];
    if (apiKeyId === null) return floors;
    const [key] = await this.db.select().from(apiKeys).where(eq(apiKeys.id, apiKeyId));
    if (!key) return floors;
    const spent = currentSpend(key, now);
    const caps = [
      ['daily', key.dailyLimitNanos, spent.daily],
      ['weekly', key.weeklyLimitNanos, spent.weekly],
      ['monthly', key.monthlyLimitNanos, spent.monthly],
      ['total', key.totalLimitNanos, spent.total],
    ] as const;
    for (const [limit, cap, used] of caps) if (cap !== null) floors.push({ limit, nanos: cap - used - key.heldNanos });
    return floors;
  }

  async release(holdId: string): Promise<boolean> {
    const [row] = await queryRows(this.db, sql`SELECT gw_release(${holdId}) AS released`, releaseAnswer);
    return row?.released === true;
  }

  /** Heartbeats use the database's clock, so processes on machines with skewed clocks still agree on age. */
  async heartbeat(instanceId: string): Promise<void> {
    await this.db
      .insert(gatewayInstances)
      .values({ id: instanceId })
      .onConflictDoUpdate({ target: gatewayInstances.id, set: { heartbeatAt: sql`now()` } });
  }

  async forgetInstance(instanceId: string): Promise<void> {
    await this.db.delete(gatewayInstances).where(eq(gatewayInstances.id, instanceId));
  }

  /** Releases holds of processes whose last heartbeat is older than `staleSeconds` by the database's clock. */
  async releaseOrphanedHolds(instanceId: string, staleSeconds: number): Promise<number> {
    const [row] = await queryRows(
      this.db,
      sql`SELECT gw_release_orphaned_holds(${instanceId}, now() - make_interval(secs => ${staleSeconds})) AS released`,
      releasedOrphans,
    );
    return row?.released ?? 0;
  }
}
