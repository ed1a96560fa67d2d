import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyPluginCallback,
  type FastifyReply,
  type FastifyRequest,
  type onRouteHookHandler,
} from 'fastify';
import { UpstreamHttpError } from '../domain/upstream-failure.ts';
import type { Readiness } from '../gateway/readiness.ts';
import type { GatewayServices } from '../gateway/services.ts';
import { recordChanges } from './audit-hook.ts';
import { answerClientError } from './client-errors.ts';
import { meterRequests, registerMetricsRoute } from './metrics.ts';
import { isGatewayError } from '../domain/errors.ts';
import { builtDashboardDir, registerDashboard } from './dashboard.ts';
import {
  classifyError,
  logRequestFailure,
  requestPath,
  sendError,
  storageBusyRetryAfterSeconds,
} from './error-envelope.ts';
import { healthRoutes } from './health-routes.ts';
import { admitUnderRateLimits } from './rate-limit-hook.ts';
import { admitBeforeLargeBodies } from './body-admission.ts';
import { registerOpenApi } from './openapi/register-openapi.ts';
import { noBody } from './openapi/route-documentation.ts';
import { noCredential } from './openapi/security-schemes.ts';
import { useGuardedJsonParser } from './json-body.ts';
import { validatorCompiler } from './validation.ts';
import { requestLogger } from '../telemetry/logger.ts';

export interface AppOptions {
  services: GatewayServices;
  logger: FastifyBaseLogger | false;
  /** Session cookies get the Secure flag when the gateway is served over https. */
  secureCookies: boolean;
  /** The base of absolute links in answers (PUBLIC_BASE_URL or `http://HOST:PORT`; see `requestBaseUrl`). */
  publicBaseUrl: string;
  /** The built dashboard; defaults to web/dist of this package. */
  dashboardDir?: string;
  /** What `/readyz` reports. */
  readiness: Readiness;
  /** Sees every route as it is registered, before any is (the OpenAPI coverage test lists them with it). */
  onRoute?: onRouteHookHandler;
  /** OpenTelemetry's Fastify instrumentation, when tracing is configured: registered before every route. */
  tracingPlugin?: FastifyPluginCallback;
  /** Registers the surfaces (the composition root's choice), once the app's own hooks and routes are in place. */
  surfaces: (app: FastifyInstance) => Promise<void>;
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** A client's x-request-id is kept when it is sane, so logs line up across services; otherwise one is made. */
function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && requestIdPattern.test(given) ? given : randomUUID();
}

/** Node enforces the request timeouts only when it sweeps its connections, 30 s apart by default. */
function timeoutCheckInterval(limits: { headersTimeoutMs: number; requestTimeoutMs: number }): number {
  return Math.max(50, Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { services } = options;
  const bodyLimit = services.config.server.bodyLimitBytes;
  const limits = services.config.server;
  const app = Fastify({
    loggerInstance: options.logger === false ? undefined : options.logger,
    logger: options.logger === false ? false : undefined,
    genReqId: requestIdOf,
    childLoggerFactory: requestLogger,
    // request.ip is the client's, read from X-Forwarded-For only when the connection comes from a proxy listed here.
    ...(limits.trustProxy.length > 0 ? { trustProxy: limits.trustProxy } : {}),
    // The request line is written once, when the answer is complete (see meterRequests).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    return503OnClosing: true,
    // A client that trickles its request is cut off instead of holding a connection for ever.
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: timeoutCheckInterval(limits) },
    clientErrorHandler: (error, socket) => answerClientError(error, socket, limits),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 300 },
    // Errors the router raises before any route matches (a malformed %-escape, a path parameter past
    // maxParamLength) get the same envelope as every other error instead of Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      const classified = classifyError(error, bodyLimit);
      return sendError(request, reply, classified);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler());
  // Response schemas document the answers (OpenAPI) and never shape them: a compiled serializer would drop
  // whatever a schema does not list, pass-through answers above all. Answers are JSON.stringify'd, as without one.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  if (options.onRoute) app.addHook('onRoute', options.onRoute);
  // Before any route, so that every route is metered.
  meterRequests(app, services.telemetry);
  // Before any route (the OpenAPI document and /metrics included), so that every route is traced.
  if (options.tracingPlugin) await app.register(options.tracingPlugin);
  await registerOpenApi(app);
  // Bodies are JSON (spec, Endpoints): Fastify's built-in text/plain parser would hand a string to routes that
  // expect an object (a 400 naming the body); without it, any non-JSON body answers 415.
  app.removeContentTypeParser('text/plain');
  useGuardedJsonParser(app, limits.maxJsonDepth);
  app.decorate('publicBaseUrl', options.publicBaseUrl);
  app.decorateRequest('principal', null);
  app.decorateRequest('requestLine', null);
  app.decorateRequest('concurrencySlot', null);
  registerMetricsRoute(app, services.telemetry, {
    enabled: services.config.telemetry.metrics,
    token: services.config.telemetry.metricsToken,
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // preParsing runs after every surface's onRequest authentication and before the body is read.
  app.addHook('preParsing', admitUnderRateLimits(services.rateLimits));
  app.addHook(
    'preParsing',
    admitBeforeLargeBodies((caller) => services.ledger.admitsWork(caller)),
  );
  // Before any surface, so that every route declared `audit` leaves its entry.
  recordChanges(app, services.audit);

  app.setErrorHandler((error, request, reply) => {
    // After the gateway's checks passed, an upstream's own error is relayed as it came (spec, Errors 2).
    // Its 500 stays 500: the spec relays the provider's own status; only a broken or missing answer is a 502.
    if (error instanceof UpstreamHttpError) {
      // The wait the provider asked for goes with its answer, so a client that honours it waits as asked (a job
      // kept it with its failure): in whole seconds, rounded up, which every client reads, and to the millisecond
      // (`retry-after-ms`), which the OpenAI and Anthropic SDKs read first.
      if (error.retryAfterMs !== undefined)
        reply
          .header('retry-after', String(Math.ceil(error.retryAfterMs / 1000)))
          .header('retry-after-ms', String(error.retryAfterMs));
      return reply
        .code(error.status)
        .header('x-upstream-status', String(error.status))
        .header('x-content-type-options', 'nosniff')
        .type(error.contentType ?? 'application/json')
        .send(error.body);
    }
    // The client went away mid-answer: nothing to tell it, and not a fault of the gateway. (The request
    // stream is no witness: it is destroyed as soon as its body has been read.)
    if (reply.raw.destroyed) {
      request.log.debug({ err: error }, 'client closed the connection before the answer was complete');
      return;
    }
    // A route may take less than the server's body limit (signing in takes a few hundred bytes).
    const classified = classifyError(error, request.routeOptions.bodyLimit ?? bodyLimit);
    logRequestFailure(request.log, error, classified);
    if (isGatewayError(error)) {
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
      reply.headers(error.headers);
    } else if (classified.code === 'GW_STORAGE_BUSY') reply.header('retry-after', String(storageBusyRetryAfterSeconds));
    return sendError(request, reply, classified);
  });
  await app.register(cookie);
  const dashboardPage = await registerDashboard(app, options.dashboardDir ?? builtDashboardDir);
  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    dashboardPage(request, reply) ??
    sendError(request, reply, {
      status: 404,
      code: 'GW_ROUTE_NOT_FOUND',
      messages: [`route ${request.method} ${requestPath(request)} not found`],
    });
  // An unknown route answers as soon as its path is read, before its body: read and parsed (up to the body
  // limit), the body of any caller without a credential would cost the gateway what a model call's does.
  // A callback hook, not an async one: every request passes it, and only unknown routes should pay for it.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done();
    try {
      notFound(request, reply);
    } catch (error) {
      done(error instanceof Error ? error : new Error(String(error)));
    }
  });
  app.setNotFoundHandler(async (request, reply) => notFound(request, reply));
  for (const probe of ['/api/alpha', '/api/beta', '/api/gamma']) {
    app.head(
      probe,
      {
        schema: {
          summary: 'Connectivity probe',
          description:
            "Answers 200 without a body or a credential, for a client's check that the surface is reachable.",
          security: noCredential,
          response: { 200: noBody('Reachable') },
        },
        config: { swagger: { exposeHeadRoute: true } },
      },
      async (_request, reply) => reply.code(200).send(),
    );
  }
  await app.register(healthRoutes, { readiness: options.readiness });
  await options.surfaces(app);
  return app;
}
