/**
 * Image jobs through the sandbox, on the gateway's full job path (check, hold and job in one transaction,
 * claim, generate, archive, settle with the usage record): the overhead a client sees from submitting to
 * reading the finished job, and how many jobs a second one process carries.
 *
 *   npm run bench:jobs                          # 200 sequential jobs, then 2,000 at 32 connections
 *   npm run bench:jobs -- --sequential 500 --jobs 5000 --connections 64
 *   npm run bench:jobs -- --out FILE            # the markdown section (stdout otherwise)
 *   BENCH_DATABASE_URL=postgres://...           # on PostgreSQL instead of the embedded default
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { fakeOpenAiKey } from '../test/fakes/openai-fake.ts';
import { ask, gatewayCommand, startGateway, stop, treeCpuMs, treePss, type Started } from './processes.ts';

const { values: options } = parseArgs({
  options: {
    sequential: { type: 'string', default: '200' },
    jobs: { type: 'string', default: '2000' },
    connections: { type: 'string', default: '32' },
    out: { type: 'string' },
  },
});
const sequential = Number(options.sequential);
const total = Number(options.jobs);
const connections = Number(options.connections);
const dispatcher = new Agent({ connections, keepAliveTimeout: 30_000 });
const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-bench-jobs-'));
const running: Started[] = [];

interface Job {
  generationId: string;
  status: string;
}

async function call<T>(
  method: 'GET' | 'POST',
  url: string,
  { key, body }: { key: string; body?: unknown },
): Promise<{ status: number; body: T }> {
  const response = await request(url, {
    method,
    dispatcher,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.statusCode, body: (await response.body.json()) as T };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ms = (value: number) => `${value.toFixed(2)} ms`;

try {
  // The upstream is unused here (the sandbox generates in process); the gateway process still needs one configured.
  const gateway = await startGateway(
    gatewayCommand(process.execPath, []),
    { BENCH_UPSTREAM_URL: 'http://127.0.0.1:9', BENCH_UPSTREAM_KEY: fakeOpenAiKey, BENCH_DATA_DIR: dataDir },
    path.join(dataDir, 'gateway.log'),
  );
  running.push(gateway);
  const base = gateway.info.url!;
  const { key } = await ask<{ key: string }>(gateway.child, { type: 'account', creditsUsd: 1_000_000 });
  const body = (index: number) => ({ model: 'bench-image', content: [{ type: 'text', text: `bench image ${index}` }] });
  const submit = async (index: number) => {
    const answer = await call<Job>('POST', `${base}/api/v1/image/generations/async`, { key, body: body(index) });
    if (answer.status !== 202) throw new Error(`submit answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body.generationId;
  };
  const poll = (id: string) => call<Job>('GET', `${base}/api/v1/image/generations/async/${id}`, { key });

  // Warm-up: JIT, pools, the database's caches.
  for (let index = 0; index < 50; index++) {
    const id = await submit(-index - 1);
    while ((await poll(id)).body.status !== 'succeeded');
  }

  // Sequential: submit, then poll as fast as the client can until the job reads succeeded.
  const submitMs: number[] = [];
  const untilDoneMs: number[] = [];
  const pollMs: number[] = [];
  for (let index = 0; index < sequential; index++) {
    const started = performance.now();
    const id = await submit(index);
    submitMs.push(performance.now() - started);
    for (;;) {
      const before = performance.now();
      const job = await poll(id);
      pollMs.push(performance.now() - before);
      if (job.body.status === 'succeeded') break;
      if (job.body.status === 'failed') throw new Error(`job ${id} failed`);
    }
    untilDoneMs.push(performance.now() - started);
  }
  for (const list of [submitMs, untilDoneMs, pollMs]) list.sort((a, b) => a - b);

  // Throughput: `total` jobs submitted over `connections` connections, then read until every one succeeded.
  const cpuBefore = treeCpuMs(gateway.child.pid!);
  const started = performance.now();
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < total) ids.push(await submit(sequential + next++));
    }),
  );
  const submittedMs = performance.now() - started;
  let pending = [...ids];
  let peakPss = 0;
  while (pending.length > 0) {
    peakPss = Math.max(peakPss, treePss(gateway.child.pid!));
    const states = await Promise.all(
      pending.slice(0, connections * 4).map(async (id) => ({ id, status: (await poll(id)).body.status })),
    );
    const failed = states.filter((state) => state.status === 'failed');
    if (failed.length > 0) throw new Error(`${failed.length} jobs failed`);
    const finished = new Set(states.filter((state) => state.status === 'succeeded').map((state) => state.id));
    pending = pending.filter((id) => !finished.has(id));
  }
  const allMs = performance.now() - started;
  const cpuMsPerJob = (treeCpuMs(gateway.child.pid!) - cpuBefore) / total;

  const storage = process.env.BENCH_DATABASE_URL ? 'PostgreSQL (BENCH_DATABASE_URL)' : 'the embedded default';
  const text = [
    `## Image jobs through the sandbox (${new Date().toISOString().slice(0, 10)})`,
    '',
    `\`npm run bench:jobs\` on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${gateway.info.node}, ${storage}; the gateway in a process of its own,`,
    'the sandbox model `bench-image` (one 64×64 PNG per job, made in process), every job held, claimed, generated, archived to the',
    'filesystem store and settled into its usage record.',
    '',
    `| sequential, ${sequential} jobs | p50 | p95 | p99 |`,
    '|---|---|---|---|',
    `| submit (202 answered) | ${ms(percentile(submitMs, 50))} | ${ms(percentile(submitMs, 95))} | ${ms(percentile(submitMs, 99))} |`,
    `| submit to a poll reading \`succeeded\` | ${ms(percentile(untilDoneMs, 50))} | ${ms(percentile(untilDoneMs, 95))} | ${ms(percentile(untilDoneMs, 99))} |`,
    `| one poll | ${ms(percentile(pollMs, 50))} | ${ms(percentile(pollMs, 95))} | ${ms(percentile(pollMs, 99))} |`,
    '',
    `| ${total} jobs over ${connections} connections | |`,
    '|---|---|',
    `| submitted | ${(total / (submittedMs / 1000)).toFixed(0)} jobs/s |`,
    `| submitted and all succeeded | ${(total / (allMs / 1000)).toFixed(0)} jobs/s (${(allMs / 1000).toFixed(2)} s) |`,
    `| gateway CPU per job (process tree, database included) | ${cpuMsPerJob.toFixed(2)} ms |`,
    `| peak PSS while draining | ${(peakPss / 1024 / 1024).toFixed(0)} MiB |`,
    '',
  ].join('\n');
  if (options.out) writeFileSync(options.out, text);
  else process.stdout.write(text);
} finally {
  for (const started of running.reverse()) await stop(started.child);
  await dispatcher.close();
  rmSync(dataDir, { recursive: true, force: true });
}
