import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer } from '../fakes/fake-server.ts';
import { keyHeaders } from '../support/http-helpers.ts';
import { sandboxConfigYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

interface ExportedSpans {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
    scopeSpans: Array<{
      spans: Array<{
        name: string;
        traceId: string;
        attributes: Array<{ key: string; value: { stringValue?: string } }>;
      }>;
    }>;
  }>;
}

describe('OpenTelemetry tracing, when an OTLP endpoint is configured', () => {
  let collector: FakeServer;
  let gateway: TestGateway;

  beforeAll(async () => {
    // An OTLP/HTTP collector: it takes the JSON export and answers as the protocol does.
    collector = await startFakeServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
    gateway = await startTestGateway({
      configText: sandboxConfigYaml(
        `telemetry: { tracing: { otlpEndpoint: "${collector.url}", serviceName: gateway-under-test } }`,
      ),
    });
  });
  afterAll(async () => {
    await collector?.close();
  });

  it('exports a span of the request and one of its upstream attempt', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const answer = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'traced' }] },
    });
    expect(answer.statusCode).toBe(200);
    // A query can carry a credential or a signed link's signature: spans keep the path alone.
    const queried = await gateway.request({
      method: 'GET',
      url: `/api/gamma/v1beta/models?key=${key}&signature=secret-signature-123`,
      headers: keyHeaders(key),
    });
    expect(queried.statusCode).toBe(200);
    // Closing the gateway flushes the spans it buffered.
    await gateway.close();
    const exports = collector.requests
      .filter((request) => request.method === 'POST' && request.path === '/v1/traces')
      .map((request) => request.body as ExportedSpans);
    expect(exports.length).toBeGreaterThan(0);
    const spans = exports.flatMap((body) =>
      body.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)),
    );
    const names = spans.map((span) => span.name);
    expect(names).toEqual(expect.arrayContaining(['request', 'handler - alphaRoutes', 'upstream sandbox']));
    const request = spans.find((span) => span.name === 'request');
    const upstream = spans.find((span) => span.name === 'upstream sandbox');
    // The upstream attempt belongs to the request's trace.
    expect(upstream?.traceId).toBe(request?.traceId);
    expect(upstream?.attributes).toEqual(
      expect.arrayContaining([
        { key: 'gateway.model', value: { stringValue: 'sandbox-echo' } },
        { key: 'gateway.upstream_model', value: { stringValue: 'echo' } },
      ]),
    );
    const exported = JSON.stringify(exports);
    expect(exported).toContain('/api/gamma/v1beta/models');
    expect(exported).not.toContain('secret-signature-123');
    expect(exported).not.toContain(key);
    const service = exports[0]!.resourceSpans[0]!.resource.attributes.find(
      (attribute) => attribute.key === 'service.name',
    );
    expect(service?.value.stringValue).toBe('gateway-under-test');
  });

  it('exports the spans of a gateway traced after another closed in the same process to its own collector', async () => {
    // Test files share their worker's process: the first gateway's provider must not keep the upstream spans.
    const second = await startFakeServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
    const later = await startTestGateway({
      configText: sandboxConfigYaml(`telemetry: { tracing: { otlpEndpoint: "${second.url}", serviceName: later } }`),
    });
    const { key } = await later.createFundedKey({ credits: 1 });
    const answer = await later.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'traced again' }] },
    });
    expect(answer.statusCode).toBe(200);
    await later.close();
    await second.close();
    const names = second.requests
      .filter((request) => request.method === 'POST' && request.path === '/v1/traces')
      .flatMap((request) =>
        (request.body as ExportedSpans).resourceSpans.flatMap((resource) =>
          resource.scopeSpans.flatMap((scope) => scope.spans.map((span) => span.name)),
        ),
      );
    expect(names).toEqual(expect.arrayContaining(['request', 'upstream sandbox']));
  });
});
