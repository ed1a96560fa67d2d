/**
 * Processes starting against one database take turns at its migrations (an advisory lock): two starting at once
 * on a fresh database both come up, with each migration run once; a process killed while it holds the lock lets
 * the next start through, even when its statement was waiting on a lock when it died.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { gatewayBin } from '../support/gateway-cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { testSecret } from '../support/test-gateway.ts';

const journal = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../src/storage/migrations/meta/_journal.json'), 'utf8'),
) as { entries: unknown[] };
/** The advisory lock's key (database.ts). */
const migrationLockId = 7_270_301;

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

describe('the migration lock', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function freshDatabase(): Promise<{ database: TestDatabase; client: pg.Client }> {
    const database = await createTestDatabase();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    cleanups.push(async () => {
      await client.end().catch(() => undefined);
      await database.drop();
    });
    return { database, client };
  }

  /** `gateway migrate` on the database, as a process of its own; its end. */
  function migrate(url: string): { child: ChildProcess; finished: Promise<Finished> } {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-migrate-'));
    const child = spawn(process.execPath, [gatewayBin, 'migrate'], {
      env: {
        PATH: process.env.PATH,
        DATA_DIR: dataDir,
        DATABASE_URL: url,
        GATEWAY_SECRET: testSecret,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const finished = new Promise<Finished>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
    );
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await finished;
      rmSync(dataDir, { recursive: true, force: true });
    });
    return { child, finished };
  }

  async function migrationsRecorded(client: pg.Client): Promise<{ rows: number; distinct: number }> {
    const { rows } = await client.query<{ rows: number; distinct: number }>(
      'SELECT count(*)::int AS rows, count(DISTINCT hash)::int AS distinct FROM drizzle.__drizzle_migrations',
    );
    return rows[0]!;
  }

  /**
   * Backends of the database other than `client`'s, and whether each waits on a lock. Read afresh each time: a
   * transaction reads the same snapshot of pg_stat_activity throughout.
   */
  async function otherSessions(client: pg.Client): Promise<Array<{ pid: number; waiting: boolean }>> {
    await client.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await client.query<{ pid: number; waiting: boolean }>(
      `SELECT pid, wait_event_type IS NOT DISTINCT FROM 'Lock' AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    return rows;
  }

  async function lockHolders(client: pg.Client): Promise<number[]> {
    const { rows } = await client.query<{ pid: number }>(
      "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND granted",
      [migrationLockId],
    );
    return rows.map((row) => row.pid);
  }

  it('brings up two processes started at once on a fresh database, each migration run once', async () => {
    const { database, client } = await freshDatabase();
    const [first, second] = await Promise.all([migrate(database.url).finished, migrate(database.url).finished]);
    for (const started of [first, second]) expect(started, started?.stderr).toMatchObject({ code: 0 });
    expect(await migrationsRecorded(client)).toEqual({
      rows: journal.entries.length,
      distinct: journal.entries.length,
    });
  });

  it('lets the next start through once a process holding the lock is killed, its statement still waiting', async () => {
    const { database, client } = await freshDatabase();
    // The migrations' first statement creates their schema: this uncommitted one makes it wait.
    await client.query('BEGIN');
    await client.query('CREATE SCHEMA drizzle');
    try {
      const killed = migrate(database.url);
      await expect.poll(async () => (await lockHolders(client)).length).toBe(1);
      await expect.poll(async () => (await otherSessions(client)).some((session) => session.waiting)).toBe(true);
      const killedSessions = (await otherSessions(client)).map((session) => session.pid);
      killed.child.kill('SIGKILL');
      expect(await killed.finished).toMatchObject({ signal: 'SIGKILL' });

      const next = migrate(database.url);
      // The killed process's sessions end (and with them its lock) while the statement it sent still waits;
      // the next process takes the lock and waits on the same statement.
      await expect
        .poll(async () => {
          const sessions = await otherSessions(client);
          const holders = await lockHolders(client);
          return {
            killedLeft: sessions.filter((session) => killedSessions.includes(session.pid)).length,
            nextHoldsTheLock: holders.length === 1 && !killedSessions.includes(holders[0]!),
            nextWaits: sessions.some((session) => !killedSessions.includes(session.pid) && session.waiting),
          };
        })
        .toEqual({ killedLeft: 0, nextHoldsTheLock: true, nextWaits: true });
      await client.query('ROLLBACK');
      const started = await next.finished;
      expect(started, started.stderr).toMatchObject({ code: 0 });
    } finally {
      await client.query('ROLLBACK');
    }
    expect(await migrationsRecorded(client)).toEqual({
      rows: journal.entries.length,
      distinct: journal.entries.length,
    });
  });
});
