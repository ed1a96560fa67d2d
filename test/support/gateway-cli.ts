import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase, onExternalServer, type TestDatabase } from './test-database.ts';
import { testSecret } from './test-gateway.ts';

const run = promisify(execFile);

/** The gateway's command line, as an operator runs it: `node bin/gateway.js`, which loads the compiled dist/. */
export const gatewayBin = path.resolve(import.meta.dirname, '../../bin/gateway.js');

export interface GatewayCli {
  /** Runs one command to its end; its stdout, or a rejection with its exit code and stderr. */
  cli(...args: string[]): Promise<string>;
  /** `cli`, with `input` written to the command's standard input (a password for `--password-stdin`). */
  cliWithInput(input: string, ...args: string[]): Promise<string>;
  /** The environment every command of this describe block runs with. */
  readonly env: NodeJS.ProcessEnv;
  /** The DATA_DIR of this describe block's commands. */
  readonly dataDir: string;
  /** Whether the commands run on a database of TEST_DATABASE_URL's server (otherwise on the embedded default). */
  readonly onExternalServer: boolean;
}

export interface GatewayCliOptions {
  /**
   * On the embedded default, whether each command starts the embedded server in DATA_DIR itself and stops it, as
   * an operator's command does with no DATABASE_URL (the default). Without it the commands reach a database made
   * on the run's embedded server through DATABASE_URL: for claims that hold whichever server stores the data,
   * this spares every command a server's start and stop (about a second each).
   */
  readonly embeddedInDataDir?: boolean;
}

/**
 * Commands of one describe block, on a DATA_DIR of their own (made before its tests, removed after them): with
 * TEST_DATABASE_URL on a database there; otherwise on the embedded default in that DATA_DIR, or, unless
 * `embeddedInDataDir`, on a database of the run's embedded server.
 */
export function useGatewayCli({ embeddedInDataDir = true }: GatewayCliOptions = {}): GatewayCli {
  let dataDir = '';
  let database: TestDatabase | undefined;
  let env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-cli-'));
    env = { PATH: process.env.PATH, DATA_DIR: dataDir, GATEWAY_SECRET: testSecret, LOG_LEVEL: 'warn' };
    if (onExternalServer || !embeddedInDataDir) {
      database = await createTestDatabase();
      env.DATABASE_URL = database.url;
    }
  });
  afterAll(async () => {
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  return {
    cli: async (...args) => {
      const { stdout } = await run(process.execPath, [gatewayBin, ...args], { env, timeout: 60_000 });
      return stdout;
    },
    cliWithInput: async (input, ...args) => {
      const running = run(process.execPath, [gatewayBin, ...args], { env, timeout: 60_000 });
      running.child.stdin?.end(input);
      const { stdout } = await running;
      return stdout;
    },
    get env() {
      return env;
    },
    get dataDir() {
      return dataDir;
    },
    onExternalServer,
  };
}
