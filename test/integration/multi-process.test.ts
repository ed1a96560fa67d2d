/**
 * Two gateway processes on one PostgreSQL database: no interleaving of their requests may overspend, and
 * a key revoked through one process is refused by the other at once (LISTEN/NOTIFY cache invalidation).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { queryRows } from '../../src/storage/database.ts';
import { accounts, apiKeys } from '../../src/storage/schema.ts';
import {
  startLedgerWorker,
  stopAllLedgerWorkers,
  type LedgerWorker,
  type SettleResult,
  type StormResult,
} from '../support/ledger-worker.ts';
import { shippedConfigPath, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

// On the run's PostgreSQL server (TEST_DATABASE_URL, or the embedded server the run started), as several
// gateway processes share one DATABASE_URL. The embedded default itself belongs to one process (its data
// directory is locked).
describe('two gateway processes on one PostgreSQL database', () => {
  let gateway: TestGateway;
  let workers: [LedgerWorker, LedgerWorker];
  const dataDirs: string[] = [];

  beforeAll(async () => {
    gateway = await startTestGateway();
    const url = gateway.database.url;
    if (!url) throw new Error('expected a PostgreSQL test database');
    const configText = readFileSync(shippedConfigPath, 'utf8');
    const start = () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-worker-'));
      dataDirs.push(dataDir);
      return startLedgerWorker({ storage: { kind: 'postgres', url }, configText, dataDir, lifetimeMs: 180_000 });
    };
    workers = await Promise.all([start(), start()]);
  });

  afterEach(async () => {
    // A failed test must not leave either process busy or wedged for the next one: check they still run.
    for (const worker of workers ?? [])
      expect(worker.hasExited, `worker ${worker.pid} exited early:\n${worker.recentOutput}`).toBe(false);
  });

  afterAll(async () => {
    await Promise.all((workers ?? []).map((worker) => worker.stop()));
    await stopAllLedgerWorkers();
    await gateway?.close();
    for (const dataDir of dataDirs) rmSync(dataDir, { recursive: true, force: true });
  });

  const db = () => gateway.gateway.core.storage.db;

  async function accountState(
    accountId: string,
  ): Promise<{ balanceNanos: bigint; heldNanos: bigint; holds: number; generations: number; chargedNanos: bigint }> {
    const [account] = await db().select().from(accounts).where(eq(accounts.id, accountId));
    const [totals] = await queryRows<{ count: string; cost: string; holds: string }>(
      db(),
      sql`SELECT (SELECT count(*) FROM generations WHERE account_id = ${accountId})::text AS count,
                 (SELECT COALESCE(sum(usd_cost_nanos), 0) FROM generations WHERE account_id = ${accountId})::text AS cost,
                 (SELECT count(*) FROM holds WHERE account_id = ${accountId})::text AS holds`,
    );
    if (!account || !totals) throw new Error(`no account ${accountId}`);
    return {
      balanceNanos: account.balanceNanos,
      heldNanos: account.heldNanos,
      holds: Number(totals.holds),
      generations: Number(totals.count),
      chargedNanos: BigInt(totals.cost),
    };
  }

  /** Both processes give back the credit they leased and no hold uses, so held sums are exactly the holds'. */
  const giveBackUnused = () => Promise.all(workers.map((worker) => worker.call('giveBackUnused', {})));

  /** Nothing outstanding, nothing negative, and every nano granted is either still there or charged. */
  async function expectConservation(accountId: string, creditsNanos: bigint, results: SettleResult[]): Promise<void> {
    await giveBackUnused();
    const state = await accountState(accountId);
    const settledCost = results.reduce((sum, result) => sum + result.settledCostNanos, 0n);
    const settledCount = results.reduce((sum, result) => sum + result.settledCount, 0);
    expect(state.heldNanos).toBe(0n);
    expect(state.holds).toBe(0);
    expect(state.balanceNanos >= 0n).toBe(true);
    expect(state.generations).toBe(settledCount);
    expect(state.chargedNanos).toBe(settledCost);
    expect(state.balanceNanos + settledCost).toBe(creditsNanos);
    for (const result of results) expect(result.settledWithoutHold).toBe(0);
  }

  /** Both processes take 150 holds each, starting at the same instant on warm connection pools. */
  async function holdBoth(args: {
    accountId: string;
    apiKeyId: string | null;
    amountNanos: bigint;
    settleSeed?: number;
  }): Promise<StormResult[]> {
    const startAt = Date.now() + 300;
    const results = await Promise.all(
      workers.map((worker, index) =>
        worker.call('holdStorm', {
          ...args,
          count: 150,
          startAt,
          ...(args.settleSeed === undefined ? {} : { settleSeed: args.settleSeed + index }),
        }),
      ),
    );
    for (const result of results) expect(result.unexpected).toEqual([]);
    return results;
  }

  async function settleBoth(seed: number): Promise<SettleResult[]> {
    const startAt = Date.now() + 100;
    return Promise.all(workers.map((worker, index) => worker.call('settleAll', { seed: seed + index, startAt })));
  }

  const sumOf = (results: StormResult[], pick: (result: StormResult) => number) =>
    results.reduce((sum, result) => sum + pick(result), 0);

  it.each([
    // With room for 142 holds both processes get some; with room for 14 one process may take them all.
    { withKey: true, credits: 10, seed: 100, bothAdmit: true },
    { withKey: false, credits: 1, seed: 200, bothAdmit: false },
  ])(
    'admits exactly the holds that fit the balance among 2 x 150 concurrent ones (API key: $withKey), and conserves every nano',
    async ({ withKey, credits, seed, bothAdmit }) => {
      const creditsNanos = usdToNanos(credits);
      const amount = usdToNanos(0.07);
      const fits = Number(creditsNanos / amount); // 142 of 300 with 10 USD, 14 with 1 USD
      const { accountId, keyId } = await gateway.createFundedKey({ credits });
      const results = await holdBoth({ accountId, apiKeyId: withKey ? keyId : null, amountNanos: amount });
      expect(sumOf(results, (result) => result.admitted)).toBe(fits);
      expect(sumOf(results, (result) => result.refusals['GW_INSUFFICIENT_BALANCE/403'] ?? 0)).toBe(300 - fits);
      // With room for many, both processes really got some of the same credits.
      if (bothAdmit) expect(results.map((result) => result.admitted > 0)).toEqual([true, true]);
      await giveBackUnused();
      const held = await accountState(accountId);
      expect(held).toMatchObject({ balanceNanos: creditsNanos, heldNanos: amount * BigInt(fits) });
      // One lease per process holds all of that process's admitted holds.
      expect(held.holds).toBe(results.filter((result) => result.admitted > 0).length);

      await expectConservation(accountId, creditsNanos, await settleBoth(seed));
    },
  );

  it.each(['daily', 'total'] as const)(
    'admits exactly what fits under a %s cap across both processes; spend never exceeds it',
    async (cap) => {
      const capNanos = usdToNanos(2);
      const amount = usdToNanos(0.03);
      const { accountId, keyId } = await gateway.createFundedKey({ credits: 100, limits: { [cap]: 2 } });
      const results = await holdBoth({ accountId, apiKeyId: keyId, amountNanos: amount });
      const fits = Number(capNanos / amount); // 66
      expect(sumOf(results, (result) => result.admitted)).toBe(fits);
      expect(sumOf(results, (result) => result.refusals['GW_SPEND_CAP_REACHED/429'] ?? 0)).toBe(300 - fits);
      for (const result of results) {
        for (const message of result.refusalMessages) expect(message).toContain(cap);
      }
      const settled = await settleBoth(cap === 'daily' ? 300 : 400);
      await expectConservation(accountId, usdToNanos(100), settled);
      const [key] = await db().select().from(apiKeys).where(eq(apiKeys.id, keyId));
      if (!key) throw new Error('key vanished');
      expect(key.heldNanos).toBe(0n);
      const spent = cap === 'daily' ? key.spentDayNanos : key.spentTotalNanos;
      expect(spent <= capNanos).toBe(true);
      expect(spent).toBe(settled.reduce((sum, result) => sum + result.settledCostNanos, 0n));
    },
  );

  it('keeps the books exact when both processes hold and settle at the same time', async () => {
    const creditsNanos = usdToNanos(5);
    const capNanos = usdToNanos(4);
    const amount = usdToNanos(0.05);
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 5, limits: { total: 4 } });
    let monitoring = true;
    let checks = 0;
    const monitor = (async () => {
      while (monitoring) {
        const state = await accountState(accountId);
        const [key] = await db().select().from(apiKeys).where(eq(apiKeys.id, keyId));
        expect(state.balanceNanos - state.heldNanos >= 0n).toBe(true);
        expect(key !== undefined && key.spentTotalNanos + key.heldNanos <= capNanos).toBe(true);
        checks += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const rounds: StormResult[] = [];
    try {
      // Each process settles its holds while the other may still be taking new ones; a second round
      // starts from whatever is left.
      rounds.push(...(await holdBoth({ accountId, apiKeyId: keyId, amountNanos: amount, settleSeed: 500 })));
      rounds.push(...(await holdBoth({ accountId, apiKeyId: null, amountNanos: amount, settleSeed: 600 })));
    } finally {
      monitoring = false;
      await monitor;
    }
    expect(checks).toBeGreaterThan(2);
    expect(sumOf(rounds, (result) => result.admitted)).toBeGreaterThan(0);
    await expectConservation(accountId, creditsNanos, rounds);
  });

  it("shows a charge to its own process's next read at once, and to another process's within a second", async () => {
    const [a] = workers;
    const { key } = await a.call('createFundedKey', { credits: 5 });
    const balanceIn = {
      a: async () => {
        const read = await a.call('inject', {
          method: 'GET',
          url: '/api/compat/v1/balance',
          headers: { 'x-api-key': key },
        });
        return (JSON.parse(read.body) as { creditBalance: number }).creditBalance;
      },
      b: async () => {
        const read = await gateway.app.inject({
          method: 'GET',
          url: '/api/compat/v1/balance',
          headers: { 'x-api-key': key },
        });
        return read.json<{ creditBalance: number }>().creditBalance;
      },
    };
    // Both processes have authenticated the key before: the reads below are what they cost warm.
    expect(await balanceIn.a()).toBe(5);
    expect(await balanceIn.b()).toBe(5);
    const answer = await a.call('inject', {
      method: 'POST',
      url: '/api/alpha/v1/embeddings',
      headers: { authorization: `Bearer ${key}` },
      payload: { model: 'sandbox-embedding', input: Array.from({ length: 128 }, (_, index) => `input ${index}`) },
      dropBody: true,
    });
    expect(answer.statusCode).toBe(200);
    // Process B (this one) has nothing of A's to wait for: it reads until A's settlement is written.
    const seenByB = (async () => {
      for (;;) {
        const balance = await balanceIn.b();
        if (balance < 5) return { balance, lagMs: Date.now() - answer.at };
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const readByA = await balanceIn.a();
    expect(readByA).toBeLessThan(5);
    const { balance, lagMs } = await seenByB;
    expect(balance).toBe(readByA);
    expect(lagMs).toBeLessThan(1_000);
  });

  it('has a key disabled, enabled and revoked through process A take effect in process B within a second', async () => {
    const [a, b] = workers;
    const { accountId, keyId, key } = await gateway.createFundedKey({ credits: 1 });
    // B authenticates the key (and caches it), then keeps re-authenticating it.
    const watching = await b.call('watchKey', { key, intervalMs: 20, timeoutMs: 20_000 });
    expect(watching.firstAttemptOk).toBe(true);

    const refusedAfterDisable = b.nextEvent('key-refused', 5_000);
    const disabled = await a.call('setActive', { accountId, keyId, isActive: false });
    const refusal = await refusedAfterDisable;
    expect(refusal.at - disabled.at).toBeLessThan(1_000);
    expect(refusal.acceptedCount).toBeGreaterThan(0);

    // Re-enabling must clear B's negative cache entry too (it would otherwise refuse for 5 s).
    const acceptedAfterEnable = b.nextEvent('key-accepted', 5_000);
    const enabled = await a.call('setActive', { accountId, keyId, isActive: true });
    expect((await acceptedAfterEnable).at - enabled.at).toBeLessThan(1_000);
    expect(await b.call('authenticate', { key })).toEqual({ ok: true });

    const refusedAfterRevoke = b.nextEvent('key-refused', 5_000);
    const revoked = await a.call('revoke', { accountId, keyId });
    expect((await refusedAfterRevoke).at - revoked.at).toBeLessThan(1_000);
    expect(await b.call('authenticate', { key })).toEqual({ ok: false, code: 'GW_INVALID_CREDENTIALS' });
    // And a hold through B's own ledger is refused as well.
    await expect(b.call('hold', { accountId, apiKeyId: keyId, amountNanos: 1n })).rejects.toMatchObject({
      code: 'GW_INVALID_CREDENTIALS',
    });
  });
});
