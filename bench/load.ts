// What the load generator sends and measures: autocannon runs, a check of each target's answers, the precise
// one-connection latencies, and the slow-streams test.
import { setMaxListeners } from 'node:events';
import autocannon from 'autocannon';
import { Agent, request, type Dispatcher } from 'undici';
import { fakeVector } from '../test/fakes/fake-server.ts';
import { fakeOpenAiKey } from '../test/fakes/openai-fake.ts';
import { ask, ownCpuMs, pssPeakSampler, treeCpuMs, type Started } from './processes.ts';

export interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  chatModel: string;
  embeddingModel: string;
}

export type Call = 'chat' | 'chat-stream' | 'embeddings';

/** The fake upstream at `url`, called directly or through a proxy that passes the fake's own key and model names on. */
export function upstreamTarget(name: string, url: string, headers: Record<string, string> = {}): Target {
  return {
    name,
    url,
    headers: { authorization: `Bearer ${fakeOpenAiKey}`, ...headers },
    chatModel: 'gpt-4o-mini',
    embeddingModel: 'text-embedding-3-small',
  };
}

/** Portkey's gateway at `url`, its OpenAI provider pointed at the fake: the headers its handler reads (src/handlers/handlerUtils.ts). */
export function portkeyTarget(url: string, fakeUrl: string): Target {
  return upstreamTarget('Portkey', `${url}/v1`, {
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': `${fakeUrl}/v1`,
  });
}

/** Our gateway (`gateway-process.ts`) through its alpha surface, with the key of a new account it funds. */
export async function oursTarget(gateway: Started, name = 'ours'): Promise<Target> {
  const { key } = await ask<{ key: string }>(gateway.child, { type: 'account', creditsUsd: 1_000_000 });
  return {
    name,
    url: `${gateway.info.url}/api/alpha/v1`,
    headers: { 'x-api-key': key },
    chatModel: 'bench-chat',
    embeddingModel: 'bench-embedding',
  };
}

const prompt = 'Summarise the benchmark method in one short sentence please.';
export const messages = [{ role: 'user', content: prompt }];
const embeddingInput = ['The gateway bills every call exactly.', 'A second text of the same batch.'];
/** The fake's answer to `messages`: "Echo: " and the prompt, one word per stream chunk. */
const expectedText = `Echo: ${prompt}`;

function requestFor(target: Target, call: Call): { path: string; body: string } {
  if (call === 'embeddings')
    return {
      path: '/embeddings',
      body: JSON.stringify({ model: target.embeddingModel, input: embeddingInput, encoding_format: 'float' }),
    };
  return {
    path: '/chat/completions',
    body: JSON.stringify({
      model: target.chatModel,
      messages,
      max_tokens: 64,
      ...(call === 'chat-stream' ? { stream: true } : {}),
    }),
  };
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  requests: number;
  /** Connection errors, time-outs and answers outside 2xx. */
  errors: number;
}

export async function load(
  target: Target,
  call: Call,
  { connections, duration }: { connections: number; duration: number },
): Promise<LoadResult> {
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

/** One load run through a gateway, with the CPU its process spent on it per request. */
export interface LoadSample {
  requestsPerSecond: number;
  /** The process tree's (a gateway's database server included). */
  cpuMsPerRequest: number;
  /** The process's own share of it (the rest is its database server's). */
  ownCpuMsPerRequest: number;
  errors: number;
}

/** Loads `target`, served by the process `started`, and reads that process's CPU time around the run. */
export async function measuredLoad(
  started: Started,
  target: Target,
  { call, ...options }: { call: Call; connections: number; duration: number },
): Promise<LoadSample> {
  const pid = started.child.pid!;
  const cpuBefore = treeCpuMs(pid);
  const ownBefore = ownCpuMs(pid);
  const result = await load(target, call, options);
  const requests = Math.max(1, result.requests);
  return {
    requestsPerSecond: result.requestsPerSecond,
    cpuMsPerRequest: (treeCpuMs(pid) - cpuBefore) / requests,
    ownCpuMsPerRequest: (ownCpuMs(pid) - ownBefore) / requests,
    errors: result.errors,
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The `data:` payloads of an SSE body, in order. */
function sseData(text: string): string[] {
  return text.split(/\r?\n\r?\n/).flatMap(
    (event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n') || [],
  );
}

interface Chunk {
  object?: string;
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
}

/**
 * One call of each kind, checked against what the fake answers: a chat completion with the echo, a stream of
 * chat.completion.chunk events spelling the echo and ending with `[DONE]`, the fake's two vectors. Throws
 * with the target's answer when one is not that, so no figure is taken of errors.
 */
export async function checkAnswers(target: Target): Promise<void> {
  for (const call of ['chat', 'chat-stream', 'embeddings'] as const) {
    const { path: endpoint, body } = requestFor(target, call);
    const response = await request(`${target.url}${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body,
    });
    const text = await response.body.text();
    const fail = (why: string) =>
      new Error(`${target.name} ${call}: ${why}; status ${response.statusCode}, body ${text.slice(0, 500)}`);
    if (response.statusCode !== 200) throw fail('not 200');
    if (call === 'chat') {
      const answer = JSON.parse(text) as { object?: string; choices?: Array<{ message?: { content?: string } }> };
      if (answer.object !== 'chat.completion' || answer.choices?.[0]?.message?.content !== expectedText)
        throw fail("not the fake's chat completion");
    } else if (call === 'chat-stream') {
      if (!String(response.headers['content-type']).startsWith('text/event-stream')) throw fail('not an event stream');
      const data = sseData(text);
      if (data.at(-1) !== '[DONE]') throw fail('no [DONE] at the end');
      const chunks = data.slice(0, -1).map((payload) => JSON.parse(payload) as Chunk);
      const content = chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '').join('');
      if (!chunks.every((chunk) => chunk.object === 'chat.completion.chunk') || content !== expectedText)
        throw fail("not the fake's stream");
    } else {
      const answer = JSON.parse(text) as { object?: string; data?: Array<{ embedding?: number[] }> };
      const expected = embeddingInput.map((input) => fakeVector(input, 8));
      if (
        answer.object !== 'list' ||
        JSON.stringify(answer.data?.map((entry) => entry.embedding)) !== JSON.stringify(expected)
      )
        throw fail("not the fake's vectors");
    }
  }
}

export interface Quantiles {
  p50: number;
  p99: number;
}

export interface PreciseLatency {
  /** Whole answer of a non-streamed chat completion, request sent to last byte read. */
  total: Quantiles;
  /** First body byte of a streamed chat completion. */
  firstByte: Quantiles;
}

function quantiles(samples: number[]): Quantiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (quantile: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

async function timeOne(
  target: Target,
  call: Call,
  dispatcher: Dispatcher,
): Promise<{ firstByte: number; total: number }> {
  const { path: endpoint, body } = requestFor(target, call);
  const started = process.hrtime.bigint();
  const response = await request(`${target.url}${endpoint}`, {
    dispatcher,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body,
  });
  let firstByte: number | undefined;
  for await (const _chunk of response.body) firstByte ??= Number(process.hrtime.bigint() - started) / 1e6;
  if (response.statusCode !== 200)
    throw new Error(`${target.name} ${call}: status ${response.statusCode} while timing`);
  return { firstByte: firstByte ?? Number.NaN, total: Number(process.hrtime.bigint() - started) / 1e6 };
}

/**
 * Sequential requests on one kept-alive connection per target, in milliseconds at sub-millisecond resolution:
 * rounds of one non-streamed and one streamed call to each target in turn, so a noisy moment hits all of them.
 * With `rotate`, each round starts one target further on, so each target follows each other equally often
 * (what a target leaves running after its answer, such as a settlement, then weighs on all alike).
 */
export async function preciseLatency(
  targets: Target[],
  rounds: number,
  { rotate = false }: { rotate?: boolean } = {},
): Promise<PreciseLatency[]> {
  const dispatchers = targets.map(() => new Agent({ connections: 1 }));
  const samples = targets.map(() => ({ total: [] as number[], firstByte: [] as number[] }));
  const warmRounds = Math.min(50, Math.ceil(rounds / 5));
  for (let round = 0; round < warmRounds + rounds; round++) {
    const first = rotate ? round % targets.length : 0;
    for (let step = 0; step < targets.length; step++) {
      const index = (first + step) % targets.length;
      const target = targets[index]!;
      const whole = await timeOne(target, 'chat', dispatchers[index]!);
      const stream = await timeOne(target, 'chat-stream', dispatchers[index]!);
      if (round < warmRounds) continue;
      samples[index]!.total.push(whole.total);
      samples[index]!.firstByte.push(stream.firstByte);
    }
  }
  await Promise.all(dispatchers.map((dispatcher) => dispatcher.close()));
  return samples.map((sample) => ({ total: quantiles(sample.total), firstByte: quantiles(sample.firstByte) }));
}

export interface SlowStreamsResult {
  streams: number;
  /** Status 200, every chunk, the finish chunk and `[DONE]`. */
  complete: number;
  /** Statuses or errors of the others, with their counts. */
  failures: Record<string, number>;
  wallSeconds: number;
  firstByte: Quantiles & { max: number };
  duration: Quantiles & { max: number };
  peakPssBytes: number;
}

/**
 * `streams` streamed chat completions at once, each a slow generation of `chunks` content chunks (the fake's
 * `fake-drip-<ms>-<n>`, one chunk a second), while the gateway's PSS (its process tree) is sampled.
 */
export async function slowStreams(
  target: Target,
  model: string,
  { streams, chunks, pid }: { streams: number; chunks: number; pid: number },
): Promise<SlowStreamsResult> {
  const dispatcher = new Agent({ connections: null, headersTimeout: 0, bodyTimeout: 0 });
  const deadline = AbortSignal.timeout(Math.max(120, chunks * 10) * 1000);
  setMaxListeners(streams + 10, deadline);
  const body = JSON.stringify({ model, messages, max_tokens: Math.max(64, chunks), stream: true });
  const sampler = pssPeakSampler(pid);
  const started = process.hrtime.bigint();
  const since = () => Number(process.hrtime.bigint() - started) / 1e6;
  const one = async (): Promise<{ outcome: string; firstByte: number; duration: number }> => {
    const sent = since();
    try {
      const response = await request(`${target.url}/chat/completions`, {
        dispatcher,
        signal: deadline,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...target.headers },
        body,
      });
      let text = '';
      let firstByte = Number.NaN;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        if (Number.isNaN(firstByte)) firstByte = since() - sent;
        text += chunk.toString();
      }
      const data = sseData(text);
      const parsed = data.slice(0, -1).map((payload) => JSON.parse(payload) as Chunk);
      const ticks = parsed.filter((chunk) => chunk.choices?.[0]?.delta?.content?.trim() === 'tick').length;
      const finished = parsed.some((chunk) => chunk.choices?.[0]?.finish_reason === 'stop');
      const whole = response.statusCode === 200 && data.at(-1) === '[DONE]' && ticks === chunks && finished;
      return {
        outcome: whole
          ? 'complete'
          : `status ${response.statusCode}${response.statusCode === 200 ? `, ${ticks} of ${chunks} chunks` : ''}`,
        firstByte,
        duration: since() - sent,
      };
    } catch (error) {
      return { outcome: (error as Error).name, firstByte: Number.NaN, duration: since() - sent };
    }
  };
  const results = await Promise.all(Array.from({ length: streams }, one));
  const wallSeconds = since() / 1000;
  const peakPssBytes = sampler.stop();
  await dispatcher.close();
  const failures: Record<string, number> = {};
  for (const { outcome } of results) if (outcome !== 'complete') failures[outcome] = (failures[outcome] ?? 0) + 1;
  const withMax = (values: number[]) => ({ ...quantiles(values), max: Math.max(...values) });
  return {
    streams,
    complete: results.filter((result) => result.outcome === 'complete').length,
    failures,
    wallSeconds,
    firstByte: withMax(results.map((result) => result.firstByte).filter((value) => !Number.isNaN(value))),
    duration: withMax(results.map((result) => result.duration)),
    peakPssBytes,
  };
}
