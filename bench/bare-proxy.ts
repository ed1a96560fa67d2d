// The benchmark's bare proxy: the least any Node.js gateway does for a call, in a process of its own, so its
// figures are the ceiling of a gateway on this runtime and this machine. Node's http server reads the body and
// parses it as JSON once (every gateway must read the request), then the same bytes go to the upstream over a
// keep-alive undici Pool, and the upstream's status, content type and body are piped back as they arrive
// (streams included). No authentication, billing, storage, logging or metrics.
// Prints `{"url": ...}` on stdout once it listens; BENCH_UPSTREAM_URL is the upstream's origin.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool } from 'undici';
import { answerError, readBody } from './plain-http.ts';

// BENCH_PHASE_CLOCK=1 (`npm run bench:phases`): the moments of each request, as in our gateway.
if (process.env.BENCH_PHASE_CLOCK === '1') (await import('./phase-clock.ts')).answerPhaseRequests();

const upstream = process.env.BENCH_UPSTREAM_URL;
if (!upstream) throw new Error('BENCH_UPSTREAM_URL is required');
// Sized and kept alive as the gateway's own upstream agent (src/providers/shared/upstream-http.ts).
const pool = new Pool(upstream, { connections: 4096, pipelining: 1, keepAliveTimeout: 30_000 });

async function relay(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = await readBody(request);
  try {
    JSON.parse(body.toString('utf8'));
  } catch {
    answerError(response, 400, 'the body is not JSON');
    return;
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (request.headers.authorization) headers.authorization = request.headers.authorization;
  await pool.stream(
    { path: request.url ?? '/', method: 'POST', headers, body },
    ({ statusCode, headers: upstreamHeaders }) => {
      const contentType = upstreamHeaders['content-type'];
      if (typeof contentType === 'string') response.setHeader('content-type', contentType);
      response.writeHead(statusCode);
      return response;
    },
  );
}

const server = createServer((request, response) => {
  relay(request, response).catch((error: unknown) =>
    answerError(response, 502, error instanceof Error ? error.message : 'upstream failed'),
  );
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the bare proxy has no TCP address');
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.close().then(() => process.exit(0));
});
