/**
 * Once per test run without TEST_DATABASE_URL: starts the embedded PostgreSQL server the gateway itself
 * runs by default (same binaries, same settings, bar more connection slots), in a temporary directory, for
 * every test file to make its own database on. It stops when the run ends (and, on Linux, when the run is
 * killed: it has a parent-death signal).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedServer } from '../../src/storage/embedded-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    embeddedServerUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (process.env.TEST_DATABASE_URL) {
    project.provide('embeddedServerUrl', '');
    return undefined;
  }
  const directory = mkdtempSync(path.join(tmpdir(), 'gw-test-server-'));
  // Searchable by others: a run as root then has the server run as nobody, which needs no user namespace.
  chmodSync(directory, 0o755);
  // Test files run side by side, each with pools of up to 30 connections, and some with gateway processes of their own.
  const server = await startEmbeddedServer({
    dataDir: path.join(directory, 'pg'),
    maxConnections: 300,
    sharedBuffers: '32MB',
  }).catch((error: unknown) => {
    rmSync(directory, { recursive: true, force: true });
    throw error;
  });
  project.provide('embeddedServerUrl', server.url);
  return async () => {
    await server.stop();
    rmSync(directory, { recursive: true, force: true });
  };
}
