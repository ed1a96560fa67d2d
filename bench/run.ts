/**
 * Gateway overhead benchmark: the same fake OpenAI upstream called directly, through a bare proxy (Node's http
 * server, one JSON parse of the body, an undici Pool, the answer piped back: the ceiling of any Node.js
 * gateway, bench/bare-proxy.ts), through our gateway's full billing path, and through Portkey's open-source
 * gateway (`@portkey-ai/gateway`, a relay with no billing), on chat completions (non-streamed and streamed) and
 * embeddings, at 1 and 32 connections, in one run; then the added latency at one connection (sequential,
 * sub-millisecond), and the resource figures of the proxies (PSS idle and under load, start to listening).
 * Ours is compared with the bare proxy first, and with Portkey (on the same Node) as its peer.
 * Upstream, the proxies and the load generator are separate processes (bench/processes.ts starts them).
 * Prints the report (Markdown, in the format of bench/RESULTS.md), or writes it to --out; bench/RESULTS.md itself
 * is kept by hand, each run summarised there beside the ones before it.
 *
 *   npm run bench                          # 10 s per measurement
 *   npm run bench -- --seconds 20          # longer measurements
 *   npm run bench -- --rounds 1000         # more sequential rounds for the one-connection latencies (300)
 *   npm run bench -- --soak 600            # also: 10 minutes of load on our gateway, sampling its memory
 *   npm run bench -- --slow-streams        # also: 1000 streams at once on each gateway, one chunk a second
 *                    [--streams N] [--stream-seconds S]   # for 60 s; checks completion, peak PSS and billing
 *   npm run bench -- --profile             # also: a CPU profile of our gateway, summarised by package
 *   npm run bench -- --runtime-node PATH   # the gateways and the bare proxy on another node binary (Node 20 against 24, say)
 *   npm run bench -- --out FILE            # write the report to FILE instead of printing it
 *   npm run bench -- --log-level info      # our gateway logs at this level (a line per request and per generation at info), on its stdout, a file of the run
 *   BENCH_DATABASE_URL=postgres://...      # our gateway on PostgreSQL instead of the embedded default
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fakeOpenAiKey } from '../test/fakes/openai-fake.ts';
import {
  checkAnswers,
  load,
  messages,
  oursTarget,
  portkeyTarget,
  preciseLatency,
  slowStreams,
  upstreamTarget,
  type Call,
  type LoadResult,
  type PreciseLatency,
  type Target,
} from './load.ts';
import { chatPricing, nanosPerToken } from './pricing.ts';
import {
  ask,
  bareProxyCommand,
  gatewayCommand,
  nodeVersion,
  pssPeakSampler,
  startGateway,
  startPortkey,
  startFakeUpstream,
  startWithReadyLine,
  stop,
  treeCpuMs,
  treePss,
  type Started,
} from './processes.ts';
import {
  billingExact,
  profileSummary,
  renderReport,
  type Billing,
  type ScenarioRow,
  type SlowStreams,
} from './report.ts';

const { values: options } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '300' },
    soak: { type: 'string', default: '0' },
    'slow-streams': { type: 'boolean', default: false },
    streams: { type: 'string', default: '1000' },
    'stream-seconds': { type: 'string', default: '60' },
    profile: { type: 'boolean', default: false },
    'runtime-node': { type: 'string', default: process.execPath },
    out: { type: 'string' },
    'log-level': { type: 'string', default: 'warn' },
  },
});
const seconds = Number(options.seconds);
const rounds = Number(options.rounds);
const soakSeconds = Number(options.soak);
const streamCount = Number(options.streams);
const streamSeconds = Number(options['stream-seconds']);
const runtimeNode = options['runtime-node'];
const profileDir = options.profile ? mkdtempSync(path.join(tmpdir(), 'gw-bench-profile-')) : undefined;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pidOf = (started: Started) => started.child.pid!;

const fake = await startFakeUpstream();
const slowUpstreamModel = `fake-drip-1000-${streamSeconds}`;
const gatewayEnv = {
  BENCH_UPSTREAM_URL: fake.info.url!,
  BENCH_UPSTREAM_KEY: fakeOpenAiKey,
  BENCH_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'gw-bench-')),
  BENCH_SLOW_UPSTREAM_MODEL: slowUpstreamModel,
  BENCH_LOG_LEVEL: options['log-level'],
};
const gatewayLog = path.join(gatewayEnv.BENCH_DATA_DIR, 'gateway.log');
const running: Started[] = [fake];

try {
  // Our gateway twice: the first start creates its data directory (or schema), the second is timed on it and measured.
  const first = await startGateway(gatewayCommand(runtimeNode, []), gatewayEnv, gatewayLog);
  running.push(first);
  await stop(first.child);
  const ours = await startGateway(
    gatewayCommand(runtimeNode, profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
    gatewayEnv,
    gatewayLog,
  );
  running.push(ours);
  await sleep(2000);
  const oursIdleRss = treePss(pidOf(ours));
  const portkey = await startPortkey(runtimeNode);
  running.push(portkey);
  await sleep(2000);
  const portkeyIdleRss = treePss(pidOf(portkey));
  const bare = await startWithReadyLine(bareProxyCommand(runtimeNode), { BENCH_UPSTREAM_URL: fake.info.url! });
  running.push(bare);
  await sleep(2000);
  const bareIdleRss = treePss(pidOf(bare));

  const direct = upstreamTarget('direct', `${fake.info.url}/v1`);
  const viaBare = upstreamTarget('bare', `${bare.info.url}/v1`);
  const through = await oursTarget(ours);
  const viaPortkey = portkeyTarget(portkey.url, fake.info.url!);
  const calls = ['chat', 'chat-stream', 'embeddings'] as const;
  const scenarioNames: Record<Call, string> = {
    chat: 'non-streamed',
    'chat-stream': 'streamed',
    embeddings: 'embeddings',
  };

  const targets = [direct, viaBare, through, viaPortkey];
  for (const target of targets) await checkAnswers(target);
  // Warm every path (JIT, connection pools, database caches) before measuring.
  for (const target of targets) for (const call of calls) await load(target, call, { connections: 8, duration: 1 });

  /** One autocannon run through a gateway, with the CPU its process tree spent and, at 32 connections, its PSS peak. */
  const measured = async (
    target: Target,
    gateway: Started,
    { call, connections }: { call: Call; connections: number },
  ) => {
    const sampler = connections === 32 ? pssPeakSampler(pidOf(gateway)) : undefined;
    const before = treeCpuMs(pidOf(gateway));
    const result = await load(target, call, { connections, duration: seconds });
    const cpuMs = treeCpuMs(pidOf(gateway)) - before;
    return { result, cpuMsPerRequest: cpuMs / Math.max(1, result.requests), peakRss: sampler?.stop() ?? 0 };
  };
  const rows: ScenarioRow[] = [];
  let barePeakRss = 0;
  let oursPeakRss = 0;
  let portkeyPeakRss = 0;
  for (const call of calls) {
    for (const connections of [1, 32]) {
      const scenario = `${scenarioNames[call]}, ${connections} connection${connections > 1 ? 's' : ''}`;
      const directResult: LoadResult = await load(direct, call, { connections, duration: seconds });
      const bareRun = await measured(viaBare, bare, { call, connections });
      const oursRun = await measured(through, ours, { call, connections });
      const portkeyRun = await measured(viaPortkey, portkey, { call, connections });
      barePeakRss = Math.max(barePeakRss, bareRun.peakRss);
      oursPeakRss = Math.max(oursPeakRss, oursRun.peakRss);
      portkeyPeakRss = Math.max(portkeyPeakRss, portkeyRun.peakRss);
      rows.push({
        scenario,
        direct: directResult,
        bare: bareRun.result,
        ours: oursRun.result,
        portkey: portkeyRun.result,
        bareCpuMsPerRequest: bareRun.cpuMsPerRequest,
        oursCpuMsPerRequest: oursRun.cpuMsPerRequest,
        portkeyCpuMsPerRequest: portkeyRun.cpuMsPerRequest,
      });
      const rate = (result: LoadResult) =>
        `${result.requestsPerSecond.toFixed(0)} req/s${result.errors > 0 ? ` (${result.errors} errors)` : ''}`;
      const ofBare = oursRun.result.requestsPerSecond / Math.max(1, bareRun.result.requestsPerSecond);
      process.stderr.write(
        `${scenario}: ours/bare ${ofBare.toFixed(2)}; direct ${rate(directResult)}, bare ${rate(bareRun.result)}, ours ${rate(oursRun.result)}, Portkey ${rate(portkeyRun.result)}\n`,
      );
    }
  }
  const [preciseDirect, preciseBare, preciseOurs, precisePortkey] = await preciseLatency(targets, rounds);
  const added = (latency: PreciseLatency | undefined) => (latency!.total.p50 - preciseDirect!.total.p50).toFixed(3);
  process.stderr.write(
    `one connection, p50 added: ours ${added(preciseOurs)} ms, bare ${added(preciseBare)} ms, Portkey ${added(precisePortkey)} ms\n`,
  );

  const soakEvery = Math.min(30, Math.max(1, Math.floor(soakSeconds / 10)));
  const soak: Array<{ second: number; pssBytes: number; heapBytes: number }> = [];
  if (soakSeconds > 0) {
    const started = Date.now();
    const soaking = load(through, 'chat', { connections: 32, duration: soakSeconds });
    while (Date.now() - started < soakSeconds * 1000) {
      const stats = await ask<{ heapUsed: number }>(ours.child, { type: 'stats' });
      soak.push({
        second: Math.round((Date.now() - started) / 1000),
        pssBytes: treePss(pidOf(ours)),
        heapBytes: stats.heapUsed,
      });
      await sleep(soakEvery * 1000);
    }
    await soaking;
  }

  let slow: SlowStreams | undefined;
  if (options['slow-streams']) {
    const creditsUsd = 1000;
    const account = await ask<{ accountId: string; key: string }>(ours.child, { type: 'account', creditsUsd });
    const slowThrough: Target = { ...through, headers: { 'x-api-key': account.key } };
    process.stderr.write(`slow streams: ${streamCount} at once through ours, ${streamSeconds} s each\n`);
    const oursSlow = await slowStreams(slowThrough, 'bench-slow-chat', {
      streams: streamCount,
      chunks: streamSeconds,
      pid: pidOf(ours),
    });
    const billing = await settledBilling(ours, account.accountId, { creditsUsd, streams: streamCount });
    process.stderr.write(`slow streams: ${streamCount} at once through Portkey\n`);
    const portkeySlow = await slowStreams(viaPortkey, slowUpstreamModel, {
      streams: streamCount,
      chunks: streamSeconds,
      pid: pidOf(portkey),
    });
    slow = { streams: streamCount, seconds: streamSeconds, ours: oursSlow, billing, portkey: portkeySlow };
    process.stderr.write(
      `slow streams complete: ours ${oursSlow.complete}, Portkey ${portkeySlow.complete}; billing ${billingExact(billing) ? 'exact' : 'NOT exact'}\n`,
    );
  }

  await stop(ours.child);
  const storage = process.env.BENCH_DATABASE_URL
    ? 'PostgreSQL (BENCH_DATABASE_URL)'
    : `the embedded default (${ours.info.storage}, data directory on disk)`;
  const require = createRequire(import.meta.url);
  const portkeyVersion = (
    JSON.parse(readFileSync(require.resolve('@portkey-ai/gateway/package.json'), 'utf8')) as { version: string }
  ).version;
  const text = renderReport({
    date: new Date().toISOString().slice(0, 10),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}`,
    harnessNode: process.version,
    oursNode: ours.info.node!,
    portkeyNode: nodeVersion(runtimeNode),
    portkeyVersion,
    storage,
    logging:
      options['log-level'] === 'warn'
        ? 'warnings only (the default of the benchmark)'
        : `${options['log-level']}, pino JSON lines to a file in its data directory`,
    seconds,
    rounds,
    rows,
    precise: { direct: preciseDirect!, bare: preciseBare!, ours: preciseOurs!, portkey: precisePortkey! },
    resources: {
      ours: {
        firstStartMs: first.readyMs,
        restartMs: ours.readyMs,
        idlePssBytes: oursIdleRss,
        peakPssBytes: oursPeakRss,
      },
      bare: { startMs: bare.readyMs, idlePssBytes: bareIdleRss, peakPssBytes: barePeakRss },
      portkey: { startMs: portkey.readyMs, idlePssBytes: portkeyIdleRss, peakPssBytes: portkeyPeakRss },
    },
    soak: { seconds: soakSeconds, everySeconds: soakEvery, samples: soak },
    slowStreams: slow,
  });
  const report = text + (profileDir ? profileSummary(profileDir) : '');
  if (options.out) {
    writeFileSync(options.out, report);
    process.stderr.write(`wrote ${options.out}\n`);
  } else process.stdout.write(report);
} finally {
  for (const started of running.reverse()) await stop(started.child);
  rmSync(gatewayEnv.BENCH_DATA_DIR, { recursive: true, force: true });
}

/**
 * The usage records and balance of the slow-streams account, read from our gateway's storage once every
 * generation has settled (or after 30 s), against what the fake's usage makes them: per stream, the prompt's
 * words as input tokens and one output token per chunk, at the bench-chat price.
 */
async function settledBilling(
  gateway: Started,
  accountId: string,
  { creditsUsd, streams }: { creditsUsd: number; streams: number },
): Promise<Billing> {
  interface Stored {
    records: number;
    chargedNanos: string;
    statuses: Record<string, number>;
    balanceNanos: string;
    heldNanos: string;
    settling: number;
  }
  const deadline = Date.now() + 30_000;
  let stored = await ask<Stored>(gateway.child, { type: 'billing', accountId });
  while ((stored.records < streams || stored.settling > 0) && Date.now() < deadline) {
    await sleep(500);
    stored = await ask<Stored>(gateway.child, { type: 'billing', accountId });
  }
  const inputTokens = BigInt(
    messages.reduce((total, message) => total + message.content.split(/\s+/).filter(Boolean).length, 0),
  );
  const perStream =
    inputTokens * nanosPerToken(chatPricing.inputPerMTok) +
    BigInt(streamSeconds) * nanosPerToken(chatPricing.outputPerMTok);
  return {
    records: stored.records,
    expectedRecords: streams,
    statuses: stored.statuses,
    chargedNanos: BigInt(stored.chargedNanos),
    expectedNanos: perStream * BigInt(streams),
    balanceDecreaseNanos: BigInt(creditsUsd) * 1_000_000_000n - BigInt(stored.balanceNanos),
    heldNanos: BigInt(stored.heldNanos),
  };
}
