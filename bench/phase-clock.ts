// Loaded into our gateway's process and the bare proxy's by `npm run bench:phases` (BENCH_PHASE_CLOCK=1): the
// moments one request passes on its way through the process, from the diagnostics channels of Node's http server,
// Fastify (ours only) and undici, with the process's CPU time at each. Requests must come one at a time: each
// moment is the current request's.
import diagnosticsChannel from 'node:diagnostics_channel';
import { ServerResponse } from 'node:http';

/** Microseconds since the request arrived (wall clock), and the process's CPU time then, for each moment seen. */
export interface PhaseSample {
  streamed: boolean;
  wall: Partial<Record<Moment, number>>;
  cpu: Partial<Record<Moment, number>>;
}

export type Moment =
  | 'arrived'
  | 'handler'
  | 'upstreamCreated'
  | 'upstreamSent'
  | 'upstreamSendReturned'
  | 'upstreamHeaders'
  | 'upstreamFirstChunk'
  | 'upstreamEnded'
  | 'clientFirstWrite'
  | 'clientEnded'
  | 'finished';

const clockUs = () => Number(process.hrtime.bigint()) / 1e3;
const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

let samples: PhaseSample[] = [];
let current: { sample: PhaseSample; startWall: number; startCpu: number } | undefined;

function mark(moment: Moment): void {
  if (!current || current.sample.wall[moment] !== undefined) return;
  current.sample.wall[moment] = clockUs() - current.startWall;
  current.sample.cpu[moment] = cpuUs() - current.startCpu;
}

/** Marks the first of the response's writes (headers go out with it) and its end. */
function watchWrites(response: ServerResponse): void {
  const { write, end } = response;
  response.write = function (this: ServerResponse, ...args: Parameters<typeof write>) {
    mark('clientFirstWrite');
    return write.apply(this, args);
  } as typeof write;
  response.end = function (this: ServerResponse, ...args: Parameters<typeof end>) {
    mark('clientFirstWrite');
    mark('clientEnded');
    return end.apply(this, args);
  } as typeof end;
}

diagnosticsChannel.subscribe('http.server.request.start', (message) => {
  if (typeof message !== 'object' || message === null || !('response' in message)) return;
  const { response } = message;
  if (!(response instanceof ServerResponse) || !response.req.url?.includes('/v1/')) return;
  const sample: PhaseSample = { streamed: false, wall: { arrived: 0 }, cpu: { arrived: 0 } };
  current = { sample, startWall: clockUs(), startCpu: cpuUs() };
  samples.push(sample);
  watchWrites(response);
});
diagnosticsChannel.subscribe('tracing:fastify.request.handler:start', () => mark('handler'));
diagnosticsChannel.subscribe('undici:request:create', (message) => {
  if (current?.sample.wall.upstreamCreated === undefined && typeof message === 'object' && message !== null) {
    const body = 'request' in message && typeof message.request === 'object' ? message.request : undefined;
    const text = body && 'body' in body ? String(body.body) : '';
    if (current) current.sample.streamed = text.includes('"stream":true');
  }
  mark('upstreamCreated');
});
diagnosticsChannel.subscribe('undici:client:sendHeaders', () => {
  mark('upstreamSent');
  // The send's synchronous rest: the socket write, which wakes the upstream.
  process.nextTick(() => mark('upstreamSendReturned'));
});
diagnosticsChannel.subscribe('undici:request:headers', () => mark('upstreamHeaders'));
diagnosticsChannel.subscribe('undici:request:bodyChunkReceived', () => mark('upstreamFirstChunk'));
diagnosticsChannel.subscribe('undici:request:trailers', () => mark('upstreamEnded'));
diagnosticsChannel.subscribe('http.server.response.finish', () => mark('finished'));

/** The samples since the last call. */
export function takePhaseSamples(): PhaseSample[] {
  const taken = samples;
  samples = [];
  return taken;
}

/** For a process with no IPC handler of its own (the bare proxy): answers the harness's `phases` requests. */
export function answerPhaseRequests(): void {
  process.on('message', (message: { id: number; type: string }) => {
    if (message.type === 'phases') process.send?.({ id: message.id, samples: takePhaseSamples() });
  });
}
