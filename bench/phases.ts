/**
 * Where the latency our gateway adds at one connection goes: sequential calls (one non-streamed and one streamed
 * chat completion a round) to the fake upstream directly, through the bare proxy and through our gateway, with
 * our gateway's process timing each request's phases from its diagnostics channels (bench/phase-clock.ts): the
 * wall time and the process's CPU time of each, at p50. The phases our code runs in are on the request's path;
 * the others are the upstream's and the loopback's.
 *
 *   npm run bench:phases                      # 1,000 rounds after 200 of warm-up
 *   npm run bench:phases -- --rounds 3000 --out FILE
 *   npm run bench:phases -- --baseline DIR --sessions 4
 *                     # also the build in DIR (its dist/), measured in the same rounds; each session starts fresh
 *                     # gateways of both, each build first in turn (one process may be slower than another of
 *                     # the same build for its whole life), and the report takes the median of the sessions
 *   npm run bench:phases -- --awake           # with a busy loop per CPU at idle priority (SCHED_IDLE, `chrt`), so
 *                                             # no CPU sleeps between requests: what waking from idle costs here
 *   BENCH_DATABASE_URL=postgres://...         # our gateway on PostgreSQL instead of the embedded default
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fakeOpenAiKey } from '../test/fakes/openai-fake.ts';
import { checkAnswers, oursTarget, preciseLatency, upstreamTarget, type PreciseLatency, type Target } from './load.ts';
import type { Moment, PhaseSample } from './phase-clock.ts';
import {
  ask,
  bareProxyCommand,
  gatewayCommand,
  startGateway,
  startFakeUpstream,
  startWithReadyLine,
  stop,
  type Started,
} from './processes.ts';

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '200' },
    out: { type: 'string' },
    baseline: { type: 'string' },
    sessions: { type: 'string', default: '1' },
    awake: { type: 'boolean', default: false },
  },
});
const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-bench-phases-'));
const running: Started[] = [];
const spinners: ChildProcess[] = [];

/** One busy loop per CPU in the idle scheduling class: it runs only when nothing else would, so no CPU halts. */
function keepCpusAwake(): void {
  for (const _cpu of cpus()) {
    spinners.push(spawn('chrt', ['--idle', '0', process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' }));
  }
}

interface Phase {
  from: Moment;
  to: Moment;
  what: string;
  /** Our gateway's code runs in it (else it is the upstream's time, or the loopback's). */
  ours: boolean;
}

const before: Phase[] = [
  { from: 'arrived', to: 'handler', ours: true, what: 'body read, hooks (key, rate limits), JSON checks, validation' },
  { from: 'handler', to: 'upstreamCreated', ours: true, what: 'capability gate, admission (hold), translation' },
  { from: 'upstreamCreated', to: 'upstreamSent', ours: true, what: 'upstream request written (undici)' },
  { from: 'upstreamSent', to: 'upstreamHeaders', ours: false, what: 'upstream: to its answer headers' },
  { from: 'upstreamHeaders', to: 'upstreamFirstChunk', ours: false, what: 'upstream: headers to first body bytes' },
];
const phasesOf: Record<'whole' | 'stream', Phase[]> = {
  whole: [
    ...before,
    { from: 'upstreamFirstChunk', to: 'upstreamEnded', ours: false, what: 'upstream: rest of the body' },
    { from: 'upstreamEnded', to: 'clientFirstWrite', ours: true, what: 'answer checked, metered, written' },
  ],
  stream: [
    ...before,
    { from: 'upstreamFirstChunk', to: 'clientFirstWrite', ours: true, what: 'first event checked, metered, written' },
  ],
};

function p50(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const span = (sample: PhaseSample, clock: 'wall' | 'cpu', { from, to }: Phase) =>
  (sample[clock][to] ?? Number.NaN) - (sample[clock][from] ?? Number.NaN);

function phaseTable(samples: PhaseSample[], phases: Phase[]): string[] {
  const rows = phases.map((phase) => {
    const wall = p50(samples.map((sample) => span(sample, 'wall', phase)));
    const cpu = p50(samples.map((sample) => span(sample, 'cpu', phase)));
    return `| ${phase.what} | ${phase.ours ? 'ours' : 'upstream'} | ${wall.toFixed(0)} | ${phase.ours ? cpu.toFixed(0) : '—'} |`;
  });
  const ourSum = (sample: PhaseSample, clock: 'wall' | 'cpu') =>
    phases.filter((phase) => phase.ours).reduce((sum, phase) => sum + span(sample, clock, phase), 0);
  const total = p50(samples.map((sample) => sample.wall.clientFirstWrite ?? Number.NaN));
  return [
    '| phase | whose | wall µs, p50 | process CPU µs, p50 |',
    '|---|---|---|---|',
    ...rows,
    `| **our phases together** (p50 of each request's sum) | ours | **${p50(samples.map((sample) => ourSum(sample, 'wall'))).toFixed(0)}** | **${p50(samples.map((sample) => ourSum(sample, 'cpu'))).toFixed(0)}** |`,
    `| arrival to the client's first byte written | | ${total.toFixed(0)} | |`,
  ];
}

/** Our gateway from `distDir` (this checkout's dist/ when unset), with its phase clock, and a key of a new account. */
async function startOurs(
  upstreamUrl: string,
  name: string,
  distDir: string | undefined,
): Promise<{ started: Started; target: Target }> {
  const data = mkdtempSync(path.join(dataDir, `${name}-`));
  const env = {
    BENCH_UPSTREAM_URL: upstreamUrl,
    BENCH_UPSTREAM_KEY: fakeOpenAiKey,
    BENCH_DATA_DIR: data,
    BENCH_PHASE_CLOCK: '1',
    ...(distDir ? { BENCH_DIST_DIR: path.resolve(distDir, 'dist') } : {}),
  };
  const started = await startGateway(gatewayCommand(process.execPath, []), env, path.join(data, 'gateway.log'));
  running.push(started);
  return { started, target: await oursTarget(started, name) };
}

const us = (ms: number) => (ms * 1000).toFixed(0);

/** The phase tables of one of our gateways, non-streamed and streamed. */
function phaseSections(name: string, samples: PhaseSample[]): string[] {
  const whole = samples.filter((sample) => !sample.streamed);
  const streamed = samples.filter((sample) => sample.streamed);
  return [
    `Non-streamed, in ${name} (${whole.length} requests):`,
    '',
    ...phaseTable(whole, phasesOf.whole),
    '',
    `Streamed, to the first byte, in ${name} (${streamed.length} requests):`,
    '',
    ...phaseTable(streamed, phasesOf.stream),
    '',
  ];
}

/** One session: fresh gateways of each build, started in `order`, measured over the rounds; their phase samples. */
interface Session {
  latencies: Map<string, PreciseLatency>;
  samples: Map<string, PhaseSample[]>;
  storage: string;
}

async function session(
  upstreamUrl: string,
  fixed: Target[],
  order: Array<{ name: string; distDir: string | undefined }>,
): Promise<Session> {
  const gateways = [];
  for (const { name, distDir } of order) gateways.push(await startOurs(upstreamUrl, name, distDir));
  try {
    const targets = [...fixed, ...gateways.map(({ target }) => target)];
    for (const target of targets) await checkAnswers(target);
    await preciseLatency(targets, Number(options.warmup), { rotate: true });
    for (const { started } of gateways) await ask(started.child, { type: 'phases' });
    const measured = await preciseLatency(targets, Number(options.rounds), { rotate: true });
    const samples = new Map<string, PhaseSample[]>();
    for (const { started, target } of gateways) {
      samples.set(target.name, (await ask<{ samples: PhaseSample[] }>(started.child, { type: 'phases' })).samples);
    }
    return {
      latencies: new Map(targets.map((target, index) => [target.name, measured[index]!])),
      samples,
      storage: gateways[0]!.started.info.storage ?? '',
    };
  } finally {
    for (const { started } of gateways) {
      await stop(started.child);
      running.splice(running.indexOf(started), 1);
    }
  }
}

try {
  const fake = await startFakeUpstream();
  running.push(fake);
  const bare = await startWithReadyLine(bareProxyCommand(process.execPath), { BENCH_UPSTREAM_URL: fake.info.url! });
  running.push(bare);
  const fixed = [upstreamTarget('direct', `${fake.info.url}/v1`), upstreamTarget('bare', `${bare.info.url}/v1`)];
  const builds = [
    { name: 'ours', distDir: undefined },
    ...(options.baseline ? [{ name: 'baseline', distDir: options.baseline }] : []),
  ];
  if (options.awake) keepCpusAwake();
  const sessions: Session[] = [];
  for (let index = 0; index < Number(options.sessions); index++) {
    // A process may run slower than another of the same build for its whole life: each build starts first in turn.
    sessions.push(await session(fake.info.url!, fixed, index % 2 === 0 ? builds : [...builds].reverse()));
  }
  const names = [...fixed, ...builds].map((target) => target.name);
  const p50Of = (name: string, of: (latency: PreciseLatency) => number) =>
    p50(sessions.map((measured) => of(measured.latencies.get(name)!)));
  const row = (what: string, of: (latency: PreciseLatency) => number) =>
    `| ${what} | ${names.map((name) => us(p50Of(name, of))).join(' | ')} | ${names
      .slice(1)
      .map((name) => us(p50Of(name, of) - p50Of('direct', of)))
      .join(' | ')} |`;
  const report = [
    `Run on ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim().split(' ').slice(0, 2).join(' ')}, ${process.version}, ${options.sessions} session(s) of ${options.rounds} rounds on one connection each (the targets in turn, each round starting one further on; the median of the sessions' p50s), storage: ${sessions[0]?.storage}${options.awake ? '; every CPU kept awake by an idle-priority busy loop' : ''}${options.baseline ? `; baseline: the build in ${options.baseline}` : ''}.`,
    '',
    `| one connection, p50 µs | ${names.join(' | ')} | ${names
      .slice(1)
      .map((name) => `${name} adds`)
      .join(' | ')} |`,
    `|---|${names.map(() => '---|').join('')}${names
      .slice(1)
      .map(() => '---|')
      .join('')}`,
    row('non-streamed, whole answer', (latency) => latency.total.p50),
    row('streamed, first byte', (latency) => latency.firstByte.p50),
    '',
  ];
  for (const { name } of builds) {
    const samples = sessions.flatMap((measured) => measured.samples.get(name) ?? []);
    report.push(...phaseSections(name === 'ours' ? 'our gateway' : `the ${name}`, samples));
  }
  if (options.out) writeFileSync(options.out, report.join('\n'));
  else process.stdout.write(report.join('\n'));
} finally {
  for (const spinner of spinners) spinner.kill('SIGKILL');
  for (const started of running.reverse()) await stop(started.child);
  rmSync(dataDir, { recursive: true, force: true });
}
