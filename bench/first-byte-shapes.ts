/**
 * Time to a stream's first byte, direct and through the gateway (alpha chat completions, pass-through to an
 * OpenAI-protocol upstream, the embedded default), for two upstream shapes: every chunk written at once
 * (`sync`), or a role-only chunk first and each later chunk after a `setImmediate` (`immediate`). One
 * connection, sequential, 500 measured requests after 100 of warm-up, alternating direct and gateway.
 *
 *   npm run build && npm exec -- tsx bench/first-byte-shapes.ts immediate|sync [DIST_DIR]
 */
import { rmSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { ask, gatewayCommand, startGateway, stop } from './processes.ts';

const shape = process.argv[2] ?? 'immediate';
const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    if (req.url?.endsWith('/models')) {
      res.end('{"data":[]}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const parts = [
      chunk({ role: 'assistant', content: '' }),
      ...'Echo hello there friend'.split(' ').map((w) => chunk({ content: `${w} ` })),
      chunk({}, 'stop'),
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } })}\n\n`,
      'data: [DONE]\n\n',
    ];
    if (shape === 'sync') {
      for (const p of parts) res.write(p);
      res.end();
      return;
    }
    let i = 0;
    const next = () => {
      if (i < parts.length) {
        res.write(parts[i++]!);
        setImmediate(next);
      } else res.end();
    };
    next();
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const address = server.address();
if (address === null || typeof address === 'string') throw new Error('the upstream is not listening on a port');
const { port } = address;
const upstream = `http://127.0.0.1:${port}`;
const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-ttfb-'));
const started = await startGateway(
  gatewayCommand(process.execPath, []),
  {
    BENCH_UPSTREAM_URL: upstream,
    BENCH_UPSTREAM_KEY: 'sk-x',
    BENCH_DATA_DIR: dataDir,
    BENCH_DIST_DIR: process.argv[3] ?? path.join(import.meta.dirname, '../dist'),
    BENCH_DATABASE_URL: '',
    BENCH_LOG_LEVEL: 'warn',
  },
  path.join(dataDir, 'g.log'),
);
const { key } = await ask<{ key: string }>(started.child, { type: 'account', creditsUsd: 1000 });
async function once(url: string, headers: Record<string, string>, model: string) {
  const t = process.hrtime.bigint();
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      model,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  });
  let first: number | undefined;
  for await (const _ of res.body) first ??= Number(process.hrtime.bigint() - t) / 1e6;
  return first!;
}
const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const direct: number[] = [],
  gw: number[] = [];
for (let i = 0; i < 600; i++) {
  const d = await once(`${upstream}/v1/chat/completions`, { authorization: 'Bearer sk-x' }, 'gpt-4o-mini');
  const g = await once(`${started.info.url}/api/alpha/v1/chat/completions`, { 'x-api-key': key }, 'bench-chat');
  if (i >= 100) {
    direct.push(d);
    gw.push(g);
  }
}
console.log(
  shape,
  'first byte p50 direct',
  med(direct).toFixed(3),
  'gateway',
  med(gw).toFixed(3),
  'added',
  (med(gw) - med(direct)).toFixed(3),
);
await stop(started.child);
server.close();
rmSync(dataDir, { recursive: true, force: true });
