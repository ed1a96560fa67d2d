import { startFakeServer, type FakeServer } from './fake-server.ts';

/** An OpenAI chat completions upstream that knows several keys, and counts the requests each key made. */
export interface KeyedOpenAiFake extends FakeServer {
  /** Requests answered, by the key they carried. */
  usesOf(key: string): number;
  /** Requests refused because their key is not one of the fake's. */
  refused(): number;
}

/**
 * A chat completions upstream with several accepted keys (each request's `Authorization: Bearer <key>` is
 * checked: another key gets OpenAI's 401), answering every request whole after `delayMs`, with OpenAI's
 * rate-limit headers showing plenty of room.
 */
export async function startKeyedOpenAiFake(keys: readonly string[], delayMs = 5): Promise<KeyedOpenAiFake> {
  const uses = new Map<string, number>();
  let refused = 0;
  const server = await startFakeServer(async (request, response) => {
    const key = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    if (request.method !== 'POST' || request.path !== '/v1/chat/completions') {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'Invalid URL', type: 'invalid_request_error', code: null } }));
      return;
    }
    if (key === undefined || !keys.includes(key)) {
      refused += 1;
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
        }),
      );
      return;
    }
    uses.set(key, (uses.get(key) ?? 0) + 1);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    response.writeHead(200, {
      'content-type': 'application/json',
      'x-ratelimit-remaining-requests': '9999',
      'x-ratelimit-remaining-tokens': '999999',
      'x-ratelimit-reset-requests': '1ms',
    });
    response.end(
      JSON.stringify({
        id: 'chatcmpl-keyed',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      }),
    );
  });
  return { ...server, usesOf: (key) => uses.get(key) ?? 0, refused: () => refused };
}
