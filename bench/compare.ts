/**
 * This checkout's gateway against another checkout's compiled gateway (the commit before a change, say), on the
 * same fake upstream and the same harness, interleaved: each round loads one and then the other on every call
 * at 32 connections (`--connections`), the order alternating by round, so that the machine's drift over a run (a shared virtual
 * machine varies by 20% and more between runs) falls on both alike. The rounds are spread over sessions, each
 * with a fresh process of both builds, started in alternating order: one process of the same build can run
 * 5-10% slower than another for the whole of its life (where its memory happens to lie), which a single
 * pair of processes would report as a difference of the builds. Reports the median requests per second and
 * CPU per request of each, the spread over rounds, and the ratios. Both run on the embedded default, each in
 * a data directory of its own.
 *
 *   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci)
 *   npm run bench:compare -- --baseline /tmp/before
 *                            [--sessions 4] [--rounds 2] [--seconds 5] [--connections 32] [--log-level info] [--out FILE]
 *
 * The cost of a feature within one build: the same tree on both sides, with the feature on for ours only, e.g.
 * the per-key rate limiter on a key whose requests-per-minute limit is too high ever to refuse:
 *   npm run bench:compare -- --baseline . --ours-requests-per-minute 1000000000
 *                            [--ours DIR]   # a checkout other than this one as ours (a copy of dist/ kept apart)
 *                            [--ours-all-limits]   # the same figure as its tokens per minute and requests in flight too
 * With REDIS_URL in the environment, both sides' counters are in Redis (the baseline's key, without limits, never asks it).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fakeOpenAiKey } from '../test/fakes/openai-fake.ts';
import {
  checkAnswers,
  load,
  measuredLoad,
  median,
  oursTarget,
  type Call,
  type LoadSample,
  type Target,
} from './load.ts';
import { gatewayCommand, startGateway, startFakeUpstream, stop, type Started } from './processes.ts';

const here = import.meta.dirname;
const { values: options } = parseArgs({
  options: {
    baseline: { type: 'string' },
    sessions: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    'log-level': { type: 'string', default: 'warn' },
    out: { type: 'string' },
    ours: { type: 'string' },
    'ours-requests-per-minute': { type: 'string' },
    'ours-all-limits': { type: 'boolean', default: false },
  },
});
if (!options.baseline) throw new Error('--baseline DIR: a checkout of the code to compare against, built (npm ci)');
const baselineDist = path.resolve(options.baseline, 'dist');
const oursDist = options.ours ? path.resolve(options.ours, 'dist') : path.join(here, '../dist');
// The key ours calls with gets this requests-per-minute limit (the baseline's key has none).
const oursEnv: Record<string, string> = options['ours-requests-per-minute']
  ? {
      BENCH_KEY_REQUESTS_PER_MINUTE: options['ours-requests-per-minute'],
      ...(options['ours-all-limits'] ? { BENCH_KEY_ALL_LIMITS: '1' } : {}),
    }
  : {};
const sessions = Number(options.sessions);
const rounds = Number(options.rounds);
const seconds = Number(options.seconds);
const calls: Record<Call, string> = { chat: 'non-streamed', 'chat-stream': 'streamed', embeddings: 'embeddings' };
const connections = Number(options.connections);

const fake = await startFakeUpstream();
const running: Started[] = [];
const dataDirs: string[] = [];

/** A gateway of the given compiled tree, with one account whose key the load generator uses. */
async function gateway(
  name: string,
  distDir: string,
  extraEnv: Record<string, string> = {},
): Promise<{ started: Started; target: Target }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-compare-'));
  dataDirs.push(dataDir);
  const env = {
    BENCH_UPSTREAM_URL: fake.info.url!,
    BENCH_UPSTREAM_KEY: fakeOpenAiKey,
    BENCH_DATA_DIR: dataDir,
    BENCH_DIST_DIR: distDir,
    BENCH_DATABASE_URL: '',
    BENCH_LOG_LEVEL: options['log-level'],
    ...extraEnv,
  };
  const started = await startGateway(gatewayCommand(process.execPath, []), env, path.join(dataDir, 'gateway.log'));
  running.push(started);
  return { started, target: await oursTarget(started, name) };
}

const samples = new Map<string, LoadSample[]>();
const name = { ours: 'this checkout', baseline: 'baseline' };
try {
  for (let session = 0; session < sessions; session++) {
    const builds = [
      { name: name.ours, distDir: oursDist, env: oursEnv },
      { name: name.baseline, distDir: baselineDist, env: {} },
    ];
    const contenders = [];
    for (const build of session % 2 === 0 ? builds : builds.reverse())
      contenders.push(await gateway(build.name, build.distDir, build.env));
    for (const { target } of contenders) await checkAnswers(target);
    for (const { target } of contenders)
      for (const call of Object.keys(calls) as Call[]) await load(target, call, { connections: 8, duration: 2 });
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? contenders : [...contenders].reverse();
      for (const call of Object.keys(calls) as Call[]) {
        for (const { started, target } of order) {
          const sample = await measuredLoad(started, target, { call, connections, duration: seconds });
          const key = `${target.name}/${call}`;
          samples.set(key, [...(samples.get(key) ?? []), sample]);
        }
        const figures = [name.ours, name.baseline].map(
          (contender) =>
            `${contender} ${samples.get(`${contender}/${call}`)!.at(-1)!.requestsPerSecond.toFixed(0)} req/s`,
        );
        process.stderr.write(
          `session ${session + 1}/${sessions}, round ${round + 1}/${rounds}, ${calls[call]}: ${figures.join(', ')}\n`,
        );
      }
    }
    for (const { started } of contenders) await stop(started.child);
    running.length = 0;
    for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }

  const lines = [
    `Run on ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; baseline: ${baselineDist}.`,
    `${sessions} sessions of ${rounds} rounds, ${seconds} s per measurement, ${connections} connections, embedded default, logging at ${options['log-level']}; medians, with the range over rounds.`,
    '',
    '| scenario | this checkout req/s | baseline req/s | ratio | this checkout CPU ms/req | baseline CPU ms/req | CPU ratio | gateway process alone, CPU ms/req | ratio | errors |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [call, scenario] of Object.entries(calls)) {
    const mine = samples.get(`${name.ours}/${call}`)!;
    const theirs = samples.get(`${name.baseline}/${call}`)!;
    const figure = (list: LoadSample[], pick: (sample: LoadSample) => number, digits: number) => {
      const values = list.map(pick);
      return `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
    };
    const rate = (list: LoadSample[]) => median(list.map((sample) => sample.requestsPerSecond));
    const cpu = (list: LoadSample[]) => median(list.map((sample) => sample.cpuMsPerRequest));
    const own = (list: LoadSample[]) => median(list.map((sample) => sample.ownCpuMsPerRequest));
    const errors = [...mine, ...theirs].reduce((total, sample) => total + sample.errors, 0);
    lines.push(
      `| ${scenario} | ${figure(mine, (sample) => sample.requestsPerSecond, 0)} | ${figure(theirs, (sample) => sample.requestsPerSecond, 0)} | ${(rate(mine) / rate(theirs)).toFixed(3)} | ${figure(mine, (sample) => sample.cpuMsPerRequest, 3)} | ${figure(theirs, (sample) => sample.cpuMsPerRequest, 3)} | ${(cpu(mine) / cpu(theirs)).toFixed(3)} | ${own(mine).toFixed(3)} against ${own(theirs).toFixed(3)} | ${(own(mine) / own(theirs)).toFixed(3)} | ${errors} |`,
    );
  }
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  if (options.out) writeFileSync(options.out, text);
} finally {
  for (const started of [...running.reverse(), fake]) await stop(started.child);
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
}
