import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { UpstreamHttpError } from '../domain/upstream-failure.ts';
import type { GatewayServices } from '../gateway/services.ts';
import { accountRoutes } from '../surfaces/account/account-routes.ts';
import { authRoutes } from '../surfaces/account/auth-routes.ts';
import { adminRoutes } from '../surfaces/admin/admin-routes.ts';
import { alphaRoutes } from '../surfaces/alpha/alpha-routes.ts';
import { alphaVideoRoutes } from '../surfaces/alpha/video-routes.ts';
import { betaRoutes } from '../surfaces/beta/beta-routes.ts';
import { gammaRoutes } from '../surfaces/gamma/gamma-routes.ts';
import { compatRoutes } from '../surfaces/compat/compat-routes.ts';
import { nativeModelsRoutes } from '../surfaces/native/models-routes.ts';
import { nativeTextRoutes } from '../surfaces/native/text-completions-routes.ts';
import { nativeImageRoutes } from '../surfaces/native/image-routes.ts';
import { mediaFilesRoutes } from '../surfaces/native/media-files-routes.ts';
import { nativeAudioRoutes } from '../surfaces/native/audio-routes.ts';
import { nativeVideoRoutes } from '../surfaces/native/video-routes.ts';
import { answerClientError } from './client-errors.ts';
import { classifyError, requestPath, sendError } from './error-envelope.ts';
import { useGuardedJsonParser } from './json-body.ts';
import { validatorCompiler } from './validation.ts';

export interface AppOptions {
  services: GatewayServices;
  logger: FastifyBaseLogger | false;
  /** Session cookies get the Secure flag when the gateway is served over https. */
  secureCookies: boolean;
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
      return sendError(request, reply, classified.status, classified.code, classified.messages);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler());
  // Bodies are JSON (spec, Endpoints): Fastify's built-in text/plain parser would hand a string to routes that
  // expect an object (a 400 naming the body); without it, any non-JSON body answers 415.
  app.removeContentTypeParser('text/plain');
  useGuardedJsonParser(app, limits.maxJsonDepth);
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  app.setErrorHandler((error, request, reply) => {
    // After the gateway's checks passed, an upstream's own error is relayed as it came (spec, Errors 2).
    if (error instanceof UpstreamHttpError) {
      // Relayed with the provider's status, except 500, which the spec keeps for the gateway's own faults.
      const status = error.status === 500 ? 502 : error.status;
      return reply.code(status).header('x-upstream-status', String(error.status)).type(error.contentType ?? 'application/json').send(error.body);
    }
    // The client went away mid-answer: nothing to tell it, and not a fault of the gateway. (The request
    // stream is no witness: it is destroyed as soon as its body has been read.)
    if (reply.raw.destroyed) {
      request.log.debug({ err: error }, 'client closed the connection before the answer was complete');
      return;
    }
    const classified = classifyError(error, bodyLimit);
    if (classified.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendError(request, reply, classified.status, classified.code, classified.messages);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, 404, 'GW_ROUTE_NOT_FOUND', [`route ${request.method} ${requestPath(request)} not found`]),
  );

  await app.register(cookie);
  for (const probe of ['/api/alpha', '/api/beta', '/api/gamma']) {
    app.head(probe, async (_request, reply) => reply.code(200).send());
  }
  await app.register(authRoutes, { services, secureCookies: options.secureCookies });
  await app.register(accountRoutes, { services });
  await app.register(nativeModelsRoutes, { services });
  await app.register(nativeTextRoutes, { services });
  await app.register(nativeImageRoutes, { services });
  await app.register(mediaFilesRoutes, { services });
  await app.register(nativeAudioRoutes, { services });
  await app.register(nativeVideoRoutes, { services });
  await app.register(alphaRoutes, { services });
  await app.register(alphaVideoRoutes, { services });
  await app.register(betaRoutes, { services });
  await app.register(gammaRoutes, { services });
  await app.register(compatRoutes, { services });
  await app.register(adminRoutes, { services });
  return app;
}
