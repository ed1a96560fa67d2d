import type {} from '@fastify/cookie';
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { GatewayError } from '../domain/errors.ts';
import type { Caller, HeldSlot, RequestContext } from '../domain/request-context.ts';
import type { Authenticator, CredentialSource, Principal } from '../identity/authenticator.ts';
import { logsRequests, RequestLine } from '../telemetry/request-line.ts';
import { bearerToken } from './secrets.ts';
import { guardCookieRequest, sessionCookieName } from './session-cookies.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /** The request's log line, made when a generation is to be carried on it. */
    requestLine: RequestLine | null;
    /** The request's place under its key's concurrency limit (rate-limit-hook.ts), when it has one. */
    concurrencySlot: HeldSlot | null;
  }
}

export interface AuthenticationOptions {
  /**
   * The dashboard's HttpOnly session cookie counts as a credential (account API only); `secureCookies` is the
   * flag the CSRF cookie is (re)issued with. State-changing requests it authenticates must echo the CSRF token.
   */
  acceptCookie?: { secureCookies: boolean };
  /**
   * The Gemini API's own credentials (gamma surface only): the `x-goog-api-key` header its SDK sends, and the
   * `?key=` query parameter (an API key, never a session), after the headers. Neither logs nor traces keep a query.
   */
  acceptGoogleKeys?: boolean;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  const single = Array.isArray(value) ? value[0] : value;
  return single === undefined || single.trim() === '' ? undefined : single.trim();
}

function queryValue(request: FastifyRequest, name: string): string | undefined {
  const start = request.url.indexOf('?');
  const value = start === -1 ? null : new URLSearchParams(request.url.slice(start + 1)).get(name);
  return value === null || value.trim() === '' ? undefined : value.trim();
}

/**
 * The credential a request carries: `x-api-key` (or `x-goog-api-key` where accepted) wins over
 * `Authorization: Bearer`, which wins over `?key=` (where accepted), which wins over the cookie.
 */
export function extractCredential(
  request: FastifyRequest,
  options: AuthenticationOptions,
): { credential: string; source: CredentialSource } | undefined {
  const apiKey =
    headerValue(request, 'x-api-key') ??
    (options.acceptGoogleKeys ? headerValue(request, 'x-goog-api-key') : undefined);
  if (apiKey) return { credential: apiKey, source: 'x-api-key' };
  const authorization = headerValue(request, 'authorization');
  if (authorization) {
    const token = bearerToken(authorization);
    if (token === undefined)
      throw new GatewayError(
        'GW_UNAUTHENTICATED',
        'the Authorization header must be "Bearer <API key or session token>"',
      );
    return { credential: token, source: 'bearer' };
  }
  const queryKey = options.acceptGoogleKeys ? queryValue(request, 'key') : undefined;
  if (queryKey) return { credential: queryKey, source: 'query' };
  const cookie = options.acceptCookie ? request.cookies?.[sessionCookieName] : undefined;
  if (cookie) return { credential: cookie, source: 'cookie' };
  return undefined;
}

/** An onRequest hook that sets `request.principal` or answers 401. */
export function requireCredential(
  authenticator: Authenticator,
  options: AuthenticationOptions = {},
): onRequestHookHandler {
  return async (request, reply) => {
    const found = extractCredential(request, options);
    if (!found)
      throw new GatewayError(
        'GW_UNAUTHENTICATED',
        'missing credential: send an API key in x-api-key or Authorization: Bearer',
      );
    request.principal = await authenticator.authenticate(found.credential, found.source);
    if (found.source === 'cookie' && options.acceptCookie)
      guardCookieRequest(request, reply, {
        sessionCredential: found.credential,
        secure: options.acceptCookie.secureCookies,
      });
  };
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route reached without authentication');
  return request.principal;
}

/** Who pays: the account, and the key when the request came with one. */
export function callerOf(request: FastifyRequest): Caller {
  const principal = principalOf(request);
  return { accountId: principal.accountId, apiKeyId: principal.kind === 'key' ? principal.apiKeyId : null };
}

/**
 * A generation request as the core takes it: who pays, the surface and endpoint it came through, the request's
 * id and, where request lines are logged, the request's line, which then carries the generation's record.
 */
export function requestContextOf(request: FastifyRequest, surface: string, endpoint: string): RequestContext {
  const principal = principalOf(request);
  const context: RequestContext = {
    accountId: principal.accountId,
    apiKeyId: principal.kind === 'key' ? principal.apiKeyId : null,
    surface,
    endpoint,
    requestId: request.id,
  };
  if (request.concurrencySlot) context.slot = request.concurrencySlot;
  if (logsRequests(request.log.level))
    context.log = request.requestLine ??= new RequestLine({ root: request.server.log, requestId: request.id });
  return context;
}
