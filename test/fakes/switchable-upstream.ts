import { request } from 'undici';
import type { OpenAiError } from '../../src/protocols/openai/chat-completions.ts';
import type { ServerResponse } from 'node:http';
import { sleep, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';
import { writeJson } from './wire.ts';

/** Forwards a request to `target` as it came (bar its hop-by-hop headers) and relays the answer as it comes. */
export async function relayTo(target: FakeServer, incoming: RecordedRequest, response: ServerResponse): Promise<void> {
  const headers = Object.fromEntries(
    Object.entries(incoming.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
  ) as Record<string, string>;
  const answer = await request(`${target.url}${incoming.path}`, {
    method: incoming.method as 'GET' | 'POST',
    headers,
    body: incoming.body === undefined ? undefined : JSON.stringify(incoming.body),
  });
  response.writeHead(answer.statusCode, {
    'content-type': String(answer.headers['content-type'] ?? 'application/json'),
  });
  for await (const chunk of answer.body) response.write(chunk);
  response.end();
}

/** An OpenAI-protocol provider that a test takes down and brings back: see `startSwitchableUpstream`. */
export interface SwitchableUpstream extends FakeServer {
  /** While true, every request answers 503 (the provider's overload error) after `failureDelayMs`. */
  down: boolean;
  failureDelayMs: number;
}

/**
 * A provider in front of a faithful fake (`target`): while up it forwards each request as it came and the
 * answer as it comes; while down it answers as an overloaded OpenAI-protocol server does, slowly, so a test
 * can tell whether the gateway waited on it.
 */
export async function startSwitchableUpstream(target: FakeServer): Promise<SwitchableUpstream> {
  const state = { down: false, failureDelayMs: 0 };
  const server = await startFakeServer(async (incoming, response) => {
    if (state.down) {
      await sleep(state.failureDelayMs);
      const body: OpenAiError = {
        error: { message: 'The server is overloaded or not ready yet.', type: 'server_error', param: null, code: null },
      };
      return writeJson(response, { status: 503, body });
    }
    await relayTo(target, incoming, response);
  });
  // Accessors, not copies: a test's `upstream.down = true` must reach the handler above.
  return Object.defineProperties(server, {
    down: { get: () => state.down, set: (value: boolean) => (state.down = value), enumerable: true },
    failureDelayMs: {
      get: () => state.failureDelayMs,
      set: (value: number) => (state.failureDelayMs = value),
      enumerable: true,
    },
  }) as SwitchableUpstream;
}
