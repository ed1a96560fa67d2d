/**
 * An upstream's error is relayed with its own status and body (spec, Errors 2), under a content type that can
 * neither carry what the upstream quoted back nor run as a page from the gateway's origin: an HTML error page
 * goes as plain text, never sniffed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer } from '../fakes/fake-server.ts';
import { keyHeaders } from '../support/http-helpers.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const page = '<html><body><script>document.title = "from the upstream"</script>Bad gateway</body></html>';

describe("an upstream's error page", () => {
  let fake: FakeServer;
  let gateway: TestGateway;

  beforeAll(async () => {
    fake = await startFakeServer((_request, response) => {
      response.writeHead(502, { 'content-type': 'text/html; charset=utf-8' });
      response.end(page);
    });
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        fakeProviderYaml('proxied', 'openai', fake),
        'models:',
        '  - { id: behind-a-proxy, pricing: { inputPerMTok: 1, outputPerMTok: 1 }, providers: [{ provider: proxied, model: m }] }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  for (const [surface, url] of [
    ['alpha (relayed)', '/api/alpha/v1/chat/completions'],
    ['native (translated)', '/api/v1/text/completions'],
  ])
    it(`is relayed to ${surface} as plain text with its status and body`, async () => {
      const { key } = await gateway.createFundedKey();
      const response = await gateway.request({
        method: 'POST',
        url,
        headers: keyHeaders(key),
        payload: { model: 'behind-a-proxy', messages: [{ role: 'user', content: 'hello' }] },
      });
      expect(response.statusCode).toBe(502);
      expect(response.headers['x-upstream-status']).toBe('502');
      expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.body).toBe(page);
    });
});
