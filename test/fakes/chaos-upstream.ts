import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { sleep, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';

/**
 * An upstream in front of the faithful fakes of each protocol that answers each request in the way the test
 * picks next: as the real protocol does (the request is passed to that protocol's fake and its answer relayed
 * byte for byte), or broken in one of the ways real upstreams break. Providers point at
 * `<url>/openai/v1`, `<url>/anthropic/v1` and `<url>/gemini/v1beta`.
 */
export const chaosBehaviours = [
  'valid',
  'garbage',
  'html',
  'truncated',
  'oversized-line',
  'endless',
  'hang',
  'error-status',
] as const;
export type ChaosBehaviour = (typeof chaosBehaviours)[number];

export interface ChaosUpstream extends FakeServer {
  /** How the next request is answered; `valid` until set again. */
  answerNextWith(behaviour: ChaosBehaviour): void;
  /** Answers still being written (a never-ending one stays open until the gateway hangs up). */
  openAnswers(): number;
}

/** Larger than the test gateway's `upstream.maxEventCharacters`. */
export const oversizedLineBytes = 200 * 1024;

const streaming = (incoming: RecordedRequest) =>
  incoming.path.includes(':streamGenerateContent') ||
  (typeof incoming.body === 'object' &&
    incoming.body !== null &&
    (incoming.body as { stream?: unknown }).stream === true);

async function relayFrom(
  target: FakeServer,
  path: string,
  { incoming, response, cutHalfway }: { incoming: RecordedRequest; response: ServerResponse; cutHalfway: boolean },
): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming.headers))
    if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
  const answer = await request(`${target.url}${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(incoming.body),
  });
  const bytes = Buffer.from(await answer.body.arrayBuffer());
  const contentType = answer.headers['content-type'];
  response.writeHead(answer.statusCode, typeof contentType === 'string' ? { 'content-type': contentType } : {});
  if (!cutHalfway) return void response.end(bytes);
  response.write(bytes.subarray(0, Math.floor(bytes.length / 2)));
  await sleep(20);
  response.socket?.destroy();
}

export async function startChaosUpstream(fakes: {
  openai: FakeServer;
  anthropic: FakeServer;
  gemini: FakeServer;
}): Promise<ChaosUpstream> {
  let next: ChaosBehaviour = 'valid';
  let open = 0;
  const server = await startFakeServer(async (incoming, response) => {
    const behaviour = next;
    next = 'valid';
    const [, family = '', ...rest] = incoming.path.split('/');
    const target = fakes[family as keyof typeof fakes];
    if (!target) return void response.writeHead(404).end();
    let closed = false;
    open++;
    response.on('close', () => {
      closed = true;
      open--;
    });
    const eventStream = streaming(incoming);
    switch (behaviour) {
      case 'valid':
      case 'truncated':
        return relayFrom(target, `/${rest.join('/')}`, { incoming, response, cutHalfway: behaviour === 'truncated' });
      case 'garbage':
        response.writeHead(200, { 'content-type': eventStream ? 'text/event-stream' : 'application/json' });
        return void response.end('{not json at all');
      case 'html':
        response.writeHead(200, { 'content-type': 'text/html' });
        return void response.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
      case 'oversized-line':
        response.writeHead(200, { 'content-type': eventStream ? 'text/event-stream' : 'application/json' });
        response.write(`data: {"pad":"${'x'.repeat(oversizedLineBytes)}`);
        while (!closed) await sleep(50);
        return;
      case 'endless':
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        while (!closed) {
          response.write(': still thinking\n\n');
          await sleep(100);
        }
        return;
      case 'hang':
        while (!closed) await sleep(50);
        return;
      case 'error-status': {
        const status = [400, 401, 404, 429, 500, 503, 504, 529][incoming.path.length % 8]!;
        response.writeHead(status, { 'content-type': 'text/plain' });
        return void response.end('upstream says no, not in JSON');
      }
    }
  });
  return { ...server, answerNextWith: (behaviour) => (next = behaviour), openAnswers: () => open };
}
