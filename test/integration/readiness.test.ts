import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/config/environment.ts';
import { loadConfigFile } from '../../src/config/load-config.ts';
import { createGateway, type RunningGateway } from '../../src/main.ts';
import { startGatewayChild } from '../support/gateway-child.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { sandboxConfigYaml, shippedConfigPath, testSecret } from '../support/test-gateway.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

interface ReadyzBody {
  status: string;
  checks: Record<'database' | 'objectStore', { ok: boolean; latencyMs: number; error?: string }>;
  workers: { jobs: { state: string; active: number; concurrency: number; byState?: Record<string, number> } };
}

const drainDelayMs = 1_500;

/** Polls `url` until `accept` takes its answer, or fails after `timeoutMs`. */
async function until(
  url: string,
  accept: (status: number, body: ReadyzBody) => boolean,
  timeoutMs = 10_000,
): Promise<ReadyzBody> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const answer = await fetch(url).catch(() => undefined);
    if (answer) {
      const body = (await answer.json()) as ReadyzBody;
      if (accept(answer.status, body)) return body;
      last = `${answer.status} ${JSON.stringify(body)}`;
    }
    await sleep(50);
  }
  throw new Error(`${url} never answered as expected; last: ${last}`);
}

describe('GET /livez and GET /readyz, on a database the test can take away', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let gateway: RunningGateway;
  let dataDir: string;
  let base: string;
  let key: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await startTcpProxy(database.url);
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-readyz-'));
    const environment = readEnvironment({ DATA_DIR: dataDir, GATEWAY_SECRET: testSecret });
    const shipped = loadConfigFile(shippedConfigPath, environment.variables);
    gateway = await createGateway({
      environment,
      config: { ...shipped, server: { ...shipped.server, drainDelayMs } },
      storage: { kind: 'postgres', url: proxy.url, poolSize: 5 },
      logger: pino({ level: 'silent' }),
    });
    const services = gateway.core.services;
    const account = await services.accounts.createAccount({ email: `readyz-${Date.now()}@example.com`, creditsUsd: 5 });
    key = (await services.apiKeys.create(account.id, { name: 'readyz' })).key;
  });
  afterAll(async () => {
    await proxy?.resume().catch(() => undefined);
    await gateway?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 "starting" until the server listens, while /livez already answers', async () => {
    const ready = await gateway.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({
      status: 'starting',
      checks: { database: { ok: true }, objectStore: { ok: true } },
    });
    const live = await gateway.app.inject({ method: 'GET', url: '/livez' });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ status: 'alive' });
  });

  it('answers 200 "ready" once listening, with its checks and its job worker, no credential needed', async () => {
    const address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
    base = address;
    const submitted = await fetch(`${base}/api/v1/image/generations`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sandbox-image', content: [{ type: 'text', text: 'a lighthouse' }] }),
    });
    expect(submitted.status).toBe(200);
    const answer = await fetch(`${base}/readyz`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const body = (await answer.json()) as ReadyzBody;
    expect(body).toEqual({
      status: 'ready',
      checks: {
        database: { ok: true, latencyMs: expect.any(Number) },
        objectStore: { ok: true, latencyMs: expect.any(Number) },
      },
      workers: {
        jobs: {
          state: 'running',
          active: 0,
          concurrency: gateway.core.services.config.jobs.concurrency,
          byState: { queued: 0, processing: 0 },
        },
      },
    });
  });

  it('answers 503 "unavailable" naming the database while it is gone, /livez still 200, and ready again once it is back', async () => {
    await proxy.stop();
    const down = await until(`${base}/readyz`, (status, body) => status === 503 && body.status === 'unavailable');
    expect(down.checks.database).toMatchObject({ ok: false, error: expect.any(String) });
    // What the driver said (a code), not the message of Drizzle's wrapper, which quotes the query and its parameters.
    expect(down.checks.database.error).not.toMatch(/Failed query|SELECT|params/);
    expect(down.checks.objectStore.ok).toBe(true);
    expect(down.workers.jobs.byState).toBeUndefined();
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    await proxy.resume();
    const back = await until(`${base}/readyz`, (status) => status === 200);
    expect(back.checks.database.ok).toBe(true);
  });

  it("serves the process's metrics while the database is gone or hangs, leaving the database's figures out", async () => {
    const scrape = async () => {
      const answer = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(8_000) });
      expect(answer.status).toBe(200);
      return answer.text();
    };
    expect(await scrape()).toMatch(/^gateway_database_figures_read 1$/m);
    expect(await scrape()).toMatch(/^gateway_media_jobs\{state="queued"\} 0$/m);
    await proxy.stop();
    const gone = await scrape();
    expect(gone).toMatch(/^gateway_database_figures_read 0$/m);
    expect(gone).not.toMatch(/^gateway_media_jobs\{/m);
    expect(gone).toMatch(/^gateway_process_cpu_seconds_total /m);
    await proxy.resume();
    await until(`${base}/readyz`, (status) => status === 200);
    // Connections that go silent (a network that vanished) are waited for no longer than the figures' 2 s.
    proxy.silenceOpen();
    await proxy.refuseNew();
    const started = Date.now();
    expect(await scrape()).toMatch(/^gateway_database_figures_read 0$/m);
    expect(Date.now() - started).toBeLessThan(6_000);
    await proxy.stop();
    await proxy.resume();
    await until(`${base}/readyz`, (status) => status === 200);
    expect(await scrape()).toMatch(/^gateway_database_figures_read 1$/m);
  }, 30_000);

  it('answers 503 "draining" from the moment it is told to stop, while it still serves for server.drainDelayMs', async () => {
    const started = Date.now();
    const closing = gateway.close();
    const draining = await until(
      `${base}/readyz`,
      (status, body) => status === 503 && body.status === 'draining',
      drainDelayMs,
    );
    expect(draining.checks.database.ok).toBe(true);
    const balance = await fetch(`${base}/api/compat/v1/balance`, { headers: { 'x-api-key': key } });
    expect(balance.status).toBe(200);
    await closing;
    expect(Date.now() - started).toBeGreaterThanOrEqual(drainDelayMs);
    await expect(fetch(`${base}/livez`)).rejects.toThrow();
  });
});

describe('draining after SIGTERM, in the gateway process (needs a build: npm run build)', () => {
  it('answers 503 "draining" after SIGTERM for server.drainDelayMs, then exits cleanly', async () => {
    const database = await createTestDatabase();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-drain-'));
    const configPath = path.join(dataDir, 'gateway.yaml');
    writeFileSync(configPath, sandboxConfigYaml(`server:\n  drainDelayMs: 3000\n`));
    const child = await startGatewayChild({ configPath, dataDir, databaseUrl: database.url });
    try {
      expect((await until(`${child.url}/readyz`, (status) => status === 200)).status).toBe('ready');
      const exited = new Promise<number | null>((resolve) => child.process.once('exit', (code) => resolve(code)));
      child.process.kill('SIGTERM');
      await until(`${child.url}/readyz`, (status, body) => status === 503 && body.status === 'draining', 2_500);
      expect((await fetch(`${child.url}/livez`)).status).toBe(200);
      expect(await exited).toBe(0);
    } finally {
      await child.kill('SIGKILL');
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
