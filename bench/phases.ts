/**
 * Where the latency our gateway adds at one connection goes: sequential calls (one non-streamed and one streamed
 * chat completion a round) to the fake upstream directly, through the bare proxy and through our gateway, with
 * the bare proxy's process and our gateway's timing each request's phases from their diagnostics channels
 * (bench/phase-clock.ts): the wall time and the process's CPU time of each, at p50, side by side. Where the
 * process's CPU is below its wall time, it waited (for the upstream, mostly); the CPU it spends while the
 * upstream works is its own too (the socket write that wakes the upstream, reading the answer).
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
  /** Marked in our gateway only: Fastify's handler, or a split of a phase the bare proxy has whole. */
  oursOnly?: boolean;
}

const toUpstreamCall: Phase[] = [
  { from: 'arrived', to: 'upstreamCreated', what: 'request read and checked, up to the upstream call' },
  {
    from: 'arrived',
    to: 'handler',
    oursOnly: true,
    what: '· of which body read, hooks (key, rate limits), JSON checks, validation',
  },
  {
    from: 'handler',
    to: 'upstreamCreated',
    oursOnly: true,
    what: '· of which capability gate, admission (hold), translation',
  },
];
const upstreamExchange: Phase[] = [
  // undici writes a request on a kept-alive socket in the next check phase (it first reads what the socket holds).
  { from: 'upstreamCreated', to: 'upstreamSent', what: 'upstream request built, then written in the next turn' },
  {
    from: 'upstreamSent',
    to: 'upstreamSendReturned',
    what: "the send's rest: the socket write, which wakes the upstream",
  },
  {
    from: 'upstreamSendReturned',
    to: 'upstreamHeaders',
    what: "waiting for the upstream, then its answer's headers read",
  },
  { from: 'upstreamHeaders', to: 'upstreamFirstChunk', what: "the answer's first body bytes read" },
];
const phasesOf: Record<'whole' | 'stream', Phase[]> = {
  whole: [
    ...toUpstreamCall,
    ...upstreamExchange,
    {
      from: 'upstreamFirstChunk',
      to: 'clientFirstWrite',
      what: "the answer's rest read, the answer written (ours: checked and metered first)",
    },
    { from: 'upstreamFirstChunk', to: 'upstreamEnded', oursOnly: true, what: '· of which the rest of the body read' },
    {
      from: 'upstreamEnded',
      to: 'clientFirstWrite',
      oursOnly: true,
      what: '· of which answer checked, metered, written',
    },
  ],
  stream: [
    ...toUpstreamCall,
    ...upstreamExchange,
    {
      from: 'upstreamFirstChunk',
      to: 'clientFirstWrite',
      what: 'first event written (ours: checked and metered first)',
    },
  ],
};
const wholeWay: Phase = {
  from: 'arrived',
  to: 'clientFirstWrite',
  what: "**arrival to the client's first byte written**",
};

function p50(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const span = (sample: PhaseSample, clock: 'wall' | 'cpu', { from, to }: Phase) =>
  (sample[clock][to] ?? Number.NaN) - (sample[clock][from] ?? Number.NaN);

/** One row per phase, the wall time and the process's CPU time of each process at p50, side by side. */
function phaseTable(
  processes: Array<{ name: string; samples: PhaseSample[]; ours: boolean }>,
  phases: Phase[],
): string[] {
  const cells = (phase: Phase) =>
    processes.map(({ samples, ours }) => {
      if (phase.oursOnly && !ours) return '— | —';
      const [wall, cpu] = (['wall', 'cpu'] as const).map((clock) =>
        p50(samples.map((sample) => span(sample, clock, phase))),
      );
      return `${wall!.toFixed(0)} | ${cpu!.toFixed(0)}`;
    });
  return [
    `| phase, p50 µs | ${processes.map(({ name }) => `${name} wall | ${name} CPU`).join(' | ')} |`,
    `|---|${processes.map(() => '---|---|').join('')}`,
    ...[...phases, wholeWay].map((phase) => `| ${phase.what} | ${cells(phase).join(' | ')} |`),
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

/** The phase tables, non-streamed and streamed, of the bare proxy and each of our gateways. */
function phaseSections(processes: Array<{ name: string; samples: PhaseSample[]; ours: boolean }>): string[] {
  const kind = (streamed: boolean) =>
    processes.map((process) => ({
      ...process,
      samples: process.samples.filter((sample) => sample.streamed === streamed),
    }));
  const counts = (of: ReturnType<typeof kind>) => of.map(({ name, samples }) => `${name} ${samples.length}`).join(', ');
  const whole = kind(false);
  const streamed = kind(true);
  return [
    `Non-streamed, to the whole answer written (requests: ${counts(whole)}):`,
    '',
    ...phaseTable(whole, phasesOf.whole),
    '',
    `Streamed, to the first byte (requests: ${counts(streamed)}):`,
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
  fixed: { direct: Target; bare: Target & { started: Started } },
  order: Array<{ name: string; distDir: string | undefined }>,
): Promise<Session> {
  const gateways = [];
  for (const { name, distDir } of order) gateways.push(await startOurs(upstreamUrl, name, distDir));
  try {
    const targets = [fixed.direct, fixed.bare, ...gateways.map(({ target }) => target)];
    const clocked = [fixed.bare, ...gateways.map(({ started, target }) => ({ ...target, started }))];
    for (const target of targets) await checkAnswers(target);
    await preciseLatency(targets, Number(options.warmup), { rotate: true });
    for (const { started } of clocked) await ask(started.child, { type: 'phases' });
    const measured = await preciseLatency(targets, Number(options.rounds), { rotate: true });
    const samples = new Map<string, PhaseSample[]>();
    for (const { started, name } of clocked) {
      samples.set(name, (await ask<{ samples: PhaseSample[] }>(started.child, { type: 'phases' })).samples);
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
  const bare = await startWithReadyLine(bareProxyCommand(process.execPath), {
    BENCH_UPSTREAM_URL: fake.info.url!,
    BENCH_PHASE_CLOCK: '1',
  });
  running.push(bare);
  const fixed = {
    direct: upstreamTarget('direct', `${fake.info.url}/v1`),
    bare: { ...upstreamTarget('bare', `${bare.info.url}/v1`), started: bare },
  };
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
  const names = ['direct', 'bare', ...builds.map((build) => build.name)];
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
  report.push(
    ...phaseSections(
      ['bare', ...builds.map((build) => build.name)].map((name) => ({
        name,
        ours: name !== 'bare',
        samples: sessions.flatMap((measured) => measured.samples.get(name) ?? []),
      })),
    ),
  );
  if (options.out) writeFileSync(options.out, report.join('\n'));
  else process.stdout.write(report.join('\n'));
} finally {
  for (const spinner of spinners) spinner.kill('SIGKILL');
  for (const started of running.reverse()) await stop(started.child);
  rmSync(dataDir, { recursive: true, force: true });
}
