import type { ServerResponse } from 'node:http';

/**
 * Writers of a fake's answers, typed as the protocol's own shapes from src/protocols, so a fake cannot drift
 * from what the gateway parses. Callers pass a value built beforehand: fields beyond the protocol's shape are
 * the provider's own and are allowed, as they are on the wire.
 */
export function writeJson<T>(
  response: ServerResponse,
  { status, body, headers = {} }: { status: number; body: T; headers?: Record<string, string> },
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/** One server-sent event carrying `data`, with its `event:` name when the protocol names events. */
export function sseEvent<T>(data: T, name?: string): string {
  return `${name === undefined ? '' : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`;
}
