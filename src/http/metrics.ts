import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import { GatewayError } from '../domain/errors.ts';
import type { Secret } from '../domain/secret.ts';
import type { GatewayTelemetry, RouteMeter } from '../telemetry/gateway-telemetry.ts';
import { logsRequests, writeLine, type AnswerFields } from '../telemetry/request-line.ts';
import { bearerToken, sameSecret } from './secrets.ts';

/**
 * Request metrics and one log line of every answer (surface, route template, method, status, time to the last
 * byte), for every route registered after this call: each route gets a hook of its own that holds its route's
 * meter, so an answer reads no route options (Fastify builds them anew on each read) and hashes no label set.
 * Paths no route matched (the not-found handler, the dashboard's pages) count under one route label, so a scan
 * of random URLs cannot grow the metrics.
 */
export function meterRequests(app: FastifyInstance, telemetry: GatewayTelemetry): void {
  app.addHook('onRoute', (route) => {
    const meter = telemetry.meterOf(route.url);
    const hook: onResponseHookHandler = (request, reply, done) => {
      answered(meter, request, reply);
      done();
    };
    route.onResponse = route.onResponse === undefined ? hook : [...[route.onResponse].flat(), hook];
  });
  const unmatched = telemetry.meterOf('unmatched');
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) answered(unmatched, request, reply);
    done();
  });
}

function answered(meter: RouteMeter, request: FastifyRequest, reply: FastifyReply): void {
  const elapsedMs = reply.elapsedTime;
  meter.answered(request.method, reply.statusCode, elapsedMs / 1000);
  // One line per request, in place of Fastify's two (the request's id is the logger's `reqId`); a request that
  // made a generation has its line written with the usage record's fields, once the record is written.
  if (logsRequests(request.log.level)) {
    const query = request.url.indexOf('?');
    const answer: AnswerFields = {
      method: request.method,
      path: query < 0 ? request.url : request.url.slice(0, query),
      route: meter.route,
      statusCode: reply.statusCode,
      responseTimeMs: Math.round(elapsedMs * 10) / 10,
      remoteAddress: request.ip,
    };
    if (request.requestLine) request.requestLine.answered(answer);
    else writeLine({ root: request.server.log, requestId: request.id }, answer, 'request completed');
  }
}

/** `GET /metrics` in Prometheus text format, behind a bearer token when one is configured. */
export function registerMetricsRoute(
  app: FastifyInstance,
  telemetry: GatewayTelemetry,
  options: { enabled: boolean; token: Secret | undefined },
): void {
  if (!options.enabled) return;
  const documentation = {
    summary: "This process's metrics, in Prometheus text format",
    description:
      'Request counts and latencies by surface, generations, spend, upstream attempts, breakers and the job queue, for Prometheus to scrape.',
    documentedExample: {
      answer:
        '# HELP gateway_http_requests_total HTTP requests answered, by surface, route template, method and status\n' +
        '# TYPE gateway_http_requests_total counter\n' +
        'gateway_http_requests_total{surface="alpha",route="/api/alpha/v1/chat/completions",method="POST",status="200"} 42\n',
    },
    // Anonymous, unless telemetry.metricsToken is set (OpenAPI's `{}` is the anonymous alternative).
    security: [{}, { metricsToken: [] }] as Array<Record<string, string[]>>,
    response: {
      200: {
        description: 'Prometheus text exposition format',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
    },
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
