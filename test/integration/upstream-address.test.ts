import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/domain/secret.ts';
import type { ProviderTarget } from '../../src/providers/provider-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { startFakeServer } from '../fakes/fake-server.ts';

const targetAt = (baseUrl: string): ProviderTarget => ({
  baseUrl,
  apiKey: new Secret('sk-address-test'),
  timeoutMs: 2000,
  firstByteTimeoutMs: 2000,
  connectTimeoutMs: 2000,
  maxEventCharacters: 65536,
  headers: {},
});

/**
 * A call goes where `${baseUrl}${path}` names once parsed as a URL, whether the client parses the base URL
 * once and joins the path (the usual case) or parses the whole of an unusual one.
 */
describe('the upstream HTTP client addresses a call', () => {
  it('at the path the joined URL names: plain, percent-encoded, with dot segments, a query or a fragment', async () => {
    const upstream = await startFakeServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
    const http = new UpstreamHttp();
    try {
      const origin = upstream.url.replace(/\/+$/, '');
      const calls: Array<[base: string, path: string]> = [
        ['', '/chat/completions'],
        ['/v1', '/chat/completions'],
        ['/openai/v1', '/chat/completions'],
        ['/v1beta', '/models/m:generateContent?alt=sse'],
        ['/a b', '/chat/completions'],
        ['/café', '/chat/completions'],
        ['/x/../v1', '/chat/completions'],
        ['/v1', '/models/a model:generateContent'],
        ['/v1', '/x/%2e%2e/chat/completions'],
        ['/v1?api-version=1', '/chat/completions'],
        ['/v1#f', '/chat/completions'],
      ];
      for (const [base, path] of calls)
        await http.postForJson(targetAt(`${origin}${base}`), { path, headers: {}, body: {} });
      const expected = calls.map(([base, path]) => {
        const url = new URL(`${origin}${base}${path}`);
        return `${url.pathname}${url.search}`;
      });
      expect(upstream.requests.map((request) => request.path)).toEqual(expected);
      // The usual ones, spelled out.
      expect(expected.slice(0, 4)).toEqual([
        '/chat/completions',
        '/v1/chat/completions',
        '/openai/v1/chat/completions',
        '/v1beta/models/m:generateContent?alt=sse',
      ]);
    } finally {
      await http.close();
      await upstream.close();
    }
  });
});
