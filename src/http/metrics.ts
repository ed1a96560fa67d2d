import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../domain/errors.ts';
import type { GatewayTelemetry } from '../telemetry/gateway-telemetry.ts';
import { bearerToken, sameSecret } from './secrets.ts';

/** Levels at which the per-request line is written: its fields are not even gathered otherwise. */
const logsInfo = new Set(['info', 'debug', 'trace']);

/**
 * Request metrics and one log line of every answer (surface, route template, method, status, time to the last byte), and
 * `GET /metrics` in Prometheus text format, behind a bearer token when one is configured. Unmatched paths
 * count under one route label, so a scan of random URLs cannot grow the metrics.
 */
export function registerMetrics(app: FastifyInstance, telemetry: GatewayTelemetry, options: { enabled: boolean; token: string | undefined }): void {
  // A callback hook, not an async one: no promise per answer for work that never waits.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const elapsedMs = reply.elapsedTime;
    telemetry.request(route, request.method, reply.statusCode, elapsedMs / 1000);
    // One line per request, in place of Fastify's two (the request's id is the logger's `reqId`).
    if (logsInfo.has(request.log.level)) {
      request.log.info(
        { method: request.method, path: request.url.split('?')[0], route, statusCode: reply.statusCode, responseTimeMs: Math.round(elapsedMs * 10) / 10, remoteAddress: request.ip },
        'request completed',
      );
    }
    done();
  });
  if (!options.enabled) return;
  const documentation = {
    summary: "This process's metrics, in Prometheus text format",
    // Anonymous, unless telemetry.metricsToken is set (OpenAPI's `{}` is the anonymous alternative).
    security: [{}, { metricsToken: [] }] as Array<Record<string, string[]>>,
    response: { 200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } } },
  };
  app.get('/metrics', { schema: documentation }, async (request, reply) => {
    const given = bearerToken(request.headers.authorization);
    if (options.token !== undefined && (given === undefined || !sameSecret(given, options.token))) {
      throw new GatewayError('GW_UNAUTHENTICATED', 'the metrics need Authorization: Bearer <telemetry.metricsToken>');
    }
    const text = await telemetry.metricsText();
    return reply.type(telemetry.registry.contentType).header('cache-control', 'no-store').send(text);
  });
}
