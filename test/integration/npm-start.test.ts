import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledMain, gatewayRecord, pinnedNodeVersion, probeEnvironment, transpilerTraces } from '../support/gateway-runtime.ts';

const run = promisify(execFile);
const repositoryRoot = path.resolve(import.meta.dirname, '../..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once the gateway answers its probe; the test's own timeout bounds the wait. */
async function answering(port: number, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/api/alpha`, { method: 'HEAD' }).then((response) => response.ok, () => false);
    if (ok) return;
    await pause(200);
  }
}

/** True while any process of the group is alive. */
function groupAlive(groupId: number): boolean {
  try {
    process.kill(-groupId, 0);
    return true;
  } catch {
    return false;
  }
}

async function groupGone(groupId: number): Promise<void> {
  while (groupAlive(groupId)) await pause(100);
}

/** The quick start's account-and-key block from README.md, pointed at `port`. */
function quickStartScript(port: number): string {
  const readme = readFileSync(path.join(repositoryRoot, 'README.md'), 'utf8');
  const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Configuration'));
  const block = [...quickStart.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!).find((text) => text.includes('auth/signup'));
  if (!block) throw new Error('README quick start has no signup block');
  return block.replaceAll('localhost:8080', `127.0.0.1:${port}`);
}

describe('npm start', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-npm-start-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  async function start(extraEnv: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number; exited: Promise<number | null> }> {
    const port = await freePort();
    const child = spawn('npm', ['start'], {
      cwd: repositoryRoot,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', DATABASE_URL: '', GATEWAY_SECRET: '', ...extraEnv },
      detached: true,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await answering(port, child);
    return { child, port, exited };
  }

  it('serves the README quick start twice on the same data, then stops on SIGTERM leaving no process behind', async () => {
    const { child, port, exited } = await start();
    try {
      for (let round = 0; round < 2; round++) {
        const { stdout } = await run('bash', ['-c', quickStartScript(port)], { timeout: 60_000 });
        expect(stdout, `round ${round + 1}`).toMatch(/\{"creditBalance":[0-9.]+\}/);
        expect(stdout, `round ${round + 1}`).toContain('sandbox-echo');
        expect(stdout, `round ${round + 1}`).toContain('Hello, gateway');
        expect(stdout, `round ${round + 1}`).not.toContain('"errors"');
      }
    } finally {
      process.kill(child.pid!, 'SIGTERM');
    }
    expect(await exited).toBe(0);
    await groupGone(child.pid!);
    expect(groupAlive(child.pid!)).toBe(false);
  }, 180_000);

  it('stops on SIGINT leaving no process behind', async () => {
    const { child, exited } = await start();
    process.kill(child.pid!, 'SIGINT');
    await exited;
    await groupGone(child.pid!);
    expect(groupAlive(child.pid!)).toBe(false);
  }, 120_000);

  it('runs the compiled JavaScript of dist/ on the pinned Node, with no TypeScript loader', async () => {
    const probeDir = mkdtempSync(path.join(tmpdir(), 'gw-npm-start-probe-'));
    try {
      const { child, exited } = await start(probeEnvironment(probeDir));
      process.kill(child.pid!, 'SIGTERM');
      expect(await exited).toBe(0);
      const gateway = gatewayRecord(probeDir);
      expect(gateway.version).toBe(pinnedNodeVersion);
      expect(gateway.urls).toContain(compiledMain);
      expect(transpilerTraces(gateway)).toEqual([]);
    } finally {
      rmSync(probeDir, { recursive: true, force: true });
    }
  }, 120_000);
});
