/**
 * Money safety of the credit ledger under concurrency, on the run's database (in-memory PGlite, or a
 * fresh PostgreSQL database when TEST_DATABASE_URL is set). Amounts are compared as bigint nanos only.
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreditLedger, type Reservation } from '../../src/billing/credit-ledger.ts';
import { GatewayError, isGatewayError } from '../../src/domain/errors.ts';
import { nanosToUsd, usdToNanos } from '../../src/domain/money.ts';
import type { Database } from '../../src/storage/database.ts';
import { LedgerRepository } from '../../src/storage/ledger-repository.ts';
import { accounts, apiKeys } from '../../src/storage/schema.ts';
import { randomCost, seededRandom } from '../support/ledger-worker.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

let gateway: TestGateway;
let db: Database;

beforeAll(async () => {
  gateway = await startTestGateway();
  db = gateway.gateway.core.storage.db;
});
afterAll(async () => gateway?.close());

const services = () => gateway.gateway.core.services;

/**
 * The two ways the ledger holds credit: leases of this process (the gateway's own ledger, what requests
 * use), and a hold row per reservation (leases turned off), on the same storage and process.
 */
const ledgerModes = [
  { mode: 'credit leases', leased: true },
  { mode: 'a hold row per reservation', leased: false },
] as const;

let holdRowLedger: CreditLedger | undefined;
function ledgerFor(leased: boolean): CreditLedger {
  if (leased) return services().ledger;
  const core = gateway.gateway.core;
  holdRowLedger ??= new CreditLedger(new LedgerRepository(core.storage), core.instanceId, {
    reportFailure: () => undefined,
    reportLeaseFailure: () => undefined,
  });
  return holdRowLedger;
}

/** Outstanding hold rows expected: one per reservation, or the one lease holding them all. */
function holdRows(leased: boolean, reservations: number): number {
  return leased ? Math.min(reservations, 1) : reservations;
}

async function accountRow(accountId: string) {
  const [row] = await db.select().from(accounts).where(eq(accounts.id, accountId));
  if (!row) throw new Error(`no account ${accountId}`);
  return row;
}

async function keyRow(keyId: string) {
  const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, keyId));
  if (!row) throw new Error(`no key ${keyId}`);
  return row;
}

/** Count and exact sum of the account's generation records. */
async function generationTotals(accountId: string): Promise<{ count: number; costNanos: bigint }> {
  const [row] = await uncheckedRows<{ count: string; cost: string }>(
    db,
    sql`SELECT count(*)::text AS count, COALESCE(sum(usd_cost_nanos), 0)::text AS cost FROM generations WHERE account_id = ${accountId}`,
  );
  return { count: Number(row?.count ?? 0), costNanos: BigInt(row?.cost ?? '0') };
}

/** Outstanding holds of the account: count and exact sum. */
async function holdTotals(accountId: string): Promise<{ count: number; amountNanos: bigint }> {
  const [row] = await uncheckedRows<{ count: string; amount: string }>(
    db,
    sql`SELECT count(*)::text AS count, COALESCE(sum(amount_nanos), 0)::text AS amount FROM holds WHERE account_id = ${accountId}`,
  );
  return { count: Number(row?.count ?? 0), amountNanos: BigInt(row?.amount ?? '0') };
}

type ReservationAttempt = { ok: true; hold: Reservation } | { ok: false; error: GatewayError };

/** `count` holds started together; every failure must be a GatewayError. */
async function concurrentHolds(
  ledger: CreditLedger,
  input: { accountId: string; apiKeyId: string | null; amountNanos: bigint },
  count: number,
): Promise<ReservationAttempt[]> {
  const outcomes = await Promise.allSettled(
    Array.from({ length: count }, () => ledger.reserve({ ...input, modelId: 'sandbox-echo' })),
  );
  return outcomes.map((outcome) => {
    if (outcome.status === 'fulfilled') return { ok: true, hold: outcome.value };
    if (!isGatewayError(outcome.reason)) throw outcome.reason;
    return { ok: false, error: outcome.reason };
  });
}

function admittedOf(attempts: ReservationAttempt[]): Reservation[] {
  return attempts.flatMap((attempt) => (attempt.ok ? [attempt.hold] : []));
}

function refusalsOf(attempts: ReservationAttempt[]): GatewayError[] {
  return attempts.flatMap((attempt) => (attempt.ok ? [] : [attempt.error]));
}

/** Settles every hold concurrently at a seeded random cost <= its amount; returns the exact total charged. */
async function settleAllRandomly(holds: Reservation[], seed: number): Promise<bigint> {
  const random = seededRandom(seed);
  const costs = holds.map((hold) => randomCost(random, hold.amountNanos));
  const settled = await Promise.all(
    holds.map((hold, index) => hold.settle({ costNanos: costs[index] ?? 0n, modality: 'text', status: 'succeeded' })),
  );
  for (const settlement of settled) expect(settlement.holdWasOutstanding).toBe(true);
  return settled.reduce((sum, settlement) => sum + settlement.costNanos, 0n);
}

/** Calls `check` in a loop until `until` settles; returns how many checks ran. */
async function monitorWhile(until: Promise<unknown>, check: () => Promise<void>): Promise<number> {
  let done = false;
  const finished = until.finally(() => {
    done = true;
  });
  let checks = 0;
  while (!done) {
    await check();
    checks += 1;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await finished;
  await check();
  return checks + 1;
}

describe.each(ledgerModes)('holds against the account balance, with $mode', ({ leased }) => {
  it.each([
    { withKey: true, seed: 11 },
    { withKey: false, seed: 12 },
  ])(
    'admits exactly the holds that fit among 200 concurrent ones (API key: $withKey), then conserves every nano',
    async ({ withKey, seed }) => {
      const credits = usdToNanos(1);
      const amount = usdToNanos(0.07);
      const fits = Number(credits / amount); // 14
      const { accountId, keyId, key } = await gateway.createFundedKey({ credits: 1 });
      const apiKeyId = withKey ? keyId : null;
      const ledger = ledgerFor(leased);

      const attempts = await concurrentHolds(ledger, { accountId, apiKeyId, amountNanos: amount }, 200);
      const admitted = admittedOf(attempts);
      expect(fits).toBe(14);
      expect(admitted).toHaveLength(fits);
      const refusals = refusalsOf(attempts);
      expect(refusals).toHaveLength(200 - fits);
      for (const refusal of refusals) {
        expect(refusal.code).toBe('GW_INSUFFICIENT_BALANCE');
        expect(refusal.status).toBe(403);
      }
      expect(new Set(admitted.map((hold) => hold.id)).size).toBe(fits);

      await ledger.giveBackUnused();
      const whileHeld = await accountRow(accountId);
      expect(whileHeld.balanceNanos).toBe(credits);
      expect(whileHeld.heldNanos).toBe(amount * BigInt(fits));
      expect(await holdTotals(accountId)).toEqual({
        count: holdRows(leased, fits),
        amountNanos: amount * BigInt(fits),
      });
      expect((await keyRow(keyId)).heldNanos).toBe(withKey ? amount * BigInt(fits) : 0n);

      const charged = await settleAllRandomly(admitted, seed);
      await ledger.giveBackUnused();
      const after = await accountRow(accountId);
      expect(after.heldNanos).toBe(0n);
      expect(after.balanceNanos >= 0n).toBe(true);
      expect(await holdTotals(accountId)).toEqual({ count: 0, amountNanos: 0n });
      const generations = await generationTotals(accountId);
      expect(generations).toEqual({ count: fits, costNanos: charged });
      expect(generations.costNanos + after.balanceNanos).toBe(credits);
      const keyAfter = await keyRow(keyId);
      expect(keyAfter.heldNanos).toBe(0n);
      expect(keyAfter.spentTotalNanos).toBe(withKey ? charged : 0n);

      // What the HTTP surface reports agrees with the ledger.
      const headers = { 'x-api-key': key };
      const balance = await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers });
      expect(balance.json()).toEqual({ creditBalance: nanosToUsd(after.balanceNanos) });
      const usage = await gateway.request({ method: 'GET', url: '/api/compat/v1/usage?limit=100', headers });
      const page = usage.json() as { total: number; results: Array<{ usdCost: number }> };
      expect(page.total).toBe(fits);
      expect(page.results.map((record) => usdToNanos(record.usdCost)).reduce((sum, nanos) => sum + nanos, 0n)).toBe(
        charged,
      );

      // The next storm admits exactly what the remaining balance covers.
      const second = await concurrentHolds(ledger, { accountId, apiKeyId, amountNanos: amount }, 200);
      const secondAdmitted = admittedOf(second);
      expect(secondAdmitted).toHaveLength(Number(after.balanceNanos / amount));
      expect(refusalsOf(second).every((error) => error.code === 'GW_INSUFFICIENT_BALANCE')).toBe(true);
      // Charging the full hold exhausts the balance without ever crossing zero.
      await Promise.all(
        secondAdmitted.map((hold) =>
          hold.settle({ costNanos: hold.amountNanos, modality: 'text', status: 'succeeded' }),
        ),
      );
      await ledger.giveBackUnused();
      const final = await accountRow(accountId);
      expect(final.heldNanos).toBe(0n);
      expect(final.balanceNanos).toBe(after.balanceNanos % amount);
      expect((await generationTotals(accountId)).costNanos + final.balanceNanos).toBe(credits);
    },
  );

  it('refuses a hold when the balance is zero, and any hold bigger than what is available', async () => {
    const { accountId } = await gateway.createFundedKey({ credits: 0 });
    const ledger = ledgerFor(leased);
    await expect(
      ledger.reserve({ accountId, apiKeyId: null, amountNanos: 1n, modelId: 'sandbox-echo' }),
    ).rejects.toMatchObject({ code: 'GW_INSUFFICIENT_BALANCE' });
    const funded = await gateway.createFundedKey({ credits: 0.5 });
    const first = await ledger.reserve({
      accountId: funded.accountId,
      apiKeyId: funded.keyId,
      amountNanos: usdToNanos(0.3),
      modelId: 'sandbox-echo',
    });
    // 0.2 + 1 nano no longer fits beside the 0.3 held; exactly 0.2 does.
    await expect(
      ledger.reserve({
        accountId: funded.accountId,
        apiKeyId: funded.keyId,
        amountNanos: usdToNanos(0.2) + 1n,
        modelId: 'sandbox-echo',
      }),
    ).rejects.toMatchObject({
      code: 'GW_INSUFFICIENT_BALANCE',
      status: 403,
    });
    const second = await ledger.reserve({
      accountId: funded.accountId,
      apiKeyId: funded.keyId,
      amountNanos: usdToNanos(0.2),
      modelId: 'sandbox-echo',
    });
    await first.release();
    await second.release();
    await ledger.giveBackUnused();
    expect(await accountRow(funded.accountId)).toMatchObject({ balanceNanos: usdToNanos(0.5), heldNanos: 0n });
  });
});

describe.each(ledgerModes)('holds against the caps of a key, with $mode', ({ leased }) => {
  it.each([
    { cap: 'daily', seed: 21 },
    { cap: 'weekly', seed: 22 },
    { cap: 'monthly', seed: 23 },
    { cap: 'total', seed: 24 },
  ] as const)(
    'admits exactly what fits under the $cap cap among 200 concurrent holds; spend never exceeds it',
    async ({ cap, seed }) => {
      const capNanos = usdToNanos(0.5);
      const amount = usdToNanos(0.03);
      const { accountId, keyId } = await gateway.createFundedKey({ credits: 100, limits: { [cap]: 0.5 } });
      const ledger = ledgerFor(leased);
      const input = { accountId, apiKeyId: keyId, amountNanos: amount };

      const attempts = await concurrentHolds(ledger, input, 200);
      const admitted = admittedOf(attempts);
      expect(admitted).toHaveLength(Number(capNanos / amount)); // 16
      for (const refusal of refusalsOf(attempts)) {
        expect(refusal.code).toBe('GW_SPEND_CAP_REACHED');
        expect(refusal.status).toBe(429);
        expect(refusal.message).toContain(cap);
      }
      await ledger.giveBackUnused();
      expect((await keyRow(keyId)).heldNanos).toBe(amount * BigInt(admitted.length));

      const charged = await settleAllRandomly(admitted, seed);
      await ledger.giveBackUnused();
      const key = await keyRow(keyId);
      expect(key.heldNanos).toBe(0n);
      expect(key.spentTotalNanos).toBe(charged);
      const windowSpend = {
        daily: key.spentDayNanos,
        weekly: key.spentWeekNanos,
        monthly: key.spentMonthNanos,
        total: key.spentTotalNanos,
      }[cap];
      expect(windowSpend).toBe(charged);
      expect(windowSpend <= capNanos).toBe(true);

      // Second round: exactly what is left under the cap.
      const second = await concurrentHolds(ledger, input, 200);
      const secondAdmitted = admittedOf(second);
      expect(secondAdmitted).toHaveLength(Number((capNanos - charged) / amount));
      expect(
        refusalsOf(second).every((error) => error.code === 'GW_SPEND_CAP_REACHED' && error.message.includes(cap)),
      ).toBe(true);
      await Promise.all(
        secondAdmitted.map((hold) =>
          hold.settle({ costNanos: hold.amountNanos, modality: 'text', status: 'succeeded' }),
        ),
      );
      await ledger.giveBackUnused();
      const final = await keyRow(keyId);
      expect(final.heldNanos).toBe(0n);
      expect(final.spentTotalNanos <= capNanos).toBe(true);
      expect(capNanos - final.spentTotalNanos < amount).toBe(true);
      const account = await accountRow(accountId);
      expect(account.heldNanos).toBe(0n);
      expect(account.balanceNanos + (await generationTotals(accountId)).costNanos).toBe(usdToNanos(100));
    },
  );

  it('charges a settlement above its hold only the hold; the record keeps the excess, and neither the balance nor the cap is passed', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 0.1, limits: { daily: 0.1 } });
    const ledger = ledgerFor(leased);
    const hold = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.09),
      modelId: 'sandbox-echo',
    });
    const settled = await hold.settle({
      costNanos: usdToNanos(0.12),
      modality: 'text',
      status: 'succeeded',
      usage: { completionTokens: 5_000_000 },
    });
    expect(settled).toMatchObject({ holdWasOutstanding: true, costNanos: usdToNanos(0.09) });
    await ledger.giveBackUnused();

    const key = await keyRow(keyId);
    expect(key).toMatchObject({ heldNanos: 0n, spentDayNanos: usdToNanos(0.09), spentTotalNanos: usdToNanos(0.09) });
    expect(await accountRow(accountId)).toMatchObject({ heldNanos: 0n, balanceNanos: usdToNanos(0.01) });
    const [record] = await uncheckedRows<{ usd_cost_nanos: string; usage: Record<string, unknown> }>(
      db,
      sql`SELECT usd_cost_nanos, usage FROM generations WHERE id = ${settled.generationId}`,
    );
    expect(BigInt(record!.usd_cost_nanos)).toBe(usdToNanos(0.09));
    expect(record!.usage).toEqual({ completionTokens: 5_000_000, unchargedUsdCost: 0.03 });
  });

  it('charges a settlement whose hold was reconciled away only what the account and the key still have free', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 0.1, limits: { daily: 0.05 } });
    const ledger = ledgerFor(leased);
    const hold = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.04),
      modelId: 'sandbox-echo',
    });
    // Another process's sweep released the hold (or the lease holding it), and the key's headroom was then spent elsewhere.
    await uncheckedRows(db, sql`SELECT gw_release(id) FROM holds WHERE account_id = ${accountId}`);
    const other = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.03),
      modelId: 'sandbox-echo',
    });
    await other.settle({ costNanos: usdToNanos(0.03), modality: 'text', status: 'succeeded' });
    await ledger.giveBackUnused();
    const late = await hold.settle({ costNanos: usdToNanos(0.04), modality: 'text', status: 'succeeded' });
    expect(late.holdWasOutstanding).toBe(false);
    await ledger.giveBackUnused();
    expect(await keyRow(keyId)).toMatchObject({ heldNanos: 0n, spentDayNanos: usdToNanos(0.05) });
    expect(await accountRow(accountId)).toMatchObject({ heldNanos: 0n, balanceNanos: usdToNanos(0.05) });
  });

  it('names the cap that is reached when the balance would also refuse', async () => {
    // Caps are checked before the balance: a capped key on an empty-ish account reports the cap.
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 0.05, limits: { total: 0.01 } });
    await expect(
      ledgerFor(leased).reserve({ accountId, apiKeyId: keyId, amountNanos: usdToNanos(0.02), modelId: 'sandbox-echo' }),
    ).rejects.toMatchObject({
      code: 'GW_SPEND_CAP_REACHED',
    });
    const fitting = await ledgerFor(leased).reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.01),
      modelId: 'sandbox-echo',
    });
    await fitting.release();
  });
});

describe.each(ledgerModes)('interleaved hold / settle / release storms, with $mode', ({ leased }) => {
  it('keep available balance and key headroom non-negative at every moment, and the books exact at the end', async () => {
    const credits = usdToNanos(3);
    const totalCap = usdToNanos(2);
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 3, limits: { total: 2 } });
    const ledger = ledgerFor(leased);
    const random = seededRandom(31);
    let settledCost = 0n;
    let settledCount = 0;
    let releasedCount = 0;
    let refusedCount = 0;
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    const task = async (index: number) => {
      const amount = usdToNanos(0.01) + BigInt(Math.floor(random() * 150_000_000)); // 0.01 .. 0.16 USD
      const apiKeyId = index % 3 === 0 ? null : keyId;
      let hold: Reservation;
      try {
        hold = await ledger.reserve({ accountId, apiKeyId, amountNanos: amount, modelId: 'sandbox-echo' });
      } catch (error) {
        if (!isGatewayError(error) || !['GW_INSUFFICIENT_BALANCE', 'GW_SPEND_CAP_REACHED'].includes(error.code))
          throw error;
        refusedCount += 1;
        return;
      }
      await pause(Math.floor(random() * 10));
      if (random() < 0.4) {
        await hold.release();
        releasedCount += 1;
      } else {
        const cost = randomCost(random, amount);
        await hold.settle({ costNanos: cost, modality: 'text', status: 'succeeded' });
        settledCost += cost;
        settledCount += 1;
      }
    };
    // Three waves of 100, each starting while the previous is still settling.
    const waves = Promise.all(
      [0, 1, 2].map(async (wave) => {
        await pause(wave * 15);
        await Promise.all(Array.from({ length: 100 }, (_, index) => task(wave * 100 + index)));
      }),
    );
    const checks = await monitorWhile(waves, async () => {
      const account = await accountRow(accountId);
      const key = await keyRow(keyId);
      expect(account.heldNanos >= 0n).toBe(true);
      expect(account.balanceNanos - account.heldNanos >= 0n).toBe(true);
      expect(key.heldNanos >= 0n).toBe(true);
      expect(key.spentTotalNanos + key.heldNanos <= totalCap).toBe(true);
    });
    expect(checks).toBeGreaterThan(1);
    expect(settledCount + releasedCount + refusedCount).toBe(300);
    expect(settledCount).toBeGreaterThan(0);
    expect(releasedCount).toBeGreaterThan(0);
    expect(refusedCount).toBeGreaterThan(0);

    await ledger.giveBackUnused();
    const account = await accountRow(accountId);
    expect(account.heldNanos).toBe(0n);
    expect(await holdTotals(accountId)).toEqual({ count: 0, amountNanos: 0n });
    // Released holds leave no record and cost nothing.
    expect(await generationTotals(accountId)).toEqual({ count: settledCount, costNanos: settledCost });
    expect(account.balanceNanos + settledCost).toBe(credits);
    const key = await keyRow(keyId);
    expect(key.heldNanos).toBe(0n);
    expect(key.spentTotalNanos <= totalCap).toBe(true);
  });

  it('lets exactly one of a concurrent settle and release of the same hold take it back, without double-counting held credits', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 2 });
    const ledger = ledgerFor(leased);
    const amount = usdToNanos(0.04);
    const holds = admittedOf(await concurrentHolds(ledger, { accountId, apiKeyId: keyId, amountNanos: amount }, 40));
    expect(holds).toHaveLength(40);
    const random = seededRandom(41);
    const costs = holds.map((hold) => randomCost(random, hold.amountNanos));
    // This process settling while another process's reconciler releases the same hold, or the lease that
    // holds it (twice for good measure).
    const reconciler = new LedgerRepository(gateway.gateway.core.storage);
    const [leaseRow] = leased
      ? await uncheckedRows<{ id: string }>(db, sql`SELECT id FROM holds WHERE account_id = ${accountId}`)
      : [];
    const results = await Promise.all(
      holds.map(async (hold, index) => {
        const [settled] = await Promise.all([
          hold.settle({ costNanos: costs[index] ?? 0n, modality: 'text', status: 'succeeded' }),
          reconciler.release(leaseRow?.id ?? hold.id),
          reconciler.release(leaseRow?.id ?? hold.id),
        ]);
        return settled;
      }),
    );
    await ledger.giveBackUnused();
    const account = await accountRow(accountId);
    expect(account.heldNanos).toBe(0n);
    expect((await keyRow(keyId)).heldNanos).toBe(0n);
    expect(await holdTotals(accountId)).toEqual({ count: 0, amountNanos: 0n });
    // The usage was real, so each settlement charges whether or not the release got the hold first.
    const charged = results.reduce((sum, settled) => sum + settled.costNanos, 0n);
    expect(await generationTotals(accountId)).toEqual({ count: 40, costNanos: charged });
    expect(account.balanceNanos + charged).toBe(usdToNanos(2));
  });

  it('refuses to end a hold twice in one process, and makes a late release of an ended hold a no-op in SQL', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 1 });
    const ledger = ledgerFor(leased);
    const repository = new LedgerRepository(gateway.gateway.core.storage);
    const a = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.3),
      modelId: 'sandbox-echo',
    });
    const b = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.2),
      modelId: 'sandbox-echo',
    });
    await a.release();
    await expect(a.release()).rejects.toThrow(/already settled or released/);
    expect(await repository.release(a.id)).toBe(false);
    await b.settle({ costNanos: usdToNanos(0.15), modality: 'text', status: 'succeeded' });
    await expect(b.settle({ costNanos: usdToNanos(0.15), modality: 'text', status: 'succeeded' })).rejects.toThrow(
      /already settled or released/,
    );
    expect(await repository.release(b.id)).toBe(false);
    await ledger.giveBackUnused();
    expect(await accountRow(accountId)).toMatchObject({ balanceNanos: usdToNanos(0.85), heldNanos: 0n });
    expect(await keyRow(keyId)).toMatchObject({ heldNanos: 0n, spentTotalNanos: usdToNanos(0.15) });
  });

  it('gives the hold back when storage refuses the settlement, reports it once, and ends the reservation', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 1 });
    const core = gateway.gateway.core;
    const reported: string[] = [];
    const ledger = new CreditLedger(new LedgerRepository(core.storage), core.instanceId, {
      ...(leased ? { leases: { maxLeaseNanos: usdToNanos(1), idleMs: 60_000 } } : {}),
      reportFailure: (_error, reservation) => reported.push(reservation.id),
      reportLeaseFailure: () => undefined,
    });
    const hold = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.2),
      modelId: 'sandbox-echo',
    });
    let ended = 0;
    hold.whenEnded(() => ended++);
    // PostgreSQL's jsonb cannot hold U+0000: the record's insert fails, and with it the whole settlement.
    await expect(
      hold.settle({ costNanos: usdToNanos(0.1), modality: 'text', status: 'succeeded', usage: { note: '\u0000' } }),
    ).rejects.toThrow();
    expect(reported).toEqual([hold.id]);
    expect(ended).toBe(1);
    expect(hold.isEnded).toBe(true);
    await expect(hold.release()).rejects.toThrow(/already settled or released/);
    await ledger.close();
    expect(await accountRow(accountId)).toMatchObject({ balanceNanos: usdToNanos(1), heldNanos: 0n });
    expect(await keyRow(keyId)).toMatchObject({ heldNanos: 0n, spentTotalNanos: 0n });
  });
});

describe('spend windows (ledger clock)', () => {
  /** A ledger of this gateway process (so its reconciler keeps the holds) whose clock the test sets. */
  function ledgerAt(): { ledger: CreditLedger; setNow: (iso: string) => void } {
    let now = new Date();
    const core = gateway.gateway.core;
    const ledger = new CreditLedger(new LedgerRepository(core.storage), core.instanceId, {
      reportFailure: () => undefined,
      reportLeaseFailure: () => undefined,
      clock: () => now,
    });
    return { ledger, setNow: (iso) => (now = new Date(iso)) };
  }

  async function spend(ledger: CreditLedger, ids: { accountId: string; keyId: string }, usd: number): Promise<void> {
    const hold = await ledger.reserve({
      accountId: ids.accountId,
      apiKeyId: ids.keyId,
      amountNanos: usdToNanos(usd),
      modelId: 'sandbox-echo',
    });
    await hold.settle({ costNanos: usdToNanos(usd), modality: 'text', status: 'succeeded' });
  }

  async function expectCapRefusal(
    ledger: CreditLedger,
    ids: { accountId: string; keyId: string },
    { usd, cap }: { usd: number; cap: string },
  ): Promise<void> {
    const refusal = ledger.reserve({
      accountId: ids.accountId,
      apiKeyId: ids.keyId,
      amountNanos: usdToNanos(usd),
      modelId: 'sandbox-echo',
    });
    await expect(refusal).rejects.toBeInstanceOf(GatewayError);
    await expect(refusal).rejects.toMatchObject({
      code: 'GW_SPEND_CAP_REACHED',
      status: 429,
      message: expect.stringContaining(cap),
    });
  }

  async function expectAdmittedThenRelease(
    ledger: CreditLedger,
    ids: { accountId: string; keyId: string },
    usd: number,
  ): Promise<void> {
    const hold = await ledger.reserve({
      accountId: ids.accountId,
      apiKeyId: ids.keyId,
      amountNanos: usdToNanos(usd),
      modelId: 'sandbox-echo',
    });
    await hold.release();
  }

  it('resets the daily cap at midnight UTC, and not before', async () => {
    const ids = await gateway.createFundedKey({ credits: 100, limits: { daily: 1 } });
    const { ledger, setNow } = ledgerAt();
    setNow('2026-11-20T00:00:00Z');
    await spend(ledger, ids, 0.6);
    setNow('2026-11-20T23:59:59.999Z');
    await spend(ledger, ids, 0.3);
    await expectCapRefusal(ledger, ids, { usd: 0.2, cap: 'daily' });
    // 01:00 on the 21st at UTC+02:00 is still 23:00 UTC on the 20th.
    setNow('2026-11-21T01:00:00+02:00');
    await expectCapRefusal(ledger, ids, { usd: 0.2, cap: 'daily' });
    setNow('2026-11-21T00:00:00Z');
    await expectAdmittedThenRelease(ledger, ids, 1);
    await spend(ledger, ids, 0.25);
    const key = await keyRow(ids.keyId);
    expect(key).toMatchObject({
      dayStart: '2026-11-21',
      spentDayNanos: usdToNanos(0.25),
      spentTotalNanos: usdToNanos(1.15),
      heldNanos: 0n,
    });
    await expectCapRefusal(ledger, ids, { usd: 0.75 + 1e-9, cap: 'daily' });
    await expectAdmittedThenRelease(ledger, ids, 0.75);
  });

  it('runs the weekly cap over ISO weeks starting Monday 00:00 UTC', async () => {
    const ids = await gateway.createFundedKey({ credits: 100, limits: { weekly: 1 } });
    const { ledger, setNow } = ledgerAt();
    setNow('2026-11-16T00:00:00Z'); // Monday
    await spend(ledger, ids, 0.6);
    setNow('2026-11-22T23:59:59Z'); // the Sunday after: same ISO week (a Sunday-based week would have reset)
    await expectCapRefusal(ledger, ids, { usd: 0.5, cap: 'weekly' });
    await spend(ledger, ids, 0.4);
    await expectCapRefusal(ledger, ids, { usd: 1e-9, cap: 'weekly' });
    setNow('2026-11-23T00:00:00Z'); // next Monday
    await expectAdmittedThenRelease(ledger, ids, 1);
    await spend(ledger, ids, 0.1);
    expect(await keyRow(ids.keyId)).toMatchObject({
      weekStart: '2026-11-23',
      spentWeekNanos: usdToNanos(0.1),
      spentTotalNanos: usdToNanos(1.1),
    });

    // A week spanning New Year starts in the old year: Monday 2026-12-28 .. Sunday 2027-01-03.
    setNow('2026-12-28T08:00:00Z');
    await spend(ledger, ids, 0.7);
    setNow('2027-01-03T12:00:00Z');
    await expectCapRefusal(ledger, ids, { usd: 0.4, cap: 'weekly' });
    setNow('2027-01-04T00:00:00Z');
    await expectAdmittedThenRelease(ledger, ids, 1);
  });

  it('resets the monthly cap on the first of the month UTC, and spend of the previous month does not count', async () => {
    const ids = await gateway.createFundedKey({ credits: 100, limits: { monthly: 1 } });
    const { ledger, setNow } = ledgerAt();
    setNow('2026-10-31T23:59:59Z');
    await spend(ledger, ids, 0.8);
    setNow('2026-11-01T00:30:00+02:00'); // still October in UTC
    await expectCapRefusal(ledger, ids, { usd: 0.3, cap: 'monthly' });
    setNow('2026-11-01T00:00:00Z');
    await expectAdmittedThenRelease(ledger, ids, 1);
    await spend(ledger, ids, 0.9);
    await expectCapRefusal(ledger, ids, { usd: 0.2, cap: 'monthly' });
    expect(await keyRow(ids.keyId)).toMatchObject({ monthStart: '2026-11-01', spentMonthNanos: usdToNanos(0.9) });
  });

  it('never resets the total cap, and counts outstanding holds against it', async () => {
    const ids = await gateway.createFundedKey({ credits: 100, limits: { daily: 1, total: 1.5 } });
    const { ledger, setNow } = ledgerAt();
    setNow('2026-05-10T10:00:00Z');
    await spend(ledger, ids, 0.9);
    setNow('2026-06-20T10:00:00Z');
    // The daily window is fresh, the total is not.
    await expectCapRefusal(ledger, ids, { usd: 0.7, cap: 'total' });
    const held = await ledger.reserve({
      accountId: ids.accountId,
      apiKeyId: ids.keyId,
      amountNanos: usdToNanos(0.5),
      modelId: 'sandbox-echo',
    });
    // An outstanding hold counts against the caps until it is settled or released.
    await expectCapRefusal(ledger, ids, { usd: 0.2, cap: 'total' });
    await held.release();
    await expectAdmittedThenRelease(ledger, ids, 0.6);
  });
});

describe('inactive keys', () => {
  it('refuses holds on a disabled or revoked key even when the ledger is called directly', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 5 });
    const ledger = services().ledger;
    const hold = (apiKeyId: string, forAccount = accountId) =>
      ledger.reserve({ accountId: forAccount, apiKeyId, amountNanos: usdToNanos(0.1), modelId: 'sandbox-echo' });

    const inFlight = await hold(keyId);
    await services().apiKeys.update(accountId, keyId, { isActive: false });
    await expect(hold(keyId)).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS', status: 401 });
    // A request admitted before the key was disabled still settles: its usage was real.
    const settled = await inFlight.settle({ costNanos: usdToNanos(0.05), modality: 'text', status: 'succeeded' });
    expect(settled.holdWasOutstanding).toBe(true);

    await services().apiKeys.update(accountId, keyId, { isActive: true });
    await (await hold(keyId)).release();

    await services().apiKeys.revoke(accountId, keyId);
    await expect(hold(keyId)).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS', status: 401 });
    const racing = await concurrentHolds(ledger, { accountId, apiKeyId: keyId, amountNanos: 1n }, 20);
    expect(refusalsOf(racing).map((error) => error.code)).toEqual(
      Array.from({ length: 20 }, () => 'GW_INVALID_CREDENTIALS'),
    );

    // A key is only good for its own account.
    const other = await gateway.createFundedKey({ credits: 5 });
    await expect(hold(other.keyId)).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS' });

    expect(await accountRow(accountId)).toMatchObject({ balanceNanos: usdToNanos(4.95), heldNanos: 0n });
    expect(await keyRow(keyId)).toMatchObject({ heldNanos: 0n, spentTotalNanos: usdToNanos(0.05) });
    expect(await holdTotals(accountId)).toEqual({ count: 0, amountNanos: 0n });
  });
});

describe('batched ledger statements', () => {
  const generation = (generationId: string, accountId: string, apiKeyId: string | null) => ({
    generationId,
    accountId,
    apiKeyId,
    modality: 'text' as const,
    model: 'sandbox-echo',
    status: 'succeeded',
    request: null,
    usage: { promptTokens: 1 },
    durationMs: 1,
  });
  const holdItem = (
    hold: string,
    { account, key, amount }: { account: string; key: string | null; amount: bigint },
  ) => ({
    hold,
    account,
    key,
    amount: String(amount),
    now: new Date().toISOString(),
  });
  const settleItem = (
    hold: string,
    { account, key, cost, generationId }: { account: string; key: string | null; cost: bigint; generationId: string },
  ) => ({
    hold,
    account,
    key,
    claim: String(cost),
    cost: String(cost),
    now: new Date().toISOString(),
    generation: generationId,
    modality: 'text',
    model: 'sandbox-echo',
    status: 'succeeded',
    request: null,
    usage: { promptTokens: 1 },
    durationMs: 1,
  });

  it('a hold retried after its batch committed unseen is admitted once, not refused on its own id', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 1 });
    const repository = new LedgerRepository(gateway.gateway.core.storage);
    const input = {
      holdId: `hold_retried_${accountId}`,
      accountId,
      apiKeyId: keyId,
      amountNanos: 1_000n,
      instanceId: gateway.gateway.core.instanceId,
      now: new Date(),
    };
    expect(await repository.hold(input)).toBe('ok');
    // The same hold again, as the one-by-one retry of a batch whose commit went through sends it.
    expect(await repository.hold(input)).toBe('ok');
    expect(await holdTotals(accountId)).toEqual({ count: 1, amountNanos: 1_000n });
    expect(await accountRow(accountId)).toMatchObject({ heldNanos: 1_000n });
    expect(await keyRow(keyId)).toMatchObject({ heldNanos: 1_000n });
    expect(await repository.release(input.holdId)).toBe(true);
  });

  it('gw_hold_batch and gw_settle_batch apply each item as the single call would, in order', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 0.000003, limits: { total: 0.0000025 } });
    const instanceId = gateway.gateway.core.instanceId;
    const items = [
      holdItem('hold_b1', { account: accountId, key: keyId, amount: 1_000n }),
      holdItem('hold_b2', { account: accountId, key: keyId, amount: 1_000n }),
      holdItem('hold_b3', { account: accountId, key: keyId, amount: 1_000n }),
      holdItem('hold_b4', { account: accountId, key: null, amount: 1_500n }),
    ];
    const [holdRow] = await uncheckedRows<{ outcomes: string[] }>(
      db,
      sql`SELECT gw_hold_batch(${JSON.stringify(items)}::jsonb, ${instanceId}) AS outcomes`,
    );
    // The third passes the balance but not the key's total cap; the fourth (no key) finds only 1,000 available.
    expect(holdRow!.outcomes).toEqual(['ok', 'ok', 'total', 'balance']);
    expect(await holdTotals(accountId)).toEqual({ count: 2, amountNanos: 2_000n });

    const settles = [
      settleItem('hold_b1', { account: accountId, key: keyId, cost: 600n, generationId: `gen_b1_${accountId}` }),
      settleItem('hold_gone', { account: accountId, key: keyId, cost: 50n, generationId: `gen_b2_${accountId}` }),
    ];
    const [settleRow] = await uncheckedRows<{ settled: unknown }>(
      db,
      sql`SELECT gw_settle_batch(${JSON.stringify(settles)}::jsonb) AS settled`,
    );
    expect(settleRow!.settled).toEqual([
      [true, '600', null],
      [false, '50', null],
    ]);
    expect(await generationTotals(accountId)).toEqual({ count: 2, costNanos: 650n });
    expect(await accountRow(accountId)).toMatchObject({ balanceNanos: 3_000n - 650n, heldNanos: 1_000n });
    expect(await keyRow(keyId)).toMatchObject({ spentTotalNanos: 650n, heldNanos: 1_000n });

    // One failing item rolls the whole batch back: the hold it would have ended stays, nothing is charged.
    const poisoned = [
      settleItem('hold_b2', { account: accountId, key: keyId, cost: 300n, generationId: `gen_b3_${accountId}` }),
      settleItem('hold_b2', { account: accountId, key: keyId, cost: 300n, generationId: `gen_b1_${accountId}` }),
    ];
    await expect(uncheckedRows(db, sql`SELECT gw_settle_batch(${JSON.stringify(poisoned)}::jsonb)`)).rejects.toThrow();
    expect(await generationTotals(accountId)).toEqual({ count: 2, costNanos: 650n });
    expect(await holdTotals(accountId)).toEqual({ count: 1, amountNanos: 1_000n });
    await uncheckedRows(db, sql`SELECT gw_release('hold_b2')`);
    expect(await accountRow(accountId)).toMatchObject({ balanceNanos: 2_350n, heldNanos: 0n });
  });

  it('settles every other settlement of a batch when one of them fails, each charged exactly once', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 1 });
    const repository = new LedgerRepository(gateway.gateway.core.storage);
    const instanceId = gateway.gateway.core.instanceId;
    const holdIds = Array.from({ length: 17 }, (_, index) => `hold_p${index}_${accountId}`);
    const held = await Promise.all(
      holdIds.map((holdId) =>
        repository.hold({ holdId, accountId, apiKeyId: keyId, amountNanos: 1_000n, instanceId, now: new Date() }),
      ),
    );
    expect(held.every((outcome) => outcome === 'ok')).toBe(true);
    const settle = (holdId: string, generationId: string) =>
      repository.settle({
        holdId,
        claimNanos: 700n,
        costNanos: 700n,
        now: new Date(),
        generation: generation(generationId, accountId, keyId),
      });
    const [first, ...rest] = holdIds;
    await settle(first!, `gen_first_${accountId}`);
    // The last one reuses the first record's id, so it cannot be written; it arrives while others run, in a batch.
    const outcomes = await Promise.allSettled(
      rest.map((holdId, index) =>
        settle(holdId, index === 15 ? `gen_first_${accountId}` : `gen_p${index}_${accountId}`),
      ),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      ...Array.from({ length: 15 }, () => 'fulfilled'),
      'rejected',
    ]);
    expect(await generationTotals(accountId)).toEqual({ count: 16, costNanos: 16n * 700n });
    expect(await holdTotals(accountId)).toEqual({ count: 1, amountNanos: 1_000n });
    expect(await repository.release(holdIds[16]!)).toBe(true);
    expect(await accountRow(accountId)).toMatchObject({ balanceNanos: usdToNanos(1) - 16n * 700n, heldNanos: 0n });
    expect(await keyRow(keyId)).toMatchObject({ spentTotalNanos: 16n * 700n, heldNanos: 0n });
  });
});

describe('the whole ledger', () => {
  it('balances for every account once nothing is outstanding: grants = balance + charges, held = sum of holds', async () => {
    const rows = await uncheckedRows<{
      id: string;
      balance: string;
      held: string;
      grants: string;
      charges: string;
      holds: string;
    }>(
      db,
      sql`SELECT a.id, a.balance_nanos::text AS balance, a.held_nanos::text AS held,
            (SELECT COALESCE(sum(amount_nanos), 0) FROM credit_grants g WHERE g.account_id = a.id)::text AS grants,
            (SELECT COALESCE(sum(usd_cost_nanos), 0) FROM generations c WHERE c.account_id = a.id)::text AS charges,
            (SELECT COALESCE(sum(amount_nanos), 0) FROM holds h WHERE h.account_id = a.id)::text AS holds
          FROM accounts a`,
    );
    expect(rows.length).toBeGreaterThan(5);
    for (const row of rows) {
      expect({ id: row.id, books: BigInt(row.grants) - BigInt(row.charges) }).toEqual({
        id: row.id,
        books: BigInt(row.balance),
      });
      expect({ id: row.id, held: BigInt(row.held) }).toEqual({ id: row.id, held: BigInt(row.holds) });
      expect(BigInt(row.balance) >= 0n).toBe(true);
    }
    const keyRows = await uncheckedRows<{ id: string; held: string; holds: string }>(
      db,
      sql`SELECT k.id, k.held_nanos::text AS held, (SELECT COALESCE(sum(amount_nanos), 0) FROM holds h WHERE h.api_key_id = k.id)::text AS holds FROM api_keys k`,
    );
    for (const row of keyRows)
      expect({ id: row.id, held: BigInt(row.held) }).toEqual({ id: row.id, held: BigInt(row.holds) });
  });
});
