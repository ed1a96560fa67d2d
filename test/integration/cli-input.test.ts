/**
 * The CLI's refusals of bad input and of a bad gateway.yaml, and the runtime it runs on, on a database of the run's
 * server: most are decided before any database is reached, the rest hold whichever PostgreSQL server stores the
 * data, so this file is not in the database suite.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { gatewayBin, useGatewayCli } from '../support/gateway-cli.ts';
import {
  compiledMain,
  gatewayRecord,
  pinnedNodeVersion,
  probeEnvironment,
  transpilerTraces,
} from '../support/gateway-runtime.ts';

const run = promisify(execFile);

describe('gateway CLI: bad input and its runtime', () => {
  const commands = useGatewayCli({ embeddedInDataDir: false });
  const { cli } = commands;

  it('runs the compiled CLI of dist/ on the pinned Node (the one npm scripts put first on PATH), with no TypeScript loader', async () => {
    const probeDir = mkdtempSync(path.join(tmpdir(), 'gw-cli-probe-'));
    try {
      await run(process.execPath, [gatewayBin, 'models', 'list'], {
        env: { ...commands.env, ...probeEnvironment(probeDir) },
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
    // Numbers as a JSON body writes them: Number() would read these as 16, 3, 7 and a limit of Infinity.
    for (const amount of ['0x10', '0b11', '0o7', 'Infinity', '1_000', '.5'])
      await expect(cli('credits', 'add', '--account', 'x', '--amount', amount)).rejects.toMatchObject({
        stderr: expect.stringContaining('expected a USD amount'),
      });
    await expect(cli('keys', 'create', '--account', 'x', '--name', 'hex', '--total', '0o7')).rejects.toMatchObject({
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

  it('refuses to start with an invalid gateway.yaml, naming the file, the path and the problem', async () => {
    const badConfig = path.join(commands.dataDir, 'bad.yaml');
    writeFileSync(badConfig, 'providers: {}\nmodels:\n  - id: x\n    providers: [{ provider: nowhere, model: y }]\n');
    await expect(
      run(process.execPath, [gatewayBin, 'serve'], {
        env: { ...commands.env, GATEWAY_CONFIG: badConfig },
        timeout: 30_000,
      }),
    ).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`${badConfig}: at models[0].providers[0].provider: unknown provider "nowhere"`),
    });
  });
});
