/**
 * Credit leases: the block of an account's credit a process admits requests against in memory. What must
 * hold besides the ledger's races (ledger-races.test.ts runs those with leases too): unused credit goes
 * back when a lease is idle, a key's new caps or state apply at once to a lease taken under the old ones,
 * and credit another process leased but does not use comes back to serve a request it would strand.
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreditLedger, type CreditLedgerOptions } from '../../src/billing/credit-ledger.ts';
import { usdToNanos } from '../../src/domain/money.ts';
import { LedgerRepository } from '../../src/storage/ledger-repository.ts';
import { accounts, apiKeys } from '../../src/storage/schema.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

let gateway: TestGateway;
const ledgers: CreditLedger[] = [];

beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(async () => {
  for (const ledger of ledgers) await ledger.close();
  await gateway?.close();
});

/** A ledger with leases on the gateway's storage, as another process (`instanceId`) would have it. */
function leasingLedger(
  instanceId: string,
  leases: Partial<NonNullable<CreditLedgerOptions['leases']>> = {},
): CreditLedger {
  const core = gateway.gateway.core;
  const ledger = new CreditLedger(new LedgerRepository(core.storage), instanceId, {
    leases: { maxLeaseNanos: usdToNanos(1), idleMs: 60_000, ...leases },
    reportFailure: () => undefined,
    reportLeaseFailure: () => undefined,
  });
  ledgers.push(ledger);
  return ledger;
}

async function held(accountId: string, keyId: string): Promise<{ account: bigint; key: bigint; rows: number }> {
  const db = gateway.gateway.core.storage.db;
  const [account] = await db.select().from(accounts).where(eq(accounts.id, accountId));
  const [key] = await db.select().from(apiKeys).where(eq(apiKeys.id, keyId));
  const [rows] = await uncheckedRows<{ count: string }>(
    db,
    sql`SELECT count(*)::text AS count FROM holds WHERE account_id = ${accountId}`,
  );
  return { account: account?.heldNanos ?? -1n, key: key?.heldNanos ?? -1n, rows: Number(rows?.count ?? -1) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The key's row once each credit is settled at 0.1 USD and the ledger has given back what it leased unused. */
async function keyAfterSettling(
  ledger: CreditLedger,
  keyId: string,
  credits: ReadonlyArray<Awaited<ReturnType<CreditLedger['reserve']>>>,
) {
  await Promise.all(
    credits.map((credit) => credit.settle({ costNanos: usdToNanos(0.1), modality: 'text', status: 'succeeded' })),
  );
  await ledger.giveBackUnused();
  const [key] = await gateway.gateway.core.storage.db.select().from(apiKeys).where(eq(apiKeys.id, keyId));
  return key;
}

describe('credit leases', () => {
  it('hold more than the request while in use, and give the rest back once idle', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 10 });
    const ledger = leasingLedger(gateway.gateway.core.instanceId, { idleMs: 100 });
    const first = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.01),
      modelId: 'sandbox-echo',
    });
    const whileRunning = await held(accountId, keyId);
    // One lease row, sized for several requests like this one: the next ones need no statement.
    expect(whileRunning.rows).toBe(1);
    expect(whileRunning.account).toBeGreaterThan(usdToNanos(0.01));
    expect(whileRunning.key).toBe(whileRunning.account);
    await first.settle({ costNanos: usdToNanos(0.004), modality: 'text', status: 'succeeded' });
    const second = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.01),
      modelId: 'sandbox-echo',
    });
    expect((await held(accountId, keyId)).account).toBe(whileRunning.account - usdToNanos(0.004));
    await second.release();
    // Idle for longer than idleMs: the row and everything it held go back.
    await sleep(400);
    expect(await held(accountId, keyId)).toEqual({ account: 0n, key: 0n, rows: 0 });
    const [account] = await gateway.gateway.core.storage.db.select().from(accounts).where(eq(accounts.id, accountId));
    expect(account?.balanceNanos).toBe(usdToNanos(10) - usdToNanos(0.004));
  });

  it('applies a cap lowered while a lease is held to the very next request', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 10, limits: { total: 1 } });
    const ledger = gateway.gateway.core.services.ledger;
    const running = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.1),
      modelId: 'sandbox-echo',
    });
    // The lease took well beyond 0.1 under the 1 USD cap...
    expect((await held(accountId, keyId)).key).toBeGreaterThan(usdToNanos(0.3));
    // The operator lowers it (the owner may not below what work under way holds).
    await gateway.gateway.core.services.apiKeys.setLimits(null, keyId, { total: 0.2 });
    // ...but 0.1 running plus 0.15 is past the new cap of 0.2.
    await expect(
      ledger.reserve({ accountId, apiKeyId: keyId, amountNanos: usdToNanos(0.15), modelId: 'sandbox-echo' }),
    ).rejects.toMatchObject({
      code: 'GW_SPEND_CAP_REACHED',
      message: expect.stringContaining('total'),
    });
    const fits = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.1),
      modelId: 'sandbox-echo',
    });
    expect(await keyAfterSettling(ledger, keyId, [running, fits])).toMatchObject({
      spentTotalNanos: usdToNanos(0.2),
      heldNanos: 0n,
    });
  });

  it('waits for a give-back under way rather than refuse a request that the credit coming back fits', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 10, limits: { total: 1 } });
    const { ledger, apiKeys: keys } = gateway.gateway.core.services;
    const db = gateway.gateway.core.storage.db;
    const running = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.1),
      modelId: 'sandbox-echo',
    });
    // Another transaction holds the lease's row: the give-back the cap change starts waits on it.
    let unlock = () => {};
    const unlocked = new Promise<void>((resolve) => (unlock = resolve));
    let lockTaken = () => {};
    const taken = new Promise<void>((resolve) => (lockTaken = resolve));
    const holding = db.transaction(async (tx) => {
      await tx.execute(sql`SELECT 1 FROM holds WHERE account_id = ${accountId} FOR UPDATE`);
      lockTaken();
      await unlocked;
    });
    await taken;
    await keys.setLimits(null, keyId, { total: 0.2 });
    const fits = ledger.reserve({ accountId, apiKeyId: keyId, amountNanos: usdToNanos(0.1), modelId: 'sandbox-echo' });
    // Meanwhile the new lease is refused: storage still counts the retired lease's unused credit as held.
    await sleep(300);
    unlock();
    await holding;
    // Once that credit is back, the request is admitted.
    const admitted = await fits;
    expect(await keyAfterSettling(ledger, keyId, [running, admitted])).toMatchObject({
      spentTotalNanos: usdToNanos(0.2),
      heldNanos: 0n,
    });
  });

  it('refuses a key disabled while its lease still holds credit', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 10 });
    const ledger = gateway.gateway.core.services.ledger;
    // Settled before the key changes: a settlement still on its way would close the lease after the reads below.
    await (
      await ledger.reserve({ accountId, apiKeyId: keyId, amountNanos: usdToNanos(0.01), modelId: 'sandbox-echo' })
    ).settle({ costNanos: 0n, modality: 'text', status: 'succeeded' });
    await gateway.gateway.core.services.apiKeys.update(accountId, keyId, { isActive: false });
    await expect(
      ledger.reserve({ accountId, apiKeyId: keyId, amountNanos: usdToNanos(0.01), modelId: 'sandbox-echo' }),
    ).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS' });
    await ledger.giveBackUnused();
    expect(await held(accountId, keyId)).toEqual({ account: 0n, key: 0n, rows: 0 });
  });

  it('admits nothing more out of a lease once an operator takes the credit away, and charges running requests no further than zero', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 1 });
    const ledger = gateway.gateway.core.services.ledger;
    const running = await ledger.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.1),
      modelId: 'sandbox-echo',
    });
    // The lease holds well beyond the 0.1 running; the operator then leaves the account 0.05.
    expect((await held(accountId, keyId)).account).toBeGreaterThan(usdToNanos(0.3));
    await gateway.gateway.core.services.accounts.addCredits(accountId, -0.95, 'chargeback');
    await expect(
      ledger.reserve({ accountId, apiKeyId: keyId, amountNanos: usdToNanos(0.01), modelId: 'sandbox-echo' }),
    ).rejects.toMatchObject({ code: 'GW_INSUFFICIENT_BALANCE' });
    // The running request costs its whole hold, more than is left: it is charged what is left.
    const settled = await running.settle({ costNanos: usdToNanos(0.1), modality: 'text', status: 'succeeded' });
    await ledger.giveBackUnused();
    const [account] = await gateway.gateway.core.storage.db.select().from(accounts).where(eq(accounts.id, accountId));
    expect(account).toMatchObject({ balanceNanos: 0n, heldNanos: 0n });
    const [record] = await uncheckedRows<{ usd_cost_nanos: string }>(
      gateway.gateway.core.storage.db,
      sql`SELECT usd_cost_nanos FROM generations WHERE id = ${settled.generationId}`,
    );
    expect(BigInt(record!.usd_cost_nanos)).toBe(usdToNanos(0.05));
  });

  it("closes a lease emptied by another process's request while it gives back everything at once", async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 1 });
    const ledger = leasingLedger('inst_lease_test_c');
    await (
      await ledger.reserve({ accountId, apiKeyId: keyId, amountNanos: usdToNanos(0.1), modelId: 'sandbox-echo' })
    ).settle({ costNanos: 1n, modality: 'text', status: 'succeeded' });
    // The request of another process arrives (its give-back still on its way to storage), then a shutdown.
    ledger.handleEvent({ type: 'give-back-credit', accountId });
    await ledger.giveBackUnused();
    expect(await held(accountId, keyId)).toEqual({ account: 0n, key: 0n, rows: 0 });
  });

  it('gets back credit another process leased and does not use, instead of refusing a request that fits the balance', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 1 });
    const a = leasingLedger('inst_lease_test_a');
    // B's refusal makes A give back, as the storage event would in the other process.
    const b = leasingLedger('inst_lease_test_b', {
      askPeers: async (asking) => {
        a.handleEvent({ type: 'give-back-credit', accountId: asking });
        await sleep(50);
      },
    });
    const small = await a.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.25),
      modelId: 'sandbox-echo',
    });
    // A's lease holds more than 0.25 of the 1 USD: 0.7 is not free until A gives back what it does not use.
    expect(1_000_000_000n - (await held(accountId, keyId)).account).toBeLessThan(usdToNanos(0.7));
    const large = await b.reserve({
      accountId,
      apiKeyId: keyId,
      amountNanos: usdToNanos(0.7),
      modelId: 'sandbox-echo',
    });
    // Past what is left, it is a refusal still.
    await expect(
      b.reserve({ accountId, apiKeyId: null, amountNanos: usdToNanos(0.06), modelId: 'sandbox-echo' }),
    ).rejects.toMatchObject({ code: 'GW_INSUFFICIENT_BALANCE' });
    await small.release();
    await large.settle({ costNanos: usdToNanos(0.7), modality: 'text', status: 'succeeded' });
    await Promise.all([a.giveBackUnused(), b.giveBackUnused()]);
    expect(await held(accountId, keyId)).toEqual({ account: 0n, key: 0n, rows: 0 });
  });
});
