/**
 * The CLI and the server process on the run's database: with TEST_DATABASE_URL the commands reach a database of
 * that server through DATABASE_URL (migrations, the ledger's functions, a server's connections closed on SIGTERM);
 * otherwise each command starts the embedded default in DATA_DIR and stops it. The CLI's other commands and its
 * refusals, whose claims hold whichever server stores the data, are in cli-accounts.test.ts and cli-input.test.ts.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { gatewayBin, useGatewayCli } from '../support/gateway-cli.ts';
import { createTestDatabase } from '../support/test-database.ts';

const run = promisify(execFile);

describe('gateway CLI and server process', () => {
  const commands = useGatewayCli();
  const { cli } = commands;

  it('creates accounts, credits and keys, revokes keys and lists models', async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--email', 'Ops@Example.com', '--credits', '5')) as {
      id: string;
      email: string;
      creditBalance: number;
    };
    expect(account).toMatchObject({ email: 'ops@example.com', creditBalance: 5 });
    expect(JSON.parse(await cli('credits', 'add', '--account', account.id, '--amount', '0.1'))).toEqual({
      creditBalance: 5.1,
    });
    expect(
      JSON.parse(await cli('credits', 'add', '--account', account.id, '--amount', '-0.2', '--note', 'refund')),
    ).toEqual({ creditBalance: 4.9 });
    const key = JSON.parse(await cli('keys', 'create', '--account', account.id, '--name', 'ci', '--daily', '1.5')) as {
      id: string;
      key: string;
      limits: object;
    };
    expect(key.key).toMatch(/^gwk_[A-Za-z0-9_-]{43}$/);
    expect(key.limits).toEqual({ daily: 1.5 });
    expect(JSON.parse(await cli('keys', 'revoke', '--key', key.id))).toEqual({ revoked: key.id });
    const models = await cli('models', 'list');
    expect(models).toContain('sandbox-echo\ttext\tsandbox');
    expect(models).not.toContain('gpt-4o');
    await cli('migrate');
  });

  it('migrates a PostgreSQL database without GATEWAY_SECRET or gateway.yaml; the commands that use the secret still require it', async () => {
    const database = await createTestDatabase();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-cli-migrate-'));
    // The shipped gateway.yaml, as the other commands run (from the repository's root), but no GATEWAY_SECRET.
    const env = { PATH: process.env.PATH, DATA_DIR: dataDir, DATABASE_URL: database.url, LOG_LEVEL: 'warn' };
    try {
      const migrated = await run(process.execPath, [gatewayBin, 'migrate'], {
        env: { ...env, GATEWAY_CONFIG: path.join(dataDir, 'no-such-gateway.yaml') },
        timeout: 60_000,
      });
      expect(migrated.stdout).toBe('migrations applied\n');
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ count: string }>('SELECT count(*)::text AS count FROM accounts');
        expect(rows).toEqual([{ count: '0' }]);
      } finally {
        await client.end();
      }
      await expect(
        run(process.execPath, [gatewayBin, 'accounts', 'create', '--email', 'nosecret@example.com'], {
          env,
          timeout: 60_000,
        }),
      ).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('GATEWAY_SECRET is required when DATABASE_URL is set'),
      });
      // No secret of its own was made for the refused command: processes sharing a database must share one.
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('serves, then stops cleanly on SIGTERM', async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const server = spawn(process.execPath, [gatewayBin, 'serve'], {
      env: { ...commands.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    try {
      let status = 0;
      for (let attempt = 0; attempt < 120 && status !== 200; attempt++) {
        status = await fetch(`http://127.0.0.1:${port}/api/alpha`, { method: 'HEAD' }).then(
          (response) => response.status,
          () => 0,
        );
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(status).toBe(200);
      if (!commands.onExternalServer) {
        // The embedded database belongs to the server: a CLI command meanwhile is refused, not let in to corrupt it.
        await expect(cli('accounts', 'create', '--email', 'late@example.com')).rejects.toMatchObject({
          stderr: expect.stringContaining('is in use by process'),
        });
      }
    } finally {
      server.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(existsSync(path.join(commands.dataDir, 'gateway.lock'))).toBe(false);
  });
});
