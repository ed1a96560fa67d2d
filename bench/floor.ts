/**
 * How far this checkout's gateway is from the billed floor (`billed-floor.ts`: the bare proxy plus only the work
 * the specification makes every billed request do), beside the bare proxy (the ceiling of any Node.js gateway)
 * and Portkey's gateway (the peer), all four on the same fake upstream and the same Node. Interleaved as in
 * `bench:compare`: each round loads every target on each call, the order turning by round, and each session
 * starts fresh processes. Reports median requests per second and CPU per request (each target's process tree:
 * the floor's and ours include their database server), and the ratios to the bare proxy and to Portkey. The
 * floor and ours run on the embedded default, or on PostgreSQL at BENCH_DATABASE_URL.
 *
 * Each session ends with the latency each proxy adds at one connection (sequential calls, `--latency-rounds`).
 *
 *   npm run bench:floor -- [--sessions 2] [--rounds 2] [--seconds 5] [--connections 32] [--latency-rounds 300]
 *                          [--out FILE]
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
  portkeyTarget,
  preciseLatency,
  upstreamTarget,
  type Call,
  type LoadSample,
  type PreciseLatency,
  type Target,
} from './load.ts';
import {
  bareProxyCommand,
  billedFloorCommand,
  gatewayCommand,
  startGateway,
  startPortkey,
  startFakeUpstream,
  startWithReadyLine,
  stop,
  type Started,
} from './processes.ts';

const { values: options } = parseArgs({
  options: {
    sessions: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '2' },
    'latency-rounds': { type: 'string', default: '300' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    out: { type: 'string' },
  },
});
const sessions = Number(options.sessions);
const rounds = Number(options.rounds);
const seconds = Number(options.seconds);
const connections = Number(options.connections);
const latencyRounds = Number(options['latency-rounds']);
const calls: Record<Call, string> = { chat: 'non-streamed', 'chat-stream': 'streamed', embeddings: 'embeddings' };
const contenderNames = ['bare', 'floor', 'ours', 'Portkey'] as const;
type ContenderName = (typeof contenderNames)[number];

const fake = await startFakeUpstream();
const running: Started[] = [];
const dataDirs: string[] = [];
const newDataDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-floor-'));
  dataDirs.push(dir);
  return dir;
};
const storageEnv = { BENCH_DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '' };

/** One process of each contender, each with the target the load generator calls. */
interface Contender {
  name: ContenderName;
  started: Started;
  target: Target;
}

async function startContender(name: ContenderName): Promise<Contender> {
  if (name === 'bare') {
    const started = await startWithReadyLine(bareProxyCommand(process.execPath), {
      BENCH_UPSTREAM_URL: fake.info.url!,
    });
    running.push(started);
    return { name, started, target: upstreamTarget(name, `${started.info.url}/v1`) };
  }
  if (name === 'Portkey') {
    const started = await startPortkey(process.execPath);
    running.push(started);
    return { name, started, target: portkeyTarget(started.url, fake.info.url!) };
  }
  if (name === 'floor') {
    const started = await startWithReadyLine(billedFloorCommand(process.execPath), {
      BENCH_UPSTREAM_URL: fake.info.url!,
      BENCH_DATA_DIR: newDataDir(),
      ...storageEnv,
    });
    running.push(started);
    const target = upstreamTarget(name, `${started.info.url}/api/alpha/v1`, { 'x-api-key': started.info.key! });
    return { name, started, target };
  }
  const dataDir = newDataDir();
  const env = {
    BENCH_UPSTREAM_URL: fake.info.url!,
    BENCH_UPSTREAM_KEY: fakeOpenAiKey,
    BENCH_DATA_DIR: dataDir,
    ...storageEnv,
  };
  const started = await startGateway(gatewayCommand(process.execPath, []), env, path.join(dataDir, 'gateway.log'));
  running.push(started);
  return { name, started, target: await oursTarget(started, name) };
}

const samples = new Map<string, LoadSample[]>();
/** Per session, the one-connection latencies of the upstream called directly and of the three proxies. */
const latencyNames = ['direct', 'bare', 'floor', 'ours'] as const;
const latencies: PreciseLatency[][] = [];
try {
  for (let session = 0; session < sessions; session++) {
    const contenders: Contender[] = [];
    const startOrder = session % 2 === 0 ? contenderNames : [...contenderNames].reverse();
    for (const name of startOrder) contenders.push(await startContender(name));
    for (const { target } of contenders) await checkAnswers(target);
    for (const { target } of contenders)
      for (const call of Object.keys(calls) as Call[]) await load(target, call, { connections: 8, duration: 2 });
    for (let round = 0; round < rounds; round++) {
      const turn = (session * rounds + round) % contenders.length;
      const order = [...contenders.slice(turn), ...contenders.slice(0, turn)];
      for (const call of Object.keys(calls) as Call[]) {
        for (const { name, started, target } of order) {
          const sample = await measuredLoad(started, target, { call, connections, duration: seconds });
          const key = `${name}/${call}`;
          samples.set(key, [...(samples.get(key) ?? []), sample]);
        }
        const figures = contenderNames.map(
          (name) => `${name} ${samples.get(`${name}/${call}`)!.at(-1)!.requestsPerSecond.toFixed(0)} req/s`,
        );
        process.stderr.write(
          `session ${session + 1}/${sessions}, round ${round + 1}/${rounds}, ${calls[call]}: ${figures.join(', ')}\n`,
        );
      }
    }
    // Portkey is left out: its streams wait 25 ms before their first byte (`npm run bench` shows it).
    const direct = upstreamTarget('direct', `${fake.info.url}/v1`);
    const timed = latencyNames.slice(1).map((name) => contenders.find((contender) => contender.name === name)!.target);
    latencies.push(await preciseLatency([direct, ...timed], latencyRounds, { rotate: true }));
    for (const { started } of contenders) await stop(started.child);
    running.length = 0;
    for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }

  const storage = storageEnv.BENCH_DATABASE_URL ? 'PostgreSQL (BENCH_DATABASE_URL)' : 'the embedded default';
  const lines = [
    `Run on ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; the floor and ours on ${storage}.`,
    `${sessions} sessions of ${rounds} rounds, ${seconds} s per measurement, ${connections} connections; medians, with the range over rounds.`,
    '',
    '| scenario | bare req/s | floor req/s | ours req/s | Portkey req/s | floor / bare | ours / bare | ours / floor | floor / Portkey | ours / Portkey | CPU ms/req: bare, floor, ours, Portkey | of which the process alone: floor, ours | errors (bare/floor/ours/Portkey) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [call, scenario] of Object.entries(calls)) {
    const of = (name: ContenderName) => samples.get(`${name}/${call}`)!;
    const rate = (name: ContenderName) => median(of(name).map((sample) => sample.requestsPerSecond));
    const rateFigure = (name: ContenderName) => {
      const values = of(name).map((sample) => sample.requestsPerSecond);
      return `${rate(name).toFixed(0)} (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})`;
    };
    const ratio = (name: ContenderName, other: ContenderName) => (rate(name) / rate(other)).toFixed(2);
    const cpu = (name: ContenderName) => median(of(name).map((sample) => sample.cpuMsPerRequest)).toFixed(3);
    const own = (name: ContenderName) => median(of(name).map((sample) => sample.ownCpuMsPerRequest)).toFixed(3);
    const errors = contenderNames.map((name) => of(name).reduce((total, sample) => total + sample.errors, 0)).join('/');
    lines.push(
      `| ${scenario} | ${rateFigure('bare')} | ${rateFigure('floor')} | ${rateFigure('ours')} | ${rateFigure('Portkey')} | ${ratio('floor', 'bare')} | ${ratio('ours', 'bare')} | ${ratio('ours', 'floor')} | ${ratio('floor', 'Portkey')} | ${ratio('ours', 'Portkey')} | ${contenderNames.map(cpu).join(', ')} | ${own('floor')}, ${own('ours')} | ${errors} |`,
    );
  }
  const added = (index: number, measure: keyof PreciseLatency) =>
    median(latencies.map((session) => session[index]![measure].p50 - session[0]![measure].p50)).toFixed(3);
  lines.push(
    '',
    `Added at one connection, p50 over ${latencyRounds} sequential rounds per session, median over sessions (ms):`,
    '',
    '| | bare | floor | ours |',
    '|---|---|---|---|',
    `| a whole non-streamed answer | ${[1, 2, 3].map((index) => added(index, 'total')).join(' | ')} |`,
    `| a stream's first byte | ${[1, 2, 3].map((index) => added(index, 'firstByte')).join(' | ')} |`,
  );
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(text);
  if (options.out) writeFileSync(options.out, text);
} finally {
  for (const started of [...running.reverse(), fake]) await stop(started.child);
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
}
