// The gateway under test, in a process of its own, on the full billing path (auth, gating, hold, settle, record).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { readEnvironment } from '../src/config/environment.ts';
import { parseConfig } from '../src/config/load-config.ts';
import { createGateway } from '../src/main.ts';
import { fakeOpenAiKey } from '../test/fakes/openai-fake.ts';

const upstream = process.env.BENCH_UPSTREAM_URL;
if (!upstream) throw new Error('BENCH_UPSTREAM_URL is required');
// BENCH_DATA_DIR: an existing DATA_DIR (its database already made); by default a new one.
const dataDir = process.env.BENCH_DATA_DIR || mkdtempSync(path.join(tmpdir(), 'gw-bench-'));
const environment = readEnvironment({ DATA_DIR: dataDir, GATEWAY_SECRET: 'bench-secret-0123456789abcdef0123456789', LOG_LEVEL: 'warn' });
const config = parseConfig(
  [
    'providers:',
    `  upstream: { protocol: openai, baseUrl: "${upstream}/v1", apiKey: ${fakeOpenAiKey} }`,
    'models:',
    '  - id: bench-chat',
    '    pricing: { inputPerMTok: 0.15, outputPerMTok: 0.6 }',
    '    providers: [{ provider: upstream, model: gpt-4o-mini }]',
    '  - id: bench-embedding',
    '    outputModalities: [embedding]',
    '    pricing: { inputPerMTok: 0.02 }',
    '    providers: [{ provider: upstream, model: text-embedding-3-small }]',
  ].join('\n'),
  'bench.yaml',
  environment.variables,
);
const databaseUrl = process.env.BENCH_DATABASE_URL;
const gateway = await createGateway({
  environment,
  config,
  storage: databaseUrl ? { kind: 'postgres', url: databaseUrl } : { kind: 'embedded', dataDir },
  logger: pino({ level: 'warn' }),
});
const services = gateway.core.services;
const account = await services.accounts.createAccount({ email: `bench-${Date.now()}@example.com`, creditsUsd: 1_000_000 });
const key = await services.apiKeys.create(account.id, { name: 'bench', limits: { daily: 100_000 } });
const url = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ url, key: key.key })}\n`);

process.on('message', (message) => {
  if (message === 'stats') process.send?.({ cpu: process.cpuUsage(), rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed });
});
process.on('SIGTERM', () => {
  void gateway.close().then(() => {
    if (!process.env.BENCH_DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
});
