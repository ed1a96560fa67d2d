/**
 * Gateway overhead benchmark: the same fake OpenAI upstream called directly and through the gateway's full
 * billing path, on alpha chat completions (non-streamed and streamed) and alpha embeddings, at 1 and 32
 * connections, in one run.
 * Upstream, gateway and load generator are three processes. Writes bench/RESULTS.md.
 *
 *   npm run bench                      # 10 s per measurement
 *   npm run bench -- --seconds 20      # longer measurements
 *   npm run bench -- --soak 600        # also: 10 minutes of load on the gateway, sampling its memory
 *   npm run bench -- --profile         # also: a CPU profile of the gateway, summarised by package
 *   npm run bench -- --out FILE        # write the report elsewhere than bench/RESULTS.md
 *   BENCH_DATABASE_URL=postgres://...  # the gateway on PostgreSQL instead of embedded PGlite
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Agent, request } from 'undici';
import { fakeOpenAiKey } from '../test/fakes/openai-fake.ts';

const { values: options } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    soak: { type: 'string', default: '0' },
    profile: { type: 'boolean', default: false },
    out: { type: 'string', default: path.join(import.meta.dirname, 'RESULTS.md') },
  },
});
const seconds = Number(options.seconds);
const soakSeconds = Number(options.soak);
const here = import.meta.dirname;

interface Stats {
  cpu: NodeJS.CpuUsage;
  rss: number;
  heapUsed: number;
}

const profileDir = options.profile ? mkdtempSync(path.join(tmpdir(), 'gw-bench-profile-')) : undefined;

async function startProcess(script: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<{ child: ChildProcess; info: Record<string, string> }> {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', path.join(here, script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { child, info: JSON.parse(first) as Record<string, string> };
}

function statsOf(child: ChildProcess): Promise<Stats> {
  return new Promise((resolve) => {
    child.once('message', (message) => resolve(message as Stats));
    child.send('stats');
  });
}

interface Target {
  url: string;
  headers: Record<string, string>;
  chatModel: string;
  embeddingModel: string;
}

type Call = 'chat' | 'chat-stream' | 'embeddings';

const messages = [{ role: 'user', content: 'Summarise the benchmark method in one short sentence please.' }];
const embeddingInput = ['The gateway bills every call exactly.', 'A second text of the same batch.'];

function requestFor(target: Target, call: Call): { path: string; body: string } {
  if (call === 'embeddings') return { path: '/embeddings', body: JSON.stringify({ model: target.embeddingModel, input: embeddingInput, encoding_format: 'float' }) };
  return { path: '/chat/completions', body: JSON.stringify({ model: target.chatModel, messages, max_tokens: 64, ...(call === 'chat-stream' ? { stream: true } : {}) }) };
}

interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
}

async function load(target: Target, call: Call, connections: number, duration: number): Promise<LoadResult> {
  const { path: endpoint, body } = requestFor(target, call);
  const result = await autocannon({
    url: `${target.url}${endpoint}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body,
    connections,
    duration,
  });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.non2xx,
  };
}

/** Time to the first body byte of a stream, one request at a time, in milliseconds (p50, p99). */
async function timeToFirstByte(target: Target, count: number): Promise<{ p50: number; p99: number }> {
  const dispatcher = new Agent({ connections: 1 });
  const samples: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = process.hrtime.bigint();
    const { path: endpoint, body } = requestFor(target, 'chat-stream');
    const response = await request(`${target.url}${endpoint}`, { dispatcher, method: 'POST', headers: { 'content-type': 'application/json', ...target.headers }, body });
    let first = true;
    for await (const _chunk of response.body) {
      if (first) samples.push(Number(process.hrtime.bigint() - started) / 1e6);
      first = false;
    }
  }
  await dispatcher.close();
  samples.sort((a, b) => a - b);
  const at = (quantile: number) => samples[Math.min(samples.length - 1, Math.floor(quantile * samples.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

const fake = await startProcess('fake-upstream.ts', {});
const gateway = await startProcess('gateway-process.ts', { BENCH_UPSTREAM_URL: fake.info.url! }, profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []);
const direct: Target = { url: `${fake.info.url}/v1`, headers: { authorization: `Bearer ${fakeOpenAiKey}` }, chatModel: 'gpt-4o-mini', embeddingModel: 'text-embedding-3-small' };
const through: Target = { url: `${gateway.info.url}/api/alpha/v1`, headers: { 'x-api-key': gateway.info.key! }, chatModel: 'bench-chat', embeddingModel: 'bench-embedding' };
const scenarioNames: Record<Call, string> = { chat: 'non-streamed', 'chat-stream': 'streamed', embeddings: 'embeddings' };

interface Row {
  scenario: string;
  direct: LoadResult;
  gateway: LoadResult;
  cpuMsPerRequest: number;
}

const rows: Row[] = [];
try {
  // Warm both paths (JIT, connection pools, database caches) before measuring.
  await load(direct, 'chat', 8, 2);
  await load(through, 'chat', 8, 2);
  for (const call of ['chat', 'chat-stream', 'embeddings'] as const) {
    for (const connections of [1, 32]) {
      const scenario = `${scenarioNames[call]}, ${connections} connection${connections > 1 ? 's' : ''}`;
      const directResult = await load(direct, call, connections, seconds);
      const before = await statsOf(gateway.child);
      const gatewayResult = await load(through, call, connections, seconds);
      const after = await statsOf(gateway.child);
      const cpuMicros = after.cpu.user - before.cpu.user + (after.cpu.system - before.cpu.system);
      rows.push({ scenario, direct: directResult, gateway: gatewayResult, cpuMsPerRequest: cpuMicros / 1000 / Math.max(1, gatewayResult.requests) });
      process.stderr.write(`${scenario}: direct ${directResult.requestsPerSecond.toFixed(0)} req/s, gateway ${gatewayResult.requestsPerSecond.toFixed(0)} req/s\n`);
    }
  }
  const ttfbDirect = await timeToFirstByte(direct, 300);
  const ttfbGateway = await timeToFirstByte(through, 300);

  const soak: Array<{ second: number; rssMb: number; heapMb: number }> = [];
  if (soakSeconds > 0) {
    const sampleEvery = 30;
    const started = Date.now();
    const running = load(through, 'chat', 32, soakSeconds);
    while (Date.now() - started < soakSeconds * 1000) {
      const stats = await statsOf(gateway.child);
      soak.push({ second: Math.round((Date.now() - started) / 1000), rssMb: stats.rss / 2 ** 20, heapMb: stats.heapUsed / 2 ** 20 });
      await new Promise((resolve) => setTimeout(resolve, sampleEvery * 1000));
    }
    await running;
  }

  const exited = new Promise((resolve) => gateway.child.once('exit', resolve));
  gateway.child.kill('SIGTERM');
  await exited;
  writeFileSync(options.out, report(rows, ttfbDirect, ttfbGateway, soak) + (profileDir ? profileSummary(profileDir) : ''));
  process.stderr.write(`wrote ${options.out}\n`);
} finally {
  gateway.child.kill('SIGTERM');
  fake.child.kill('SIGTERM');
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  samples: number[];
  timeDeltas: number[];
}

/** Where the gateway's CPU time went during the whole run: self time by package or source folder, idle excluded. */
function profileSummary(directory: string): string {
  const byPlace = new Map<string, number>();
  let busy = 0;
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(path.join(directory, file), 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
    profile.samples.forEach((id, index) => {
      const frame = nodes.get(id);
      if (!frame || frame.functionName === '(idle)') return;
      const packageName = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(frame.url)?.[1];
      const source = /\/src\/([^/]+)\//.exec(frame.url)?.[1];
      const wasm = frame.url === '' && frame.functionName.startsWith('wasm-function');
      const place = packageName ?? (source ? `src/${source}` : wasm ? 'WebAssembly (PGlite)' : frame.url.startsWith('node:') ? frame.url : frame.functionName);
      const delta = profile.timeDeltas[index] ?? 0;
      byPlace.set(place, (byPlace.get(place) ?? 0) + delta);
      busy += delta;
    });
  }
  const rows = [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, 20);
  return [
    '## Where the gateway spends its CPU',
    '',
    'Self time of the gateway process over the whole run (`--profile`), idle excluded, by package or source folder.',
    '',
    '| where | share of busy time |',
    '|---|---|',
    ...rows.map(([place, time]) => `| ${place} | ${((time / busy) * 100).toFixed(1)}% |`),
    '',
  ].join('\n');
}

function report(rows: Row[], ttfbDirect: { p50: number; p99: number }, ttfbGateway: { p50: number; p99: number }, soak: Array<{ second: number; rssMb: number; heapMb: number }>): string {
  const fixed = (value: number, digits = 2) => value.toFixed(digits);
  const lines = [
    '# Benchmark results',
    '',
    `Run on ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}; ${seconds} s per measurement.`,
    '',
    '## Method',
    '',
    '`npm run bench` starts three processes on loopback: the fake OpenAI upstream of `test/fakes/` (one word per',
    'SSE chunk, usage on every answer), the gateway (the full billing path: key',
    'authentication, capability gate, hold, relay with metering, settlement and usage record, one account with',
    'a daily cap on its key), and this load generator (autocannon). Each scenario calls the fake directly and',
    'then through `POST /api/alpha/v1/chat/completions` (or `/embeddings`: two short texts, float vectors) with the',
    'same body, one after the other in the same run;',
    'the ratio compares the two. CPU per request is the gateway process\'s user+system time over the gateway',
    'measurement divided by its requests. Time to first byte is measured separately, 300 sequential streamed',
    'requests on one connection. Latencies are in milliseconds.',
    '',
    `Storage of the gateway in this run: ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL (BENCH_DATABASE_URL)' : 'embedded PGlite on disk'}.`,
    '',
    '## Throughput and latency',
    '',
    '| scenario | direct req/s | gateway req/s | ratio | direct p50 | gateway p50 | added p50 | direct p99 | gateway p99 | gateway CPU ms/req | errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.scenario} | ${fixed(row.direct.requestsPerSecond, 0)} | ${fixed(row.gateway.requestsPerSecond, 0)} | ${fixed(row.gateway.requestsPerSecond / row.direct.requestsPerSecond)} | ${fixed(row.direct.p50)} | ${fixed(row.gateway.p50)} | ${fixed(row.gateway.p50 - row.direct.p50)} | ${fixed(row.direct.p99)} | ${fixed(row.gateway.p99)} | ${fixed(row.cpuMsPerRequest, 3)} | ${row.direct.errors + row.gateway.errors} |`,
    ),
    '',
    '## Time to first byte of a stream',
    '',
    '| | p50 | p99 |',
    '|---|---|---|',
    `| direct | ${fixed(ttfbDirect.p50, 3)} | ${fixed(ttfbDirect.p99, 3)} |`,
    `| gateway | ${fixed(ttfbGateway.p50, 3)} | ${fixed(ttfbGateway.p99, 3)} |`,
    `| added | ${fixed(ttfbGateway.p50 - ttfbDirect.p50, 3)} | ${fixed(ttfbGateway.p99 - ttfbDirect.p99, 3)} |`,
    '',
  ];
  if (soak.length > 0) {
    lines.push('## Memory under sustained load', '', `Non-streamed, 32 connections, ${soakSeconds} s; gateway process sampled every 30 s.`, '', '| second | RSS MiB | heap MiB |', '|---|---|---|');
    for (const sample of soak) lines.push(`| ${sample.second} | ${fixed(sample.rssMb, 1)} | ${fixed(sample.heapMb, 1)} |`);
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}
