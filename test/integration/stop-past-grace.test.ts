/**
 * A graceful stop whose grace runs out while a generation still reads its upstream (needs a build: npm run
 * build): the upstream is cut, the generation is charged what it delivered and its line is logged while storage
 * is still open, leased credit goes back, and the process exits 0. It once closed storage under the generation,
 * failing the give-back of its lease and losing its log line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fundedKeyOf, startGatewayChild, type GatewayChild } from '../support/gateway-child.ts';
import { fakeProviderYaml, modelYaml } from '../support/test-gateway.ts';

describe('a stop past its grace', () => {
  let directory: string;
  let fake: FakeServer;
  const children: GatewayChild[] = [];

  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'gw-stop-past-grace-'));
    fake = await startOpenAiFake();
    writeFileSync(
      path.join(directory, 'gateway.yaml'),
      [
        'server: { shutdownGraceMs: 1000 }',
        'providers:',
        fakeProviderYaml('openai', 'openai', fake),
        'models:',
        // Forty words, one every 300 ms: twelve seconds, far past the grace.
        modelYaml('slow', { provider: 'openai', upstream: 'fake-drip-300-40' }),
      ].join('\n'),
    );
  });
  afterAll(async () => {
    for (const child of children) await child.kill('SIGKILL');
    await fake?.close();
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  const start = async () => {
    const child = await startGatewayChild({
      configPath: path.join(directory, 'gateway.yaml'),
      dataDir: path.join(directory, 'data'),
      env: { LOG_LEVEL: 'info' },
    });
    children.push(child);
    return child;
  };
  it('cuts the upstream, charges what was delivered, gives back leased credit and exits 0', async () => {
    const first = await start();
    const { key } = await fundedKeyOf(first, { credits: 5 });
    const response = await fetch(`${first.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    const exited = new Promise<number | null>((resolve) => first.process.once('exit', (code) => resolve(code)));
    first.process.kill('SIGTERM');
    // The client is cut at the grace; what it was sent is all it gets.
    while (!(await reader.read().catch(() => ({ done: true }))).done);
    const code = await exited;
    expect(code, first.output()).toBe(0);
    const output = first.output();
    expect(output).toContain('their upstreams are cut');
    expect(output).not.toContain('could not give back leased credit');
    expect(output).not.toContain('storage refused');

    const second = await start();
    const usage = await fetch(`${second.url}/api/compat/v1/usage`, { headers: { 'x-api-key': key } });
    const { results } = (await usage.json()) as {
      results: Array<{ id: string; status: string; usdCost: number; usage: { completionTokens: number } }>;
    };
    expect(results).toHaveLength(1);
    const [record] = results;
    expect(record!.status).toBe('failed');
    expect(record!.usage.completionTokens).toBeGreaterThan(0);
    expect(record!.usage.completionTokens).toBeLessThan(40);
    // The request's line, with its record, was written before the process ended.
    expect(output, output).toContain(record!.id);
    const balance = await fetch(`${second.url}/api/compat/v1/balance`, { headers: { 'x-api-key': key } });
    const { creditBalance } = (await balance.json()) as { creditBalance: number };
    expect(creditBalance).toBeCloseTo(5 - record!.usdCost, 9);
  }, 60_000);
});
