import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { startGatewayChild, type GatewayChild } from '../support/gateway-child.ts';
import { fakeProviderYaml, modelYaml, sandboxConfigYaml, testAdminToken } from '../support/test-gateway.ts';

/** The compiled gateway as its own process (needs `npm run build`), reloading gateway.yaml on SIGHUP. */
describe('SIGHUP on a gateway process', () => {
  let directory: string;
  let configPath: string;
  let gateway: GatewayChild;
  let key: string;

  const chat = (model: string) =>
    fetch(`${gateway.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
    });
  const admin = async (url: string, body: unknown) => {
    const answer = await fetch(`${gateway.url}/api/admin/v1${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${testAdminToken}` },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(201);
    return (await answer.json()) as { id: string; key: string };
  };
  /** Sends SIGHUP and waits for the log line the reload writes, counted from the ones already written. */
  const signalReload = async (line: string) => {
    const before = gateway.output().split(line).length;
    gateway.process.kill('SIGHUP');
    await expect.poll(() => gateway.output().split(line).length).toBeGreaterThan(before);
  };

  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'gw-sighup-'));
    configPath = path.join(directory, 'gateway.yaml');
    writeFileSync(configPath, sandboxConfigYaml());
    gateway = await startGatewayChild({
      configPath,
      dataDir: path.join(directory, 'data'),
      env: { LOG_LEVEL: 'info' },
    });
    const account = await admin('/accounts', { email: 'sighup@example.com', credits: 5 });
    key = (await admin(`/accounts/${account.id}/api-keys`, { name: 'sighup' })).key;
  }, 90_000);

  afterAll(async () => {
    await gateway?.kill('SIGTERM');
    rmSync(directory, { recursive: true, force: true });
  });

  it('serves a model added to gateway.yaml once signalled, and keeps serving on a file that fails', async () => {
    expect((await chat('late-echo')).status).toBe(400);

    writeFileSync(configPath, sandboxConfigYaml(modelYaml('late-echo', { provider: 'sandbox', upstream: 'echo' })));
    await signalReload('"msg":"configuration reloaded"');
    expect(gateway.output()).toContain('"added":["late-echo"]');
    expect((await chat('late-echo')).status).toBe(200);
    const log = await fetch(`${gateway.url}/api/admin/v1/audit-log?action=config.reload`, {
      headers: { authorization: `Bearer ${testAdminToken}` },
    });
    expect(await log.json()).toMatchObject({
      results: [
        {
          actor: { kind: 'operator' },
          request: { trigger: 'SIGHUP' },
          after: { configDiff: { models: { added: ['late-echo'] } } },
        },
      ],
    });

    writeFileSync(configPath, sandboxConfigYaml('  - id: broken\n    providers: [{ provider: nowhere, model: x }]\n'));
    await signalReload('"msg":"configuration reload refused: nothing changed"');
    expect(gateway.output()).toContain('unknown provider \\"nowhere\\"');
    expect(gateway.process.exitCode).toBeNull();
    expect((await chat('late-echo')).status).toBe(200);
  });
});

/**
 * A reload signal that reaches a process while it stops (a rolling update's config-map reload, an operator's
 * `kill -HUP` to every replica) is not the end of it: the requests the stop is finishing finish and are billed.
 */
describe('SIGHUP on a gateway process that is stopping', () => {
  it('is ignored: the stream in flight ends whole and the process exits cleanly', async () => {
    const fake = await startOpenAiFake();
    const directory = mkdtempSync(path.join(tmpdir(), 'gw-sighup-stop-'));
    const configPath = path.join(directory, 'gateway.yaml');
    writeFileSync(
      configPath,
      [
        'server: { shutdownGraceMs: 30000 }',
        'providers:',
        fakeProviderYaml('openai', 'openai', fake),
        'models:',
        // Ten words, one every 150 ms.
        modelYaml('slow', { provider: 'openai', upstream: 'fake-drip-150-10' }),
      ].join('\n'),
    );
    const gateway = await startGatewayChild({
      configPath,
      dataDir: path.join(directory, 'data'),
      env: { LOG_LEVEL: 'info' },
    });
    try {
      const admin = async (url: string, body: unknown) => {
        const answer = await fetch(`${gateway.url}/api/admin/v1${url}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${testAdminToken}` },
          body: JSON.stringify(body),
        });
        return (await answer.json()) as { id: string; key: string };
      };
      const account = await admin('/accounts', { email: 'stopping@example.com', credits: 5 });
      const { key } = await admin(`/accounts/${account.id}/api-keys`, { name: 'stopping' });
      const response = await fetch(`${gateway.url}/api/alpha/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'hello' }] }),
      });
      expect(response.status).toBe(200);
      const exited = new Promise<number | null>((resolve) => gateway.process.once('exit', (code) => resolve(code)));
      gateway.process.kill('SIGTERM');
      await expect.poll(() => gateway.output()).toContain('shutting down');
      gateway.process.kill('SIGHUP');
      const body = await response.text();
      expect(body.trimEnd().endsWith('data: [DONE]'), body).toBe(true);
      expect(body.split('"content":"').length - 2).toBe(10);
      expect(await exited).toBe(0);
      expect(gateway.output()).toContain('SIGHUP ignored');
    } finally {
      await gateway.kill('SIGKILL');
      await fake.close();
      rmSync(directory, { recursive: true, force: true });
    }
  }, 90_000);
});
