/**
 * A gateway process killed with SIGKILL while holding credits: its holds must not outlive it. On the
 * embedded default the next gateway to open the data directory releases them at once (one process owns
 * the directory), and the killed gateway's database server has stopped by itself; on PostgreSQL shared by
 * several processes (the run's server) a live gateway releases them once the dead process's heartbeat is
 * older than `ledger.orphanHoldSeconds`, and never touches the holds of a live process. Each setup has a test
 * file of its own (orphaned-holds.test.ts, orphaned-holds-embedded.test.ts), so the two run side by side.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { readEnvironment } from '../../src/config/environment.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { usdToNanos } from '../../src/domain/money.ts';
import { createGateway, type RunningGateway } from '../../src/main.ts';
import { DataDirInUseError } from '../../src/storage/data-dir-lock.ts';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { accounts, apiKeys, gatewayInstances, generations, holds } from '../../src/storage/schema.ts';
import {
  startLedgerWorker,
  stopAllLedgerWorkers,
  type LedgerState,
  type LedgerWorker,
  type LedgerWorkerOptions,
} from './ledger-worker.ts';
import { createTestDatabase, onExternalServer, type TestDatabase } from './test-database.ts';
import { shippedConfigPath, testSecret } from './test-gateway.ts';

const heartbeatSeconds = 1;
const orphanHoldSeconds = 2;

/** The shipped gateway.yaml with a fast heartbeat and a short orphan timeout. */
function fastLedgerConfigText(leased: boolean): string {
  const document = parseDocument(readFileSync(shippedConfigPath, 'utf8'));
  document.setIn(['ledger', 'heartbeatSeconds'], heartbeatSeconds);
  document.setIn(['ledger', 'orphanHoldSeconds'], orphanHoldSeconds);
  if (!leased) document.setIn(['ledger', 'leaseMaxUsd'], 0);
  return document.toString();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** The account and key rows and the account's outstanding holds, read through `storage`. */
async function readState(storage: Storage, ids: { accountId: string; keyId: string }): Promise<LedgerState> {
  // One snapshot: a sweep committing between separate reads would pair the sums before it with the rows after it.
  return storage.db.transaction(
    async (tx) => {
      const [account] = await tx.select().from(accounts).where(eq(accounts.id, ids.accountId));
      const [key] = await tx.select().from(apiKeys).where(eq(apiKeys.id, ids.keyId));
      if (!account || !key) throw new Error('account or key missing');
      const rows = await tx
        .select({ id: holds.id, amountNanos: holds.amountNanos, instanceId: holds.instanceId })
        .from(holds)
        .where(eq(holds.accountId, ids.accountId));
      return {
        balanceNanos: account.balanceNanos,
        heldNanos: account.heldNanos,
        keyHeldNanos: key.heldNanos,
        keySpentNanos: key.spentTotalNanos,
        holds: rows,
      };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

/** Hold rows of one process: a row per reservation, or one per lease (here one for the key, one without). */
const rowsOf = (state: LedgerState, instanceId: string) =>
  state.holds.filter((hold) => hold.instanceId === instanceId).length;

/** The postmaster of an embedded data directory, while its pid file is there. */
function postmasterPid(dataDir: string): number | undefined {
  const file = path.join(dataDir, 'pg', 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
}

/** Running, as opposed to gone or a zombie waiting to be reaped. */
function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const modes = [
  { mode: 'credit leases', leased: true },
  { mode: 'a hold row per reservation', leased: false },
];

/** The tests of holds of a killed gateway process on one setup, with credit leases and with a hold row per reservation. */
export function describeKilledGatewayHolds(setup: { setup: string; onPostgres: boolean }): void {
  describe.each(modes.map((mode) => ({ ...setup, ...mode })))(
    'holds of a gateway process killed with SIGKILL, on $setup, with $mode',
    ({ onPostgres, leased }) => {
      // The embedded default's gateways open data directories of their own, whichever server the run has: with
      // TEST_DATABASE_URL they would repeat what the embedded run checked, so there they are reported as skipped.
      const ranInEmbeddedRun = onExternalServer && !onPostgres;
      const configText = fastLedgerConfigText(leased);
      const temporary: string[] = [];
      const tempDir = (prefix: string) => {
        const dir = mkdtempSync(path.join(tmpdir(), prefix));
        temporary.push(dir);
        return dir;
      };
      let database: TestDatabase | undefined;
      let storageOptions: LedgerWorkerOptions['storage'];
      let victim: LedgerWorker;
      /** PostgreSQL only: a second gateway process that stays alive throughout. */
      let survivor: LedgerWorker | undefined;
      /** The gateway the test process opens on the same storage. */
      let observer: RunningGateway | undefined;
      const observerLog: string[] = [];

      const ids = { accountId: '', keyId: '' };
      const credits = usdToNanos(1);
      /** What the victim holds when it is killed, by hold id. */
      const victimHolds = new Map<string, bigint>();
      let survivorHoldId = '';
      let settledByVictim = 0n;

      const startWorker = () =>
        startLedgerWorker({
          storage: storageOptions,
          configText,
          dataDir: tempDir('gw-orphan-env-'),
          lifetimeMs: 60_000,
        });

      async function startObserver(): Promise<RunningGateway> {
        const environment = readEnvironment({
          DATA_DIR: tempDir('gw-orphan-observer-'),
          GATEWAY_SECRET: testSecret,
          ...(storageOptions.kind === 'postgres' ? { DATABASE_URL: storageOptions.url } : {}),
        });
        const logger = pino({ level: 'warn' }, { write: (line: string) => void observerLog.push(line) });
        return createGateway({
          environment,
          config: parseConfig(configText, 'orphan-test-gateway.yaml', environment.variables),
          storage:
            storageOptions.kind === 'postgres'
              ? { kind: 'postgres', url: storageOptions.url, poolSize: 5 }
              : storageOptions,
          logger,
        });
      }

      beforeAll(async () => {
        if (ranInEmbeddedRun) return;
        if (onPostgres) {
          database = await createTestDatabase();
          if (!database.url) throw new Error('expected a PostgreSQL test database');
          storageOptions = { kind: 'postgres', url: database.url };
          [victim, survivor] = await Promise.all([startWorker(), startWorker()]);
        } else {
          storageOptions = { kind: 'embedded', dataDir: tempDir('gw-orphan-data-') };
          victim = await startWorker();
        }
        Object.assign(ids, await victim.call('createFundedKey', { credits: 1 }));
        // Three holds (two through the key, one without), one of them settled before the kill.
        for (const [usd, withKey] of [
          [0.25, true],
          [0.1, false],
          [0.2, true],
        ] as const) {
          const amountNanos = usdToNanos(usd);
          const { holdId } = await victim.call('hold', {
            accountId: ids.accountId,
            apiKeyId: withKey ? ids.keyId : null,
            amountNanos,
          });
          victimHolds.set(holdId, amountNanos);
        }
        if (survivor) {
          survivorHoldId = (
            await survivor.call('hold', {
              accountId: ids.accountId,
              apiKeyId: ids.keyId,
              amountNanos: usdToNanos(0.15),
            })
          ).holdId;
        }
        // Leased credit that no hold uses goes back, so the held sums are exactly the holds'.
        await Promise.all([victim.call('giveBackUnused', {}), survivor?.call('giveBackUnused', {})]);
      });

      afterAll(async () => {
        await stopAllLedgerWorkers();
        await observer?.close();
        await database?.drop();
        for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
      });

      it.skipIf(ranInEmbeddedRun)('keeps the holds of a gateway that is merely alive', async () => {
        if (onPostgres) {
          // Another gateway on the database sweeps every second with a 2 s orphan timeout...
          observer = await startObserver();
          await sleep((orphanHoldSeconds + 2 * heartbeatSeconds) * 1000);
          const state = await readState(observer.core.storage, ids);
          // ...and leaves every hold of the two live processes alone.
          expect(rowsOf(state, victim.instanceId)).toBe(leased ? 2 : 3);
          expect(rowsOf(state, survivor!.instanceId)).toBe(1);
          expect(state.heldNanos).toBe(usdToNanos(0.25) + usdToNanos(0.1) + usdToNanos(0.2) + usdToNanos(0.15));
          expect(observerLog.join('')).not.toContain('released holds');
        } else {
          // The embedded database has one owner: a second process cannot even open it while the first lives.
          await expect(openStorage(storageOptions)).rejects.toBeInstanceOf(DataDirInUseError);
          // The owner's own sweeps (every second) never release its own holds.
          await sleep((orphanHoldSeconds + 2 * heartbeatSeconds) * 1000);
          const state = await victim.call('state', ids);
          expect(rowsOf(state, victim.instanceId)).toBe(leased ? 2 : 3);
          expect(state.heldNanos).toBe(usdToNanos(0.25) + usdToNanos(0.1) + usdToNanos(0.2));
        }
        // The last hold is still the victim's to settle: it was never taken away.
        const [lastId, lastAmount] = [...victimHolds.entries()].at(-1) ?? ['', 0n];
        settledByVictim = lastAmount - usdToNanos(0.05);
        expect(await victim.call('settle', { holdId: lastId, costNanos: settledByVictim })).toEqual({
          holdWasOutstanding: true,
        });
        await victim.call('giveBackUnused', {});
        victimHolds.delete(lastId);
      });

      it.skipIf(ranInEmbeddedRun)(
        'releases the holds of a killed gateway, leaving the balance as settled',
        async () => {
          const victimInstance = victim.instanceId;
          const killedWhileHolding = [...victimHolds.values()].reduce((sum, amount) => sum + amount, 0n);
          expect(killedWhileHolding).toBe(usdToNanos(0.35));
          const survivorHeld = survivor ? usdToNanos(0.15) : 0n;
          const victimServer = storageOptions.kind === 'embedded' ? postmasterPid(storageOptions.dataDir) : undefined;
          await victim.kill();
          expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' });
          if (storageOptions.kind === 'embedded' && process.platform === 'linux') {
            // The killed gateway's database server shut itself down (parent-death signal), leaving nothing running.
            expect(victimServer).toBeGreaterThan(0);
            await waitFor('the killed gateway\u2019s database server to stop', 30_000, async () =>
              processRunning(victimServer!) ? undefined : true,
            );
          }

          if (onPostgres) {
            if (!observer) throw new Error('observer gateway not started');
            const storage = observer.core.storage;
            // The holds outlive the process for a while (its heartbeat is still fresh)...
            const justAfter = await readState(storage, ids);
            expect(justAfter.holds.filter((hold) => hold.instanceId === victimInstance)).toHaveLength(2);
            const killedAt = Date.now();
            // ...until its heartbeat is older than orphanHoldSeconds; the next sweep releases them.
            const released = await waitFor('the killed process\u2019s holds to be released', 10_000, async () => {
              const state = await readState(storage, ids);
              return state.holds.some((hold) => hold.instanceId === victimInstance) ? undefined : state;
            });
            expect(Date.now() - killedAt).toBeLessThan((orphanHoldSeconds + 3 * heartbeatSeconds) * 1000 + 2_000);
            // The survivor's hold is untouched and still settles as outstanding.
            expect(released.holds.map((hold) => hold.instanceId)).toEqual([survivor!.instanceId]);
            expect(released).toMatchObject({
              balanceNanos: credits - settledByVictim,
              heldNanos: survivorHeld,
              keyHeldNanos: survivorHeld,
              keySpentNanos: settledByVictim,
            });
            const [instance] = await storage.db
              .select()
              .from(gatewayInstances)
              .where(eq(gatewayInstances.id, victimInstance));
            expect(instance).toBeUndefined();
            expect(await survivor?.call('settle', { holdId: survivorHoldId, costNanos: usdToNanos(0.1) })).toEqual({
              holdWasOutstanding: true,
            });
            await survivor?.call('giveBackUnused', {});
          } else {
            // The holds survived the crash on disk (read without any reconciliation)...
            const raw = await openStorage(storageOptions);
            try {
              const crashed = await readState(raw, ids);
              expect(rowsOf(crashed, victimInstance)).toBe(2);
              expect(crashed).toMatchObject({
                balanceNanos: credits - settledByVictim,
                heldNanos: killedWhileHolding,
                keyHeldNanos: usdToNanos(0.25),
              });
            } finally {
              await raw.close();
            }
            // ...and the next gateway to open the directory releases them before serving anything.
            observer = await startObserver();
            const released = await readState(observer.core.storage, ids);
            expect(released.holds).toEqual([]);
            expect(released).toMatchObject({
              balanceNanos: credits - settledByVictim,
              heldNanos: 0n,
              keyHeldNanos: 0n,
              keySpentNanos: settledByVictim,
            });
            const warning = observerLog
              .map((line) => JSON.parse(line) as { msg?: string; count?: number })
              .find((entry) => entry.msg?.includes('released holds'));
            expect(warning?.count).toBe(2);
          }

          const storage = observer.core.storage;
          // Released holds cost nothing and leave no record; the one settled charge is all there is.
          const records = await storage.db.select().from(generations).where(eq(generations.accountId, ids.accountId));
          const survivorCost = survivor ? usdToNanos(0.1) : 0n;
          expect(records.map((record) => record.usdCostNanos).sort()).toEqual(
            [settledByVictim, ...(survivor ? [survivorCost] : [])].sort(),
          );
          const final = await readState(storage, ids);
          expect(final).toMatchObject({ heldNanos: 0n, keyHeldNanos: 0n, holds: [] });
          expect(final.balanceNanos).toBe(credits - settledByVictim - survivorCost);
          // Every credit not charged is available again.
          const ledger = observer.core.services.ledger;
          const all = await ledger.reserve({
            accountId: ids.accountId,
            apiKeyId: ids.keyId,
            amountNanos: final.balanceNanos,
            modelId: 'sandbox-echo',
          });
          await expect(
            ledger.reserve({ accountId: ids.accountId, apiKeyId: null, amountNanos: 1n, modelId: 'sandbox-echo' }),
          ).rejects.toMatchObject({ code: 'GW_INSUFFICIENT_BALANCE' });
          await all.release();
        },
      );
    },
  );
}
