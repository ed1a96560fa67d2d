/**
 * A process with another GATEWAY_SECRET than the database's refuses to start, so it can neither print keys that
 * every rightly configured process answers 401 nor serve refusing theirs. The database keeps a verifier of the
 * secret (never the secret), written race-safe by the first process to open it; a database from before
 * verifiers gets one only from a process whose secret opens what it holds sealed. In process on the run's
 * server (openCore, as the server and the CLI open it), then the compiled CLI and server on the run's database,
 * and on the embedded default with the secret it generates into DATA_DIR.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/config/environment.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { openCore, type Core } from '../../src/core.ts';
import { GatewaySecretMismatchError } from '../../src/identity/gateway-secret.ts';
import { deriveSecretKeys } from '../../src/identity/secret-keys.ts';
import { gatewayBin, useGatewayCli } from '../support/gateway-cli.ts';
import { startGatewayChild } from '../support/gateway-child.ts';
import { adminHeaders } from '../support/http-helpers.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { sandboxConfigYaml, shippedConfigPath, testSecret } from '../support/test-gateway.ts';

const run = promisify(execFile);

const secretA = 'verifier-secret-A-Xq7Lm2Np9Rt4Vw6Yz1Bc3Df5';
const secretB = 'verifier-secret-B-Hg8Jk0Ls2Pd4Qf6Wr9Ty1Ue3';

/** The forms a secret could leak in: as it is, and encoded. */
function formsOf(secret: string): string[] {
  const bytes = Buffer.from(secret);
  return [secret, bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex')];
}

describe('the database keeps a verifier of GATEWAY_SECRET, and a process with another refuses to start', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-secret-check-'));
  const config = parseConfig(sandboxConfigYaml(), 'secret-check.yaml', {});
  const databases: TestDatabase[] = [];
  const cores: Core[] = [];

  const freshDatabase = async () => {
    const database = await createTestDatabase();
    databases.push(database);
    return database;
  };
  const open = async (database: TestDatabase, secret: string, adoptingSecret = false) => {
    const core = await openCore({
      environment: readEnvironment({ DATA_DIR: dataDir, GATEWAY_SECRET: secret }),
      config,
      storage: { kind: 'postgres', url: database.url, poolSize: 3 },
      logger: pino({ level: 'silent' }),
      adoptingSecret,
    });
    cores.push(core);
    return core;
  };
  const close = async (core: Core) => {
    cores.splice(cores.indexOf(core), 1);
    await core.close();
  };
  const storedVerifiers = async (database: TestDatabase) => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query<{ name: string; verifier: string }>('SELECT name, verifier FROM secret_verifiers'))
        .rows;
    } finally {
      await client.end();
    }
  };
  const sql = async (database: TestDatabase, statement: string) => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  /** The refusal of a start with `secret`, which names GATEWAY_SECRET and neither secret. */
  const refused = async (database: TestDatabase, secret: string): Promise<string> => {
    const error = await open(database, secret).then(
      () => {
        throw new Error('the process started with another secret');
      },
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(GatewaySecretMismatchError);
    const message = (error as Error).message;
    expect(message).toContain('GATEWAY_SECRET');
    for (const form of [...formsOf(secretA), ...formsOf(secretB)]) expect(message).not.toContain(form);
    return message;
  };

  afterAll(async () => {
    for (const core of cores) await core.close().catch(() => undefined);
    for (const database of databases) await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is written by the first process, reveals nothing of the secret, and lets the same secret in again', async () => {
    const database = await freshDatabase();
    await close(await open(database, secretA));
    const rows = await storedVerifiers(database);
    expect(rows).toEqual([{ name: 'gateway-secret', verifier: deriveSecretKeys(secretA).verifier }]);
    const verifier = rows[0]!.verifier;
    expect(verifier).toMatch(/^v1\.[A-Za-z0-9_-]{43}$/);
    for (const form of formsOf(secretA)) expect(verifier).not.toContain(form);
    // None of the keys the secret derives for other purposes either, and another secret has another verifier.
    const keys = deriveSecretKeys(secretA);
    for (const key of [keys.sealing, keys.lookup.export(), keys.mediaLinks.export()])
      for (const encoding of ['base64url', 'base64', 'hex'] as const)
        expect(verifier).not.toContain(key.toString(encoding));
    expect(deriveSecretKeys(secretB).verifier).not.toBe(verifier);
    await close(await open(database, secretA));
    expect(await storedVerifiers(database)).toEqual(rows);
  });

  it('refuses a start with another secret, before anything is written with it', async () => {
    const database = await freshDatabase();
    const first = await open(database, secretA);
    const account = await first.services.accounts.createAccount({ email: 'secret@example.com', creditsUsd: 1 });
    await close(first);
    expect(await refused(database, secretB)).toContain('is not the secret this database is used with');
    expect(await storedVerifiers(database)).toEqual([
      { name: 'gateway-secret', verifier: deriveSecretKeys(secretA).verifier },
    ]);
    const again = await open(database, secretA);
    expect((await again.services.accounts.getAccount(account.id)).email).toBe('secret@example.com');
    await close(again);
  });

  it('gives a database from before verifiers one only from a process whose secret opens what it holds sealed', async () => {
    const database = await freshDatabase();
    const first = await open(database, secretA);
    const account = await first.services.accounts.createAccount({ email: 'legacy@example.com' });
    await first.services.apiKeys.create(account.id, { name: 'sealed under A' });
    await close(first);
    // As a database of an earlier release: no verifier, keys sealed under A.
    await sql(database, 'DELETE FROM secret_verifiers');
    expect(await refused(database, secretB)).toContain('does not open the credentials this database holds');
    expect(await storedVerifiers(database)).toEqual([]);
    await close(await open(database, secretA));
    expect(await storedVerifiers(database)).toEqual([
      { name: 'gateway-secret', verifier: deriveSecretKeys(secretA).verifier },
    ]);
  });

  it('lets processes that start together with one secret all in, and those with another none, whichever wrote first', async () => {
    const database = await freshDatabase();
    // The migrations first (a start that compares nothing), so that the starts below race on the verifier alone.
    await close(await open(database, secretA, true));
    expect(await storedVerifiers(database)).toEqual([]);
    const starts = await Promise.allSettled(
      [secretA, secretB, secretA, secretB, secretA, secretB].map((secret) =>
        open(database, secret).then(async (core) => {
          await close(core);
          return secret;
        }),
      ),
    );
    const started = starts.flatMap((start) => (start.status === 'fulfilled' ? [start.value] : []));
    const refusals = starts.flatMap((start) => (start.status === 'rejected' ? [start.reason] : []));
    expect(started).toHaveLength(3);
    expect(new Set(started).size).toBe(1);
    for (const refusal of refusals) expect(refusal).toBeInstanceOf(GatewaySecretMismatchError);
    expect(await storedVerifiers(database)).toEqual([
      { name: 'gateway-secret', verifier: deriveSecretKeys(started[0]!).verifier },
    ]);
  });

  it('adopts another secret only when asked: the previous one is refused from then on', async () => {
    const database = await freshDatabase();
    const adopting = await open(database, secretB, true);
    expect(await adopting.gatewaySecret.adopt()).toBe('stored');
    await close(adopting);
    await refused(database, secretA);
    const replacing = await open(database, secretA, true);
    expect(await replacing.gatewaySecret.adopt()).toBe('replaced');
    expect(await replacing.gatewaySecret.adopt()).toBe('unchanged');
    await close(replacing);
    await refused(database, secretB);
    await close(await open(database, secretA));
  });
});

describe('the CLI and the server refuse another GATEWAY_SECRET on the same database', () => {
  const commands = useGatewayCli({ embeddedInDataDir: false });
  const { cli } = commands;
  const other = 'another-secret-of-the-cli-Jw5Kx8Lz1Mq4Nr7';

  /** A command with `env` over the block's environment; its exit code and all it wrote. */
  const command = (env: NodeJS.ProcessEnv, ...args: string[]) =>
    run(process.execPath, [gatewayBin, ...args], { env: { ...commands.env, ...env }, timeout: 60_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
  const expectRefused = (outcome: { code: number; stdout: string; stderr: string }) => {
    expect(outcome.code, outcome.stderr).toBe(1);
    expect(outcome.stderr).toContain('gateway: GATEWAY_SECRET is not the secret this database is used with');
    for (const secret of [testSecret, other])
      for (const form of formsOf(secret)) expect(`${outcome.stdout}${outcome.stderr}`).not.toContain(form);
  };

  it('refuses keys create and serve with another secret, takes the same secret, and adopts one only when told', {
    timeout: 240_000,
  }, async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--email', 'cli-secret@example.com')) as { id: string };
    expectRefused(await command({ GATEWAY_SECRET: other }, 'keys', 'create', '--account', account.id, '--name', 'x'));
    const served = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [gatewayBin, 'serve'], {
        env: { ...commands.env, GATEWAY_SECRET: other, PORT: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => resolve({ code, output }));
    });
    expect(served.code, served.output).toBe(1);
    expect(served.output).toContain('GATEWAY_SECRET is not the secret this database is used with');
    for (const form of [...formsOf(testSecret), ...formsOf(other)]) expect(served.output).not.toContain(form);

    const key = JSON.parse(await cli('keys', 'create', '--account', account.id, '--name', 'right secret')) as {
      key: string;
    };
    await expect(command({ GATEWAY_SECRET: other }, 'secret', 'adopt')).resolves.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("required option '--yes' not specified"),
    });
    const adopted = await command({ GATEWAY_SECRET: other }, 'secret', 'adopt', '--yes');
    expect(adopted.code, adopted.stderr).toBe(0);
    expect(JSON.parse(adopted.stdout)).toEqual({ adopted: true, previous: 'another secret' });
    // (That the adopted secret refuses the one before it is the library's test above.)
    expect(JSON.parse(await cli('secret', 'adopt', '--yes'))).toEqual({ adopted: true, previous: 'another secret' });

    // The server on the right secret: the key made with it works, and both adoptions are in the audit log.
    const server = await startGatewayChild({
      configPath: shippedConfigPath,
      dataDir: commands.dataDir,
      ...(commands.env.DATABASE_URL ? { databaseUrl: commands.env.DATABASE_URL } : {}),
    });
    try {
      const balance = await fetch(`${server.url}/api/compat/v1/balance`, { headers: { 'x-api-key': key.key } });
      expect(balance.status).toBe(200);
      const audit = await fetch(`${server.url}/api/admin/v1/audit-log?action=config.secret-adopt`, {
        headers: adminHeaders,
      });
      const entries = ((await audit.json()) as { results: Array<Record<string, unknown>> }).results;
      expect(entries).toHaveLength(2);
      for (const entry of entries)
        expect(entry).toMatchObject({
          action: 'config.secret-adopt',
          actor: { kind: 'operator' },
          subject: { type: 'config' },
        });
    } finally {
      await server.kill('SIGTERM');
    }
  });

  it('keeps working on the embedded default with the secret it generates into DATA_DIR, and refuses another there', {
    timeout: 180_000,
  }, async () => {
    const ownDir = mkdtempSync(path.join(tmpdir(), 'gw-generated-secret-'));
    const embedded = { DATA_DIR: ownDir, DATABASE_URL: '', GATEWAY_SECRET: '' };
    try {
      const created = await command(embedded, 'accounts', 'create', '--email', 'embedded@example.com');
      expect(created.code, created.stderr).toBe(0);
      expect(existsSync(path.join(ownDir, 'gateway-secret'))).toBe(true);
      const { id } = JSON.parse(created.stdout) as { id: string };
      const key = await command(embedded, 'keys', 'create', '--account', id, '--name', 'generated');
      expect(key.code, key.stderr).toBe(0);
      expectRefused(
        await command({ ...embedded, GATEWAY_SECRET: other }, 'keys', 'create', '--account', id, '--name', 'z'),
      );
      // The generated secret lost: the one generated in its place is refused, and the message says where it lived.
      rmSync(path.join(ownDir, 'gateway-secret'));
      const lost = await command(embedded, 'keys', 'create', '--account', id, '--name', 'lost');
      expectRefused(lost);
      expect(lost.stderr).toContain('DATA_DIR/gateway-secret');
    } finally {
      rmSync(ownDir, { recursive: true, force: true });
    }
  });
});
