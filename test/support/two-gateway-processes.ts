/**
 * Two gateway processes on one PostgreSQL database (the run's server, or TEST_DATABASE_URL's), for the tests of
 * multi-process.test.ts and multi-process-caps.test.ts: a gateway in the test process and two ledger worker
 * processes, with the storms of holds and settlements they run and the books they must keep.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { accounts } from '../../src/storage/schema.ts';
import {
  startLedgerWorker,
  stopAllLedgerWorkers,
  type LedgerWorker,
  type SettleResult,
  type StormResult,
} from './ledger-worker.ts';
import { shippedConfigPath, startTestGateway, type TestGateway } from './test-gateway.ts';
import { uncheckedRows } from './unchecked-rows.ts';

/** Starts the gateway and both processes before the describe block's tests, and stops them after. */
export function useTwoGatewayProcesses() {
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
    const [totals] = await uncheckedRows<{ count: string; cost: string; holds: string }>(
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

  return {
    get gateway() {
      return gateway;
    },
    get workers() {
      return workers;
    },
    db,
    accountState,
    giveBackUnused,
    expectConservation,
    holdBoth,
    settleBoth,
    sumOf,
  };
}
