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

describe('the upstream HTTP client addresses a call', () => {
  it('at the base URL with the path after it, as written, for base URLs with and without a path of their own', async () => {
    const upstream = await startFakeServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
    const http = new UpstreamHttp();
    try {
      const origin = upstream.url.replace(/\/+$/, '');
      for (const baseUrl of [origin, `${origin}/v1`, `${origin}/openai/v1`, `${origin}/v1`])
        await http.postForJson(targetAt(baseUrl), { path: '/chat/completions', headers: {}, body: {} });
      await http.postForJson(targetAt(`${origin}/v1beta`), {
        path: '/models/m:generateContent?alt=sse',
        headers: {},
        body: {},
      });
      expect(upstream.requests.map((request) => request.path)).toEqual([
        '/chat/completions',
        '/v1/chat/completions',
        '/openai/v1/chat/completions',
        '/v1/chat/completions',
        '/v1beta/models/m:generateContent?alt=sse',
      ]);
    } finally {
      await http.close();
      await upstream.close();
    }
  });
});
