/**
 * The settlement rule against the database, for sampled cases: the claim the gateway computes
 * (billing/settlement.ts), then the SQL settlement's floors (balance and caps as they stand at settlement,
 * lowered ones included), on a hold row of its own, a share of a credit lease, and a media job's hold
 * billed on delivered duration.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settlementClaim } from '../../src/billing/settlement.ts';
import { usdToNanos } from '../../src/domain/money.ts';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { LedgerRepository } from '../../src/storage/ledger-repository.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const capNames = ['daily', 'weekly', 'monthly', 'total'] as const;
type Caps = Partial<Record<(typeof capNames)[number], bigint>>;

const usd = 10n ** 9n;
const nanos = (min: bigint, max: bigint) => fc.bigInt({ min, max });

/** A case: what is held, under which balance and caps; what changes before settlement; what the generation cost. */
const settlementCase = fc
  .record({
    balance: nanos(1n, 10n * usd),
    holdShare: fc.double({ min: 0, max: 1, noNaN: true }),
    spent: nanos(0n, 10n * usd),
    withKey: fc.boolean(),
    capRoom: fc.record(
      { daily: nanos(0n, usd), weekly: nanos(0n, usd), monthly: nanos(0n, usd), total: nanos(0n, usd) },
      { requiredKeys: [] },
    ),
    loweredShare: fc.record(
      {
        daily: fc.double({ min: 0, max: 1, noNaN: true }),
        weekly: fc.double({ min: 0, max: 1, noNaN: true }),
        monthly: fc.double({ min: 0, max: 1, noNaN: true }),
        total: fc.double({ min: 0, max: 1, noNaN: true }),
      },
      { requiredKeys: [] },
    ),
    newBalanceShare: fc.option(fc.double({ min: -1, max: 1, noNaN: true }), { nil: undefined }),
    costShare: fc.double({ min: 0, max: 3, noNaN: true }),
    mode: fc.constantFrom('hold', 'lease', 'media'),
    measuredShare: fc.option(fc.double({ min: 0, max: 3, noNaN: true }), { nil: undefined }),
    maxOverrun: fc.double({ min: 1, max: 3, noNaN: true }),
  })
  .map((sample) => {
    const share = (amount: bigint, fraction: number) => (amount * BigInt(Math.round(fraction * 1e6))) / 1_000_000n;
    const hold = share(sample.balance, sample.holdShare) || 1n;
    // Caps that admitted the hold, then lowered (or not) between the hold and its settlement.
    const capsAtHold: Caps = {};
    const capsAtSettlement: Caps = {};
    if (sample.withKey)
      for (const name of capNames) {
        const room = sample.capRoom[name];
        if (room === undefined) continue;
        capsAtHold[name] = sample.spent + hold + room;
        const lowered = sample.loweredShare[name];
        capsAtSettlement[name] = lowered === undefined ? capsAtHold[name] : share(capsAtHold[name], lowered);
      }
    return {
      ...sample,
      hold,
      capsAtHold,
      capsAtSettlement,
      balanceAtSettlement:
        sample.newBalanceShare === undefined ? sample.balance : share(sample.balance, sample.newBalanceShare),
      cost: share(hold, sample.costShare),
      measuredCost: sample.measuredShare === undefined ? undefined : share(hold, sample.measuredShare),
    };
  });

describe('settlement: the rule and the ledger floors, for sampled holds, costs, balances and caps', () => {
  let database: TestDatabase;
  let storage: Storage;
  let repository: LedgerRepository;
  let client: pg.Client;
  let counter = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.options);
    repository = new LedgerRepository(storage);
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await storage?.close();
    await database?.drop();
  });

  const limitColumns = (caps: Caps) => [
    caps.daily ?? null,
    caps.weekly ?? null,
    caps.monthly ?? null,
    caps.total ?? null,
  ];

  async function state(accountId: string, keyId: string | null) {
    const {
      rows: [account],
    } = await client.query<{ balance: string; held: string }>(
      'SELECT balance_nanos::text AS balance, held_nanos::text AS held FROM accounts WHERE id = $1',
      [accountId],
    );
    const key =
      keyId === null
        ? undefined
        : (
            await client.query<Record<'held' | 'total' | 'day' | 'week' | 'month', string>>(
              `SELECT held_nanos::text AS held, spent_total_nanos::text AS total, spent_day_nanos::text AS day,
                      spent_week_nanos::text AS week, spent_month_nanos::text AS month FROM api_keys WHERE id = $1`,
              [keyId],
            )
          ).rows[0];
    return {
      balance: BigInt(account!.balance),
      held: BigInt(account!.held),
      keyHeld: key ? BigInt(key.held) : 0n,
      spent: key
        ? { daily: BigInt(key.day), weekly: BigInt(key.week), monthly: BigInt(key.month), total: BigInt(key.total) }
        : undefined,
    };
  }

  it('never charges past the hold (but for the bounded media exception), the balance or any cap; every nano of the hold is accounted for', async () => {
    await fc.assert(
      fc.asyncProperty(settlementCase, async (sample) => {
        const id = `${++counter}_${Date.now().toString(36)}`;
        const accountId = `acct_prop_${id}`;
        const keyId = sample.withKey ? `key_prop_${id}` : null;
        await client.query('INSERT INTO accounts (id, email, balance_nanos) VALUES ($1, $2, $3)', [
          accountId,
          `${accountId}@example.com`,
          sample.balance,
        ]);
        if (keyId !== null)
          await client.query(
            `INSERT INTO api_keys (id, account_id, name, display_prefix, lookup_hash, sealed_key,
                                   daily_limit_nanos, weekly_limit_nanos, monthly_limit_nanos, total_limit_nanos,
                                   spent_total_nanos, spent_day_nanos, spent_week_nanos, spent_month_nanos,
                                   day_start, week_start, month_start)
             VALUES ($1, $2, 'prop', 'prop', $1, 'sealed', $3, $4, $5, $6, $7, $7, $7, $7,
                     (now() AT TIME ZONE 'UTC')::date, date_trunc('week', now() AT TIME ZONE 'UTC')::date,
                     date_trunc('month', now() AT TIME ZONE 'UTC')::date)`,
            [keyId, accountId, ...limitColumns(sample.capsAtHold), sample.spent],
          );
        const holdId = sample.mode === 'lease' ? `lease_prop_${id}` : `hold_prop_${id}`;
        const common = { accountId, apiKeyId: keyId, instanceId: 'property-test', now: new Date() };
        if (sample.mode === 'lease') {
          const grant = await repository.extendLease({
            ...common,
            leaseId: holdId,
            minNanos: sample.hold,
            wantNanos: sample.hold,
          });
          expect(grant).toMatchObject({ outcome: 'ok', grantedNanos: sample.hold });
        } else {
          expect(await repository.hold({ ...common, holdId, amountNanos: sample.hold })).toBe('ok');
        }

        // Between the hold and its settlement: caps lowered, and credit taken away (an operator's negative grant).
        if (keyId !== null)
          await client.query(
            `UPDATE api_keys SET daily_limit_nanos = $2, weekly_limit_nanos = $3, monthly_limit_nanos = $4,
                                 total_limit_nanos = $5 WHERE id = $1`,
            [keyId, ...limitColumns(sample.capsAtSettlement)],
          );
        await client.query('UPDATE accounts SET balance_nanos = $2 WHERE id = $1', [
          accountId,
          sample.balanceAtSettlement,
        ]);
        const before = await state(accountId, keyId);
        const {
          rows: [free],
        } = await client.query<{ free: string }>('SELECT gw_free_credit($1, $2, now())::text AS free', [
          accountId,
          keyId,
        ]);

        const { claimNanos, costNanos } = settlementClaim({
          holdNanos: sample.hold,
          costNanos: sample.cost,
          ...(sample.mode === 'media'
            ? { deliveredDuration: { measuredCostNanos: sample.measuredCost, maxOverrun: sample.maxOverrun } }
            : {}),
        });
        const input = {
          holdId,
          claimNanos,
          costNanos,
          now: new Date(),
          generation: {
            generationId: `gen_prop_${id}`,
            accountId,
            apiKeyId: keyId,
            modality: sample.mode === 'media' ? ('audio' as const) : ('text' as const),
            model: 'property',
            status: 'succeeded',
            request: null,
            usage: { usdCost: Number(costNanos) / 1e9 },
            durationMs: 1,
          },
        };
        const settled =
          sample.mode === 'lease' ? await repository.settleFromLease(input) : await repository.settle(input);
        if (sample.mode === 'lease') await repository.release(holdId);
        const after = await state(accountId, keyId);
        const {
          rows: [record],
        } = await client.query<{ cost: string; usage: { usdCost: number; unchargedUsdCost?: number } }>(
          'SELECT usd_cost_nanos::text AS cost, usage FROM generations WHERE id = $1',
          [input.generation.generationId],
        );

        const charged = settled.chargedNanos;
        expect(settled.held).toBe(true);
        expect(BigInt(record!.cost)).toBe(charged);
        expect(charged >= 0n && charged <= claimNanos && claimNanos <= costNanos).toBe(true);
        // The hold, or for media billed on delivered duration its bounded exception, paid out of free credit.
        if (sample.mode !== 'media' || sample.measuredCost === undefined) expect(charged <= sample.hold).toBe(true);
        else {
          const bound = (sample.hold * BigInt(Math.round(sample.maxOverrun * 1000))) / 1000n;
          const ceiling = sample.measuredCost < bound ? sample.measuredCost : bound;
          expect(charged <= (sample.hold > ceiling ? sample.hold : ceiling)).toBe(true);
          const beyond = charged - sample.hold;
          expect(beyond <= BigInt(free!.free) || beyond <= 0n).toBe(true);
        }
        // The balance floor, and every cap as it stands at settlement.
        expect(charged <= (before.balance > 0n ? before.balance : 0n)).toBe(true);
        for (const name of capNames) {
          const cap = sample.capsAtSettlement[name];
          if (cap === undefined) continue;
          const spentBefore = before.spent![name];
          expect(after.spent![name] - spentBefore).toBe(charged);
          expect(after.spent![name] <= (cap > spentBefore ? cap : spentBefore)).toBe(true);
        }
        // The whole hold left the held sums; the balance moved by the charge alone.
        expect(after.held).toBe(0n);
        expect(after.keyHeld).toBe(0n);
        expect(before.held - after.held).toBe(sample.hold);
        expect(before.balance - after.balance).toBe(charged);
        // What was not charged of the cost is on the record, to the nano; usdCost says what was charged.
        const uncharged = costNanos - charged;
        if (uncharged === 0n) expect(record!.usage).not.toHaveProperty('unchargedUsdCost');
        else {
          expect(usdToNanos(record!.usage.unchargedUsdCost!)).toBe(uncharged);
          expect(usdToNanos(record!.usage.usdCost)).toBe(charged);
        }
        // hold = charged + released (what the cost did not need) + uncharged (what it needed and a floor refused).
        if (charged <= sample.hold) {
          const needed = costNanos < sample.hold ? costNanos : sample.hold;
          const released = sample.hold - needed;
          const unchargedOfHold = uncharged - (costNanos - needed);
          expect(unchargedOfHold >= 0n).toBe(true);
          expect(charged + released + unchargedOfHold).toBe(sample.hold);
        }
      }),
      { numRuns: 120 },
    );
  });
});
