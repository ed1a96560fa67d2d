// The benchmark's report: Markdown tables in the format of bench/RESULTS.md.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { LoadResult, PreciseLatency, SlowStreamsResult } from './load.ts';

export interface ScenarioRow {
  scenario: string;
  direct: LoadResult;
  bare: LoadResult;
  ours: LoadResult;
  portkey: LoadResult;
  bareCpuMsPerRequest: number;
  oursCpuMsPerRequest: number;
  portkeyCpuMsPerRequest: number;
}

interface ProcessResources {
  startMs: number;
  idlePssBytes: number;
  peakPssBytes: number;
}

export interface Resources {
  ours: { firstStartMs: number; restartMs: number; idlePssBytes: number; peakPssBytes: number };
  bare: ProcessResources;
  portkey: ProcessResources;
}

export interface Billing {
  records: number;
  expectedRecords: number;
  statuses: Record<string, number>;
  chargedNanos: bigint;
  expectedNanos: bigint;
  balanceDecreaseNanos: bigint;
  heldNanos: bigint;
}

export interface SlowStreams {
  streams: number;
  seconds: number;
  ours: SlowStreamsResult;
  billing: Billing;
  portkey: SlowStreamsResult;
}

export interface Report {
  date: string;
  machine: string;
  harnessNode: string;
  oursNode: string;
  portkeyNode: string;
  portkeyVersion: string;
  storage: string;
  /** Our gateway's logging in this run (metrics are always on). */
  logging: string;
  seconds: number;
  rounds: number;
  rows: ScenarioRow[];
  precise: { direct: PreciseLatency; bare: PreciseLatency; ours: PreciseLatency; portkey: PreciseLatency };
  resources: Resources;
  soak: {
    seconds: number;
    everySeconds: number;
    samples: Array<{ second: number; pssBytes: number; heapBytes: number }>;
  };
  slowStreams: SlowStreams | undefined;
}

const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '—');
const mib = (bytes: number) => fixed(bytes / 2 ** 20, 1);
const ratio = (a: number, b: number) => (b > 0 ? fixed(a / b) : '—');

export function billingExact(billing: Billing): boolean {
  return (
    billing.records === billing.expectedRecords &&
    billing.chargedNanos === billing.expectedNanos &&
    billing.balanceDecreaseNanos === billing.expectedNanos &&
    billing.heldNanos === 0n &&
    (billing.statuses.succeeded ?? 0) === billing.expectedRecords
  );
}

export function renderReport(report: Report): string {
  const { rows, precise, resources } = report;
  const lines = [
    '# Benchmark results',
    '',
    `Run on ${report.date}, ${report.machine}; ${report.seconds} s per measurement. Load generator on Node ${report.harnessNode}, our gateway on Node ${report.oursNode}, the bare proxy and Portkey's gateway ${report.portkeyVersion} on Node ${report.portkeyNode}.`,
    '',
    '## Method',
    '',
    '`npm run bench` starts five processes on loopback: the fake OpenAI upstream of `test/fakes/` (one word per',
    "SSE chunk, usage on every answer), the bare proxy (`bench/bare-proxy.ts`: Node's http server, one JSON parse",
    'of the body, the same bytes sent on over a keep-alive undici Pool, the answer piped back; the least any',
    'Node.js gateway does, so the ceiling of one on this runtime and machine), our gateway (the full billing path:',
    'key authentication, capability gate, hold, relay with metering, settlement and usage record, one account with',
    "a daily cap on its key), Portkey's open-source gateway (`@portkey-ai/gateway`, its Node build, headless, no",
    'config: the OpenAI provider with the fake as custom host, so a relay with no authentication, billing or',
    'storage), and this load generator (autocannon). Each scenario calls the fake directly, then through the bare',
    "proxy's `POST /v1/chat/completions`, then through our `POST /api/alpha/v1/chat/completions` (or `/embeddings`:",
    "two short texts, float vectors), then through Portkey's `POST /v1/chat/completions` (or `/v1/embeddings`),",
    'with the same body, one after the other in the same run. Ours / bare is the share of the ceiling our',
    'gateway reaches; ours / Portkey compares it with a peer on the same Node. Before any measurement one call',
    "of each kind through each path is checked against the fake's own answer (the echo, the stream's chunks and",
    "`[DONE]`, the vectors); answers outside 2xx during a measurement are counted as errors. Portkey's stream",
    "relay waits 25 ms before it passes on a stream's first event (`readStream` in its",
    '`src/handlers/streamHandler.ts`), which its streamed figures at one connection and its first byte carry.',
    '',
    "CPU per request is the user+system time of the gateway's process and its descendants over its measurement",
    '(`/proc/<pid>/stat`, 10 ms ticks) divided by its requests. The one-connection latencies are sequential',
    `requests on one kept-alive connection per target (undici, sub-millisecond clock), ${report.rounds} rounds of one`,
    'non-streamed and one streamed call to each target in turn; "added" is the gateway\'s p50 minus the direct',
    "p50. Memory is the PSS of the gateway's process and its descendants, summed (`/proc/<pid>/smaps_rollup`, so pages shared between them count once): idle",
    'two seconds after it listens, and the highest of samples every 200 ms during its 32-connection',
    'measurements. Start to listening is from spawn to the listening socket: ours restarted on the data',
    "directory its first start created, the bare proxy's to the line it prints once it listens, Portkey's by",
    'polling its port. Latencies are in milliseconds.',
    '',
    `Storage of our gateway in this run: ${report.storage}. Its logging: ${report.logging}; its Prometheus metrics are recorded on every request.`,
    '',
    '## Throughput and latency',
    '',
    '| scenario | ours/bare | ours/Portkey | direct req/s | bare req/s | ours req/s | Portkey req/s | ours/direct | direct p50 | bare p50 | ours p50 | Portkey p50 | direct p99 | bare p99 | ours p99 | Portkey p99 | bare CPU ms/req | ours CPU ms/req | Portkey CPU ms/req | errors (direct/bare/ours/Portkey) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows
      .map((row) =>
        [
          row.scenario,
          ratio(row.ours.requestsPerSecond, row.bare.requestsPerSecond),
          ratio(row.ours.requestsPerSecond, row.portkey.requestsPerSecond),
          ...[row.direct, row.bare, row.ours, row.portkey].map((result) => fixed(result.requestsPerSecond, 0)),
          ratio(row.ours.requestsPerSecond, row.direct.requestsPerSecond),
          ...[row.direct, row.bare, row.ours, row.portkey].map((result) => fixed(result.p50)),
          ...[row.direct, row.bare, row.ours, row.portkey].map((result) => fixed(result.p99)),
          ...[row.bareCpuMsPerRequest, row.oursCpuMsPerRequest, row.portkeyCpuMsPerRequest].map((ms) => fixed(ms, 3)),
          [row.direct, row.bare, row.ours, row.portkey].map((result) => result.errors).join('/'),
        ].join(' | '),
      )
      .map((row) => `| ${row} |`),
    '',
    '## Added latency at one connection',
    '',
    '| sequential, one connection | ours added p50 | bare added p50 | Portkey added p50 | direct p50 | bare p50 | ours p50 | Portkey p50 | direct p99 | bare p99 | ours p99 | Portkey p99 |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...(['total', 'firstByte'] as const).map((measure) => {
      const paths = [precise.direct, precise.bare, precise.ours, precise.portkey].map((latency) => latency[measure]);
      const direct = precise.direct[measure];
      const [bare, ours, portkey] = [precise.bare[measure], precise.ours[measure], precise.portkey[measure]];
      const name = measure === 'total' ? 'non-streamed, whole answer' : 'streamed, first byte';
      return `| ${[
        name,
        ...[ours, bare, portkey].map((latency) => fixed(latency.p50 - direct.p50, 3)),
        ...paths.map((latency) => fixed(latency.p50, 3)),
        ...paths.map((latency) => fixed(latency.p99, 3)),
      ].join(' | ')} |`;
    }),
    '',
    '## Resources',
    '',
    '| | ours | bare proxy | Portkey |',
    '|---|---|---|---|',
    `| PSS idle, 2 s after listening (MiB) | ${mib(resources.ours.idlePssBytes)} | ${mib(resources.bare.idlePssBytes)} | ${mib(resources.portkey.idlePssBytes)} |`,
    `| PSS peak under 32 connections (MiB) | ${mib(resources.ours.peakPssBytes)} | ${mib(resources.bare.peakPssBytes)} | ${mib(resources.portkey.peakPssBytes)} |`,
    `| start to listening (ms) | ${fixed(resources.ours.restartMs, 0)} (existing data directory) | ${fixed(resources.bare.startMs, 0)} | ${fixed(resources.portkey.startMs, 0)} |`,
    `| first start, new data directory (ms) | ${fixed(resources.ours.firstStartMs, 0)} | — | — |`,
    '',
  ];
  if (report.soak.samples.length > 0) {
    lines.push(
      '## Memory under sustained load',
      '',
      `In the same run, after the scenarios: our gateway, non-streamed, 32 connections, ${report.soak.seconds} s; sampled every ${report.soak.everySeconds} s (PSS of its process tree, heap of the gateway process).`,
      '',
      '| second | PSS MiB | heap MiB |',
      '|---|---|---|',
      ...report.soak.samples.map(
        (sample) => `| ${sample.second} | ${mib(sample.pssBytes)} | ${mib(sample.heapBytes)} |`,
      ),
      '',
    );
  }
  if (report.slowStreams) lines.push(...slowStreamsSection(report.slowStreams));
  return `${lines.join('\n')}\n`;
}

function slowStreamsSection(slow: SlowStreams): string[] {
  const seconds = (ms: number, digits = 1) => fixed(ms / 1000, digits);
  const failures = (result: SlowStreamsResult) =>
    Object.entries(result.failures)
      .map(([outcome, times]) => `${times} × ${outcome}`)
      .join(', ') || 'none';
  const { ours, portkey, billing } = slow;
  return [
    '## Slow streams',
    '',
    `${slow.streams} streamed chat completions opened at once on each gateway (ours, then Portkey's), each a slow`,
    `generation of the fake (one content chunk a second, ${slow.seconds} chunks); a stream is complete with status 200,`,
    'every chunk, the finish chunk and `[DONE]`. A first byte later than a fraction of a second, or a duration',
    "well past the generation's length, is a stream that waited before its generation started upstream. PSS as above,",
    'sampled every 200 ms during the test; times in seconds.',
    '',
    '| | ours | Portkey |',
    '|---|---|---|',
    `| complete | ${ours.complete} of ${ours.streams} | ${portkey.complete} of ${portkey.streams} |`,
    `| not complete | ${failures(ours)} | ${failures(portkey)} |`,
    `| wall time | ${fixed(ours.wallSeconds, 1)} | ${fixed(portkey.wallSeconds, 1)} |`,
    `| first byte p50 / max | ${seconds(ours.firstByte.p50, 2)} / ${seconds(ours.firstByte.max, 2)} | ${seconds(portkey.firstByte.p50, 2)} / ${seconds(portkey.firstByte.max, 2)} |`,
    `| stream duration p50 / max | ${seconds(ours.duration.p50)} / ${seconds(ours.duration.max)} | ${seconds(portkey.duration.p50)} / ${seconds(portkey.duration.max)} |`,
    `| PSS peak (MiB) | ${mib(ours.peakPssBytes)} | ${mib(portkey.peakPssBytes)} |`,
    '',
    `Billing of our gateway for these streams (one new account), read from its storage once they settled: ${billingExact(billing) ? '**exact**' : '**NOT exact**'}.`,
    '',
    '| | expected | recorded |',
    '|---|---|---|',
    `| usage records | ${billing.expectedRecords} | ${billing.records} (${
      Object.entries(billing.statuses)
        .map(([status, count]) => `${count} ${status}`)
        .join(', ') || 'none'
    }) |`,
    `| charged, sum of usage records (nano-USD) | ${billing.expectedNanos} | ${billing.chargedNanos} |`,
    `| balance decrease (nano-USD) | ${billing.expectedNanos} | ${billing.balanceDecreaseNanos} |`,
    `| still held (nano-USD) | 0 | ${billing.heldNanos} |`,
    '',
  ];
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  samples: number[];
  timeDeltas: number[];
}

/** Where our gateway's CPU time went during the whole run: self time by package or source folder, idle excluded. */
export function profileSummary(directory: string): string {
  const byPlace = new Map<string, number>();
  let busy = 0;
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(path.join(directory, file), 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
    profile.samples.forEach((id, index) => {
      const frame = nodes.get(id);
      if (!frame || frame.functionName === '(idle)') return;
      const packageName = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(frame.url)?.[1];
      // The gateway runs compiled (dist/ mirrors src/), the harness's own TypeScript as is.
      const source = /\/(?:src|dist)\/([^/]+)\//.exec(frame.url)?.[1];
      const wasm = frame.url === '' && frame.functionName.startsWith('wasm-function');
      const place =
        packageName ??
        (source
          ? `src/${source}`
          : wasm
            ? 'WebAssembly (PGlite)'
            : frame.url.startsWith('node:')
              ? frame.url
              : frame.functionName || '(native code without a name)');
      const delta = profile.timeDeltas[index] ?? 0;
      byPlace.set(place, (byPlace.get(place) ?? 0) + delta);
      busy += delta;
    });
  }
  const rows = [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, 20);
  return [
    '## Where the gateway spends its CPU',
    '',
    'Self time of our gateway process over the whole run (`--profile`), idle excluded, by package or source folder.',
    '',
    '| where | share of busy time |',
    '|---|---|',
    ...rows.map(([place, time]) => `| ${place} | ${((time / busy) * 100).toFixed(1)}% |`),
    '',
  ].join('\n');
}
