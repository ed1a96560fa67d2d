/**
 * The whole footprint of one gateway on its database: memory summed over the gateway process and every
 * process it started (the embedded database server and its backends), idle and under load, and requests per
 * second on the full billing path (alpha chat completions, non-streamed, against the fake upstream).
 *
 *   npm run bench:footprint                                  # the embedded default, 20 s at 32 connections
 *   npm run bench:footprint -- --seconds 10 --connections 8
 *   BENCH_DATABASE_URL=postgres://... npm run bench:footprint # on that server (not counted in the memory)
 *
 * Linux only (it reads /proc). PSS counts memory shared between processes (the server's shared buffers, the
 * binaries' pages) once, split between them; RSS counts it in every process. Prints a Markdown table and
 * writes nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const { values: options } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    connections: { type: 'string', default: '32' },
    idle: { type: 'string', default: '5' },
  },
});
const here = import.meta.dirname;

async function startProcess(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; info: Record<string, string>; startMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { child, info: JSON.parse(first) as Record<string, string>, startMs: performance.now() - started };
}

/** `root` and all its descendants, from /proc. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const tree: number[] = [];
  const visit = (pid: number) => {
    tree.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return tree;
}

interface Memory {
  processes: number;
  /** Sums over the tree. */
  rssMiB: number;
  pssMiB: number;
  /** The gateway process alone. */
  gatewayPssMiB: number;
  /** The database server's processes (postmaster and backends). */
  serverPssMiB: number;
}

function memoryOf(root: number): Memory {
  const memory: Memory = { processes: 0, rssMiB: 0, pssMiB: 0, gatewayPssMiB: 0, serverPssMiB: 0 };
  for (const pid of processTree(root)) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0) / 1024;
      memory.processes += 1;
      memory.rssMiB += field('Rss');
      memory.pssMiB += field('Pss');
      if (pid === root) memory.gatewayPssMiB = field('Pss');
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') memory.serverPssMiB += field('Pss');
    } catch {
      // gone meanwhile
    }
  }
  return memory;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fixed = (value: number) => value.toFixed(0);

const fake = await startProcess('fake-upstream.ts', {});
const gateway = await startProcess('gateway-process.ts', { BENCH_UPSTREAM_URL: fake.info.url! });
const gatewayPid = gateway.child.pid!;
try {
  await pause(Number(options.idle) * 1000);
  const idle = memoryOf(gatewayPid);
  let peak = idle;
  const sampler = setInterval(() => {
    const sample = memoryOf(gatewayPid);
    if (sample.pssMiB > peak.pssMiB) peak = sample;
  }, 1000);
  const result = await autocannon({
    url: `${gateway.info.url}/api/alpha/v1/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': gateway.info.key! },
    body: JSON.stringify({ model: 'bench-chat', messages: [{ role: 'user', content: 'Summarise the benchmark method in one short sentence please.' }], max_tokens: 64 }),
    connections: Number(options.connections),
    duration: Number(options.seconds),
  });
  clearInterval(sampler);
  const storage = process.env.BENCH_DATABASE_URL ? 'PostgreSQL at BENCH_DATABASE_URL (server not counted)' : 'embedded default';
  const memory = (sample: Memory) => `${fixed(sample.pssMiB)} (gateway ${fixed(sample.gatewayPssMiB)}, server ${fixed(sample.serverPssMiB)}; RSS sum ${fixed(sample.rssMiB)}; ${sample.processes} processes)`;
  const lines = [
    '| storage | PSS MiB idle | PSS MiB under load (peak) | req/s | p50 ms | p99 ms | errors | spawn to listening ms |',
    '|---|---|---|---|---|---|---|---|',
    `| ${storage} | ${memory(idle)} | ${memory(peak)} | ${fixed(result.requests.average)} | ${result.latency.p50} | ${result.latency.p99} | ${result.errors + result.non2xx} | ${fixed(gateway.startMs)} |`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  gateway.child.kill('SIGTERM');
  fake.child.kill('SIGTERM');
  await Promise.all([gateway.child, fake.child].map((child) => new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)))));
}
