import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compiledMain,
  gatewayRecord,
  modulesResolvedByNode,
  packagesLoadedOnUse,
  pinnedNodeVersion,
  probeEnvironment,
  transpilerTraces,
} from '../support/gateway-runtime.ts';
import { freePort } from '../support/free-port.ts';

const run = promisify(execFile);
const repositoryRoot = path.resolve(import.meta.dirname, '../..');

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once the gateway answers its probe; the test's own timeout bounds the wait. */
async function answering(port: number, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/api/alpha`, { method: 'HEAD' }).then(
      (response) => response.ok,
      () => false,
    );
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

/** The embedded database server's postmaster (it runs in a process group of its own). */
function serverPid(dataDir: string): number {
  return Number(readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** Running, as opposed to gone or a zombie waiting to be reaped (where /proc tells). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

async function serverGone(pid: number): Promise<void> {
  while (running(pid)) await pause(100);
}

/** The quick start's account-and-key block from README.md, pointed at `port`. */
function quickStartScript(port: number): string {
  const readme = readFileSync(path.join(repositoryRoot, 'README.md'), 'utf8');
  const start = readme.indexOf('## Quick start');
  const quickStart = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const block = [...quickStart.matchAll(/```sh(?: runnable)?\n([\s\S]*?)```/g)]
    .map((match) => match[1]!)
    .find((text) => text.includes('auth/signup'));
  if (!block) throw new Error('README quick start has no signup block');
  return block.replaceAll('localhost:8080', `127.0.0.1:${port}`);
}

describe('npm start', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-npm-start-'));
    // Open to others like a project's ./data, so that as root the server runs as nobody (other tests' private
    // directories have it run in a user namespace).
    chmodSync(dataDir, 0o755);
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  async function start(
    extraEnv: Record<string, string> = {},
  ): Promise<{ child: ChildProcess; port: number; exited: Promise<number | null> }> {
    const port = await freePort();
    const child = spawn('npm', ['start'], {
      cwd: repositoryRoot,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        DATABASE_URL: '',
        GATEWAY_SECRET: '',
        ...extraEnv,
      },
      detached: true,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await answering(port, child);
    return { child, port, exited };
  }

  it('serves the README quick start twice on the same data, then stops on SIGTERM leaving no process behind', async () => {
    const { child, port, exited } = await start();
    const server = serverPid(dataDir);
    expect(running(server)).toBe(true);
    if (process.getuid?.() === 0 && process.platform === 'linux') {
      // PostgreSQL refuses root: the gateway ran it as an unprivileged user.
      expect(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${server}/status`, 'utf8'))?.[1]).not.toBe('0');
    }
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
    // The database server stopped with it, cleanly.
    expect(running(server)).toBe(false);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, 180_000);

  it('stops on SIGINT leaving no process behind', async () => {
    const { child, exited } = await start();
    const server = serverPid(dataDir);
    process.kill(child.pid!, 'SIGINT');
    await exited;
    await groupGone(child.pid!);
    expect(groupAlive(child.pid!)).toBe(false);
    expect(running(server)).toBe(false);
  }, 120_000);

  it('runs the compiled JavaScript of dist/ on the pinned Node, with no TypeScript loader and a compile cache, and loads no package it does not use', async () => {
    const probeDir = mkdtempSync(path.join(tmpdir(), 'gw-npm-start-probe-'));
    try {
      const { child, exited } = await start(probeEnvironment(probeDir));
      process.kill(child.pid!, 'SIGTERM');
      expect(await exited).toBe(0);
      const gateway = gatewayRecord(probeDir);
      expect(gateway.version).toBe(pinnedNodeVersion);
      expect(gateway.urls).toContain(compiledMain);
      expect(transpilerTraces(gateway)).toEqual([]);
      // No Redis, no bucket and no media measured: none of the clients and parsers kept for those was loaded.
      expect(packagesLoadedOnUse(gateway)).toEqual([]);
      // drizzle-orm's modules (over a hundred) import one another past Node's package lookup: only the few entry
      // points the gateway imports reach Node's resolver.
      expect(modulesResolvedByNode(gateway, 'drizzle-orm').length).toBeLessThan(10);
      // What it compiled is kept for the next start (Node's compile cache).
      expect(gateway.compileCacheDir).toEqual(expect.any(String));
    } finally {
      rmSync(probeDir, { recursive: true, force: true });
    }
  }, 120_000);

  it.runIf(process.platform === 'linux')(
    'leaves no database server running when killed with SIGKILL, and serves the same data at the next start',
    async () => {
      const { child } = await start();
      const server = serverPid(dataDir);
      process.kill(-child.pid!, 'SIGKILL');
      await groupGone(child.pid!);
      // The server had a parent-death signal: it shuts down by itself.
      await serverGone(server);
      const next = await start();
      try {
        // The account the quick start made in the first test is still there: its login path answers.
        const { stdout } = await run('bash', ['-c', quickStartScript(next.port)], { timeout: 60_000 });
        expect(stdout).toMatch(/\{"creditBalance":[0-9.]+\}/);
        expect(serverPid(dataDir)).not.toBe(server);
      } finally {
        process.kill(next.child.pid!, 'SIGTERM');
      }
      expect(await next.exited).toBe(0);
    },
    180_000,
  );
});
