/**
 * Revocation while a process's LISTEN connection is down: process A (in this test) revokes a key that process B
 * (a gateway process of its own) has cached, after B's listener was terminated and while it cannot reconnect.
 * B must stop trusting its cache beyond `unlistenedTrustMs` and refuse the key within that bound; once it
 * listens again, revocation reaches it by NOTIFY as usual.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unlistenedTrustMs } from '../../src/identity/authenticator.ts';
import { listenerApplicationName } from '../../src/storage/database.ts';
import { startLedgerWorker, stopAllLedgerWorkers, type LedgerWorker } from '../support/ledger-worker.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { shippedConfigPath, startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// On the run's PostgreSQL server (TEST_DATABASE_URL, or the embedded server the run started): two processes
// need a database they can share.
describe('key revocation while the LISTEN connection is down', () => {
  let gateway: TestGateway;
  let proxy: TcpProxy;
  let b: LedgerWorker;
  let dataDir: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    // B reaches the database through a proxy, so that the test can keep B's listener from reconnecting
    // while B's pooled connections (already open) keep working.
    proxy = await startTcpProxy(gateway.database.url);
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-unlistened-'));
    b = await startLedgerWorker({
      storage: { kind: 'postgres', url: proxy.url },
      configText: readFileSync(shippedConfigPath, 'utf8'),
      dataDir,
      lifetimeMs: 90_000,
    });
  });

  afterAll(async () => {
    await proxy?.resume().catch(() => undefined);
    await b?.stop();
    await stopAllLedgerWorkers();
    await gateway?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** Terminates the backends of every gateway process's LISTEN connection on this database. */
  async function terminateListeners(): Promise<number> {
    const db = gateway.gateway.core.storage.db;
    const listeners = await uncheckedRows<{ pid: number }>(
      db,
      sql`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ${listenerApplicationName}`,
    );
    for (const { pid } of listeners) await uncheckedRows(db, sql`SELECT pg_terminate_backend(${pid})`);
    return listeners.length;
  }

  async function until<T>(
    what: string,
    { read, done, timeoutMs }: { read: () => Promise<T>; done: (value: T) => boolean; timeoutMs: number },
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline)
        throw new Error(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(value)})\n${b.recentOutput}`);
      await sleep(20);
    }
  }

  const bListening = async () => (await b.call('listening', {})).listening;
  const bAccepts = async (key: string) => b.call('authenticate', { key });

  it('refuses a key revoked through another process within the bound while its listener cannot reconnect, and at once after it has', async () => {
    const first = await gateway.createFundedKey();
    const second = await gateway.createFundedKey();
    expect(await bAccepts(first.key)).toEqual({ ok: true });
    expect(await bListening()).toBe(true);

    await proxy.refuseNew();
    try {
      expect(await terminateListeners()).toBeGreaterThanOrEqual(2);
      await until('B noticed its listener is gone', {
        read: bListening,
        done: (listening) => !listening,
        timeoutMs: 5_000,
      });
      // Read (and cached) by B during the outage, then revoked through A: the NOTIFY never reaches B.
      expect(await bAccepts(first.key)).toEqual({ ok: true });
      const revokedAt = Date.now();
      await gateway.gateway.core.services.apiKeys.revoke(first.accountId, first.keyId);
      const refused = await until('B refused the revoked key', {
        read: () => bAccepts(first.key),
        done: (answer) => !answer.ok,
        timeoutMs: 5_000,
      });
      expect(refused).toEqual({ ok: false, code: 'GW_INVALID_CREDENTIALS' });
      // The bound, with room for a loaded machine (without it the key stayed accepted for a minute).
      expect(Date.now() - revokedAt).toBeLessThan(unlistenedTrustMs + 750);
      // It was the bound that refused it: B has still not listened again.
      expect(await bListening()).toBe(false);
      // A key B reads during the outage is still served (from the database, each time past the bound).
      expect(await bAccepts(second.key)).toEqual({ ok: true });
      await sleep(unlistenedTrustMs + 100);
      expect(await bAccepts(second.key)).toEqual({ ok: true });
    } finally {
      await proxy.resume();
    }

    // B listens again by itself; from then on a revocation reaches it by NOTIFY.
    await until('B listened again', { read: bListening, done: (listening) => listening, timeoutMs: 10_000 });
    expect(await bAccepts(second.key)).toEqual({ ok: true });
    const revokedAt = Date.now();
    await gateway.gateway.core.services.apiKeys.revoke(second.accountId, second.keyId);
    await until('B refused the second key', {
      read: () => bAccepts(second.key),
      done: (answer) => !answer.ok,
      timeoutMs: 5_000,
    });
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
  }, 60_000);

  it('refuses at once a key revoked through the same process, whose cache forgets it without LISTEN (one process, as the embedded database)', async () => {
    const { accountId, keyId, key } = await gateway.createFundedKey();
    const account = () => gateway.request({ method: 'GET', url: '/api/v1/account', headers: { 'x-api-key': key } });
    expect((await account()).statusCode).toBe(200);
    expect(await terminateListeners()).toBeGreaterThanOrEqual(1);
    await gateway.gateway.core.services.apiKeys.revoke(accountId, keyId);
    expect((await account()).statusCode).toBe(401);
  });
});
