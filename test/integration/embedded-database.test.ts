/**
 * The embedded default as the gateway opens it on a DATA_DIR: the PostgreSQL server it runs under
 * DATA_DIR/pg (made on first start, kept across starts, durable settings, LISTEN/NOTIFY), who that server
 * runs as when the gateway is root, a server left behind by a gateway that died, a server that dies under a
 * running gateway, and the one-time import of a PGlite database of an earlier release.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirInUseError } from '../../src/storage/data-dir-lock.ts';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import type { StorageEvent } from '../../src/storage/storage-events.ts';
import { LegacyImportError } from '../../src/storage/legacy-import.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

const repositoryRoot = path.resolve(import.meta.dirname, '../..');
const migrationsFolder = path.join(repositoryRoot, 'src/storage/migrations');
const isRoot = process.getuid?.() === 0;
const onLinux = process.platform === 'linux';

const temporary: string[] = [];
function tempDir(mode = 0o700): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-embedded-'));
  chmodSync(dir, mode);
  temporary.push(dir);
  return dir;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Running, as opposed to gone or a zombie waiting to be reaped. */
function processRunning(pid: number): boolean {
  try {
    if (!onLinux) {
      process.kill(pid, 0);
      return true;
    }
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function gone(pid: number, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (processRunning(pid)) {
    if (Date.now() > deadline) return false;
    await pause(50);
  }
  return true;
}

function postmasterPid(dataDir: string): number {
  return Number(readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

async function setting(storage: Storage, name: string): Promise<string> {
  const [row] = await uncheckedRows<{ value: string }>(storage.db, sql`SELECT current_setting(${name}) AS value`);
  return row?.value ?? '';
}

async function balanceOf(storage: Storage, id: string): Promise<string | undefined> {
  const [row] = await uncheckedRows<{ balance: string }>(
    storage.db,
    sql`SELECT balance_nanos::text AS balance FROM accounts WHERE id = ${id}`,
  );
  return row?.balance;
}

afterAll(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

describe('the embedded database', () => {
  it('makes its server on first start, keeps the data across starts, and carries LISTEN/NOTIFY', async () => {
    const dataDir = tempDir();
    const first = await openStorage({ kind: 'embedded', dataDir });
    let serverPid: number;
    try {
      expect(first).toMatchObject({ kind: 'embedded', soleOwner: true });
      expect(existsSync(path.join(dataDir, 'pg', 'PG_VERSION'))).toBe(true);
      expect(existsSync(path.join(dataDir, 'gateway.lock'))).toBe(true);
      // Socket only, small, and durable: a commit is on disk when it returns.
      expect(await setting(first, 'listen_addresses')).toBe('');
      expect(await setting(first, 'shared_buffers')).toBe('16MB');
      expect(await setting(first, 'fsync')).toBe('on');
      expect(await setting(first, 'synchronous_commit')).toBe('on');
      await first.db.execute(
        sql`INSERT INTO accounts (id, email, balance_nanos) VALUES ('acct_kept', 'kept@example.com', 9007199254740993)`,
      );
      const received: StorageEvent[] = [];
      first.subscribe((event) => received.push(event));
      await first.publish({ type: 'key-changed', keyId: 'key_1' });
      for (let attempt = 0; attempt < 100 && received.length === 0; attempt++) await pause(20);
      expect(received).toEqual([{ type: 'key-changed', keyId: 'key_1' }]);
      serverPid = postmasterPid(dataDir);
      // A second open, even in the same process, is refused and leaves the first one's server alone.
      await expect(openStorage({ kind: 'embedded', dataDir })).rejects.toBeInstanceOf(DataDirInUseError);
      expect(postmasterPid(dataDir)).toBe(serverPid);
      expect(await balanceOf(first, 'acct_kept')).toBe('9007199254740993');
    } finally {
      await first.close();
    }
    // Closing stops the server and releases the directory.
    expect(await gone(serverPid)).toBe(true);
    expect(existsSync(path.join(dataDir, 'gateway.lock'))).toBe(false);

    const startedAt = performance.now();
    const second = await openStorage({ kind: 'embedded', dataDir });
    try {
      expect(performance.now() - startedAt).toBeLessThan(5_000);
      expect(await balanceOf(second, 'acct_kept')).toBe('9007199254740993');
    } finally {
      await second.close();
    }
  });

  it.runIf(isRoot && onLinux)(
    'runs its server as nobody when the gateway is root, or in a user namespace where nobody cannot reach DATA_DIR',
    async () => {
      const nobody = readFileSync('/etc/passwd', 'utf8')
        .split('\n')
        .map((line) => line.split(':'))
        .find((fields) => fields[0] === 'nobody');
      const nobodyUid = Number(nobody?.[2]);
      const statusUid = (pid: number) =>
        Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

      // DATA_DIR inside a directory of mode 0700: nobody cannot enter it.
      const parent = tempDir(0o700);
      const dataDir = path.join(parent, 'data');
      let storage = await openStorage({ kind: 'embedded', dataDir });
      try {
        const pid = postmasterPid(dataDir);
        expect(statusUid(pid)).toBe(0);
        expect(readFileSync(`/proc/${pid}/uid_map`, 'utf8').trim().split(/\s+/)).toEqual([String(nobodyUid), '0', '1']);
        expect(statSync(path.join(dataDir, 'pg')).uid).toBe(0);
        await storage.db.execute(
          sql`INSERT INTO accounts (id, email, balance_nanos) VALUES ('acct_moved', 'moved@example.com', 5)`,
        );
      } finally {
        await storage.close();
      }

      // Once nobody can enter, the server runs as nobody, who is given its data directory.
      chmodSync(parent, 0o755);
      storage = await openStorage({ kind: 'embedded', dataDir });
      try {
        const pid = postmasterPid(dataDir);
        expect(statusUid(pid)).toBe(nobodyUid);
        expect(statSync(path.join(dataDir, 'pg')).uid).toBe(nobodyUid);
        expect(statSync(path.join(dataDir, 'pg', 'PG_VERSION')).uid).toBe(nobodyUid);
        expect(statSync(path.join(dataDir, 'pg')).mode & 0o777).toBe(0o700);
        expect(await balanceOf(storage, 'acct_moved')).toBe('5');
      } finally {
        await storage.close();
      }
    },
  );

  it('stops a server left running on its directory by a gateway that died, and starts its own', async () => {
    const dataDir = tempDir();
    const made = await openStorage({ kind: 'embedded', dataDir });
    await made.db.execute(
      sql`INSERT INTO accounts (id, email, balance_nanos) VALUES ('acct_left', 'left@example.com', 7)`,
    );
    await made.close();
    // A process starts the server without a parent-death signal (as on a platform without one), and is killed.
    const script = [
      `import { startEmbeddedServer } from ${JSON.stringify(path.join(repositoryRoot, 'src/storage/embedded-server.ts'))};`,
      `const server = await startEmbeddedServer({ dataDir: ${JSON.stringify(path.join(dataDir, 'pg'))}, parentDeathSignal: false });`,
      'process.stdout.write(String(server.pid) + "\\n");',
      'setInterval(() => undefined, 1000);',
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: repositoryRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const leftover = await new Promise<number>((resolve, reject) => {
      child.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString('utf8').trim())));
      child.once('exit', (code) => reject(new Error(`server process exited (${code})`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    await pause(300);
    expect(processRunning(leftover)).toBe(true);

    const logs: string[] = [];
    const storage = await openStorage({ kind: 'embedded', dataDir, onLog: (message) => logs.push(message) });
    try {
      expect(processRunning(leftover)).toBe(false);
      expect(postmasterPid(dataDir)).not.toBe(leftover);
      expect(logs.join('\n')).toContain(`stopping the database server (pid ${leftover}) left running`);
      expect(await balanceOf(storage, 'acct_left')).toBe('7');
    } finally {
      await storage.close();
    }
  });

  it('starts its server again when it dies under a running gateway', async () => {
    const dataDir = tempDir();
    const errors: string[] = [];
    const storage = await openStorage({ kind: 'embedded', dataDir, onError: (error) => errors.push(error.message) });
    try {
      await storage.db.execute(
        sql`INSERT INTO accounts (id, email, balance_nanos) VALUES ('acct_crash', 'crash@example.com', 11)`,
      );
      const first = postmasterPid(dataDir);
      process.kill(first, 'SIGKILL');
      const deadline = Date.now() + 30_000;
      const restarted = () =>
        existsSync(path.join(dataDir, 'pg', 'postmaster.pid')) &&
        postmasterPid(dataDir) !== first &&
        processRunning(postmasterPid(dataDir));
      while (!restarted()) {
        if (Date.now() > deadline) throw new Error(`the server did not come back; errors: ${errors.join('; ')}`);
        await pause(100);
      }
      expect(errors.join('\n')).toContain('the database server stopped unexpectedly');
      // The pool's connections to the dead server fail once; new ones reach the new server.
      let balance: string | undefined;
      while (balance === undefined && Date.now() < deadline)
        balance = await balanceOf(storage, 'acct_crash').catch(() => undefined);
      expect(balance).toBe('11');
    } finally {
      await storage.close();
    }
  });

  it('refuses a data directory made by another PostgreSQL major version, naming both', async () => {
    const dataDir = tempDir();
    mkdirSync(path.join(dataDir, 'pg'));
    writeFileSync(path.join(dataDir, 'pg', 'PG_VERSION'), '9\n');
    await expect(openStorage({ kind: 'embedded', dataDir })).rejects.toThrow(
      /made by PostgreSQL 9, and this gateway runs PostgreSQL \d+/,
    );
    expect(existsSync(path.join(dataDir, 'gateway.lock'))).toBe(false);
  });
});

describe('a PGlite database of an earlier release in DATA_DIR/db', () => {
  /** What an earlier release left: DATA_DIR/db/pgdata, migrated, with `rows` accounts and their grants. */
  async function earlierRelease(dataDir: string, rows: Array<{ id: string; balance: string }>): Promise<void> {
    mkdirSync(path.join(dataDir, 'db'), { recursive: true });
    const client = new PGlite(path.join(dataDir, 'db', 'pgdata'));
    try {
      await migrate(drizzle(client), { migrationsFolder });
      for (const row of rows) {
        await client.query(
          `INSERT INTO accounts (id, email, balance_nanos, created_at) VALUES ($1, $2, $3::bigint, '2026-01-02T03:04:05.678901Z')`,
          [row.id, `${row.id}@example.com`, row.balance],
        );
        await client.query(
          `INSERT INTO credit_grants (id, account_id, amount_nanos, note) VALUES ($1, $2, $3::bigint, 'opening')`,
          [`grant_${row.id}`, row.id, row.balance],
        );
      }
    } finally {
      await client.close();
    }
  }

  it('is imported on first start, exactly, and kept aside as DATA_DIR/db.imported', async () => {
    const dataDir = tempDir();
    const accounts = Array.from({ length: 1_234 }, (_, index) => ({
      id: `acct_old_${index}`,
      balance: String(9_007_199_254_740_993n + BigInt(index)),
    }));
    await earlierRelease(dataDir, accounts);
    const logs: string[] = [];
    const storage = await openStorage({ kind: 'embedded', dataDir, onLog: (message) => logs.push(message) });
    try {
      const [counts] = await uncheckedRows<{ accounts: string; grants: string; total: string; created: string }>(
        storage.db,
        sql`SELECT (SELECT count(*) FROM accounts)::text AS accounts, (SELECT count(*) FROM credit_grants)::text AS grants,
                   (SELECT sum(balance_nanos) FROM accounts)::text AS total,
                   (SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') FROM accounts WHERE id = 'acct_old_7') AS created`,
      );
      const total = accounts.reduce((sum, account) => sum + BigInt(account.balance), 0n);
      expect(counts).toEqual({
        accounts: '1234',
        grants: '1234',
        total: String(total),
        created: '2026-01-02 03:04:05.678901',
      });
      expect(await balanceOf(storage, 'acct_old_1233')).toBe('9007199254742226');
    } finally {
      await storage.close();
    }
    expect(existsSync(path.join(dataDir, 'db'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'db.imported', 'pgdata'))).toBe(true);
    expect(logs.join('\n')).toMatch(/imported .*1234 accounts/);

    // Once only: the next start finds nothing to import.
    const again = await openStorage({ kind: 'embedded', dataDir });
    try {
      const [row] = await uncheckedRows<{ count: string }>(again.db, sql`SELECT count(*)::text AS count FROM accounts`);
      expect(row?.count).toBe('1234');
    } finally {
      await again.close();
    }

    // An earlier release's database appearing beside data of this one is not merged into it.
    await earlierRelease(dataDir, [{ id: 'acct_other', balance: '1' }]);
    await expect(openStorage({ kind: 'embedded', dataDir })).rejects.toBeInstanceOf(LegacyImportError);
    expect(existsSync(path.join(dataDir, 'db', 'pgdata'))).toBe(true);
    expect(existsSync(path.join(dataDir, 'gateway.lock'))).toBe(false);
  });

  it('is left alone while an earlier release still runs on it', async () => {
    const dataDir = tempDir();
    await earlierRelease(dataDir, [{ id: 'acct_busy', balance: '3' }]);
    const earlier = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      writeFileSync(path.join(dataDir, 'db', 'gateway.lock'), String(earlier.pid));
      await expect(openStorage({ kind: 'embedded', dataDir })).rejects.toBeInstanceOf(DataDirInUseError);
      expect(existsSync(path.join(dataDir, 'db', 'pgdata'))).toBe(true);
    } finally {
      earlier.kill();
    }
  });
});
