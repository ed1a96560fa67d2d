import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compiledMain,
  gatewayRecord,
  pinnedNodeVersion,
  probeEnvironment,
  transpilerTraces,
} from '../support/gateway-runtime.ts';
import { createTestDatabase, onExternalServer, type TestDatabase } from '../support/test-database.ts';
import { testSecret } from '../support/test-gateway.ts';

const run = promisify(execFile);
const gatewayBin = path.resolve(import.meta.dirname, '../../bin/gateway.js');

describe('gateway CLI and server process', () => {
  let dataDir: string;
  /** With TEST_DATABASE_URL the commands run on a database there; otherwise on the embedded default in DATA_DIR. */
  let database: TestDatabase | undefined;
  let env: NodeJS.ProcessEnv;

  const cli = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [gatewayBin, ...args], { env, timeout: 60_000 });
    return stdout;
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-cli-'));
    env = { PATH: process.env.PATH, DATA_DIR: dataDir, GATEWAY_SECRET: testSecret, LOG_LEVEL: 'warn' };
    if (onExternalServer) {
      database = await createTestDatabase();
      env.DATABASE_URL = database.url;
    }
  });
  afterAll(async () => {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

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

  it("sets an account's role by email or id, refuses any other role, and says how in --help", async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--email', 'role@example.com')) as { id: string };
    expect(JSON.parse(await cli('accounts', 'role', 'Role@Example.com', 'operator'))).toMatchObject({
      id: account.id,
      role: 'operator',
    });
    expect(JSON.parse(await cli('accounts', 'role', account.id, 'user'))).toMatchObject({ role: 'user' });
    await expect(cli('accounts', 'role', account.id, 'root')).rejects.toMatchObject({
      stderr: expect.stringContaining('"operator" or "user"'),
    });
    await expect(cli('accounts', 'role', 'nobody@example.com', 'operator')).rejects.toMatchObject({
      stderr: expect.stringContaining('not found'),
    });
    expect(await cli('accounts', 'role', '--help')).toContain('operator console');
  });

  it('runs the compiled CLI of dist/ on the pinned Node (the one npm scripts put first on PATH), with no TypeScript loader', async () => {
    const probeDir = mkdtempSync(path.join(tmpdir(), 'gw-cli-probe-'));
    try {
      await run(process.execPath, [gatewayBin, 'models', 'list'], {
        env: { ...env, ...probeEnvironment(probeDir) },
        timeout: 60_000,
      });
      const gateway = gatewayRecord(probeDir);
      expect(gateway.version, 'run the tests with `npm test`, which runs them on the Node of node_modules').toBe(
        pinnedNodeVersion,
      );
      expect(gateway.urls).toContain(compiledMain);
      expect(transpilerTraces(gateway)).toEqual([]);
    } finally {
      rmSync(probeDir, { recursive: true, force: true });
    }
  });

  it('explains bad input with a non-zero exit', async () => {
    await expect(cli('credits', 'add', '--account', 'acct_missing', '--amount', '1')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('account "acct_missing" not found'),
    });
    await expect(cli('credits', 'add', '--account', 'x', '--amount', 'lots')).rejects.toMatchObject({
      stderr: expect.stringContaining('expected a USD amount'),
    });
    expect(await cli('keys', 'create', '--help')).toContain('--daily <usd>');
  });

  it('refuses what the HTTP API refuses, with the same wording', async () => {
    const refusal = (pattern: RegExp) => ({ code: 1, stderr: expect.stringMatching(pattern) });
    await expect(
      cli('accounts', 'create', '--email', 'not-an-email', '--password', 'long enough password'),
    ).rejects.toMatchObject(refusal(/options\.email must match format "email"/));
    await expect(
      cli('accounts', 'create', '--email', 'short@example.com', '--password', 'abcde'),
    ).rejects.toMatchObject(refusal(/options\.password must NOT have fewer than 8 characters/));
    const account = JSON.parse(await cli('accounts', 'create', '--email', 'cents@example.com')) as { id: string };
    await expect(cli('credits', 'add', '--account', account.id, '--amount', '4e-10')).rejects.toMatchObject(
      refusal(/amount is smaller than one nano-USD/),
    );
    await expect(cli('credits', 'add', '--account', account.id, '--amount', '0')).rejects.toMatchObject(
      refusal(/amount must not be 0/),
    );
    await expect(
      cli('keys', 'create', '--account', account.id, '--name', 'tiny', '--daily', '1e-12'),
    ).rejects.toMatchObject(refusal(/limits\.daily is smaller than one nano-USD/));
    await expect(
      cli('keys', 'create', '--account', account.id, '--name', 'neg', '--total', '-1'),
    ).rejects.toMatchObject(refusal(/options\.limits\.total must be >= 0/));
  });

  it('sets rate limits on a new key, changes and removes them on a key and on an account, and refuses bad ones', async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--email', 'limited@example.com')) as { id: string };
    const key = JSON.parse(
      await cli(
        'keys',
        'create',
        '--account',
        account.id,
        '--name',
        'limited',
        '--requests-per-minute',
        '60',
        '--concurrent-requests',
        '2',
      ),
    ) as { id: string; rateLimits: object };
    expect(key.rateLimits).toEqual({ requestsPerMinute: 60, concurrentRequests: 2 });
    const changed = JSON.parse(
      await cli(
        'keys',
        'rate-limits',
        '--key',
        key.id,
        '--tokens-per-minute',
        '10000',
        '--requests-per-minute',
        'none',
      ),
    ) as { rateLimits: object };
    expect(changed.rateLimits).toEqual({ tokensPerMinute: 10000, concurrentRequests: 2 });
    expect(
      JSON.parse(await cli('accounts', 'rate-limits', '--account', account.id, '--requests-per-minute', '30')),
    ).toEqual({ requestsPerMinute: 30 });
    const refusal = (pattern: RegExp) => ({ code: 1, stderr: expect.stringMatching(pattern) });
    await expect(cli('keys', 'rate-limits', '--key', key.id, '--requests-per-minute', '0')).rejects.toMatchObject(
      refusal(/options\.requestsPerMinute must be >= 1/),
    );
    await expect(cli('keys', 'rate-limits', '--key', key.id, '--requests-per-minute', 'many')).rejects.toMatchObject(
      refusal(/expected a whole number/),
    );
    await expect(cli('keys', 'rate-limits', '--key', key.id)).rejects.toMatchObject(
      refusal(/options must NOT have fewer than 1 properties/),
    );
    await expect(
      cli('keys', 'create', '--account', account.id, '--name', 'x', '--tokens-per-minute', 'none'),
    ).rejects.toMatchObject(refusal(/no rate limit to remove/));
  });

  it('says a key is already revoked when it is revoked twice', async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--email', 'twice@example.com')) as { id: string };
    const key = JSON.parse(await cli('keys', 'create', '--account', account.id, '--name', 'once')) as { id: string };
    await cli('keys', 'revoke', '--key', key.id);
    await expect(cli('keys', 'revoke', '--key', key.id)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`API key "${key.id}" is already revoked`),
    });
  });

  it('refuses to start with an invalid gateway.yaml, naming the file, the path and the problem', async () => {
    const badConfig = path.join(dataDir, 'bad.yaml');
    writeFileSync(badConfig, 'providers: {}\nmodels:\n  - id: x\n    providers: [{ provider: nowhere, model: y }]\n');
    await expect(
      run(process.execPath, [gatewayBin, 'serve'], { env: { ...env, GATEWAY_CONFIG: badConfig }, timeout: 30_000 }),
    ).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`${badConfig}: at models[0].providers[0].provider: unknown provider "nowhere"`),
    });
  });

  it('serves, then stops cleanly on SIGTERM', async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const server = spawn(process.execPath, [gatewayBin, 'serve'], {
      env: { ...env, PORT: String(port) },
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
      if (!database) {
        // The embedded database belongs to the server: a CLI command meanwhile is refused, not let in to corrupt it.
        await expect(cli('accounts', 'create', '--email', 'late@example.com')).rejects.toMatchObject({
          stderr: expect.stringContaining('is in use by process'),
        });
      }
    } finally {
      server.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(existsSync(path.join(dataDir, 'gateway.lock'))).toBe(false);
  });
});
