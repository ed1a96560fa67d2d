import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fakeOpenAiKey } from '../test/fakes/openai-fake.ts';
import { load } from './load.ts';
import { ask, gatewayCommand, startGateway, startWithReadyLine, stop } from './processes.ts';

const here = import.meta.dirname;
const [distDir, outDir, call = 'chat-stream'] = process.argv.slice(2);
const fake = await startWithReadyLine({ command: process.execPath, args: ['--import', 'tsx', path.join(here, 'fake-upstream.ts')] }, {});
const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-prof-'));
const started = await startGateway(gatewayCommand(process.execPath, ['--cpu-prof', '--cpu-prof-dir', outDir!, '--cpu-prof-interval', '200']), {
  BENCH_UPSTREAM_URL: fake.info.url!, BENCH_UPSTREAM_KEY: fakeOpenAiKey, BENCH_DATA_DIR: dataDir, BENCH_DIST_DIR: distDir!, BENCH_DATABASE_URL: '', BENCH_LOG_LEVEL: 'warn',
}, path.join(dataDir, 'gateway.log'));
const { key } = await ask<{ key: string }>(started.child, { type: 'account', creditsUsd: 1_000_000 });
const target = { name: 'x', url: `${started.info.url}/api/alpha/v1`, headers: { 'x-api-key': key }, chatModel: 'bench-chat', embeddingModel: 'bench-embedding' };
await load(target, call as 'chat-stream', { connections: 8, duration: 3 });
const r = await load(target, call as 'chat-stream', { connections: 32, duration: 10 });
console.log('requests', r.requests);
await stop(started.child);
await stop(fake.child);
