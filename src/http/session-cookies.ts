import { createHash } from 'node:crypto';
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { GatewayError } from '../domain/errors.ts';
import { sameSecret } from './secrets.ts';

/** The HttpOnly session cookie: the dashboard's credential on the account API. */
export const sessionCookieName = 'gw_session';
/** Readable by the dashboard's script, which echoes it in `csrfHeaderName`; a page of another site can neither read it nor send the header. */
export const csrfCookieName = 'gw_csrf';
export const csrfHeaderName = 'x-csrf-token';

const unsafeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Cleared with the very flags they were set with: a browser only replaces a cookie whose attributes match. */
function cookieFlags({ secure, httpOnly }: { secure: boolean; httpOnly: boolean }) {
  return { httpOnly, sameSite: 'strict', secure, path: '/' } as const;
}

/**
 * The CSRF token of a session: derived from the session token rather than drawn at random, so it needs no
 * storage and a cookie planted by a sibling domain (cookie tossing) cannot pair with the victim's session.
 * The session token is 256 random bits, so the token reveals nothing about it.
 */
export function csrfTokenFor(sessionCredential: string): string {
  return createHash('sha256').update('gw_csrf\n').update(sessionCredential).digest('base64url');
}

/** Whether the cookies carry the Secure flag (the gateway is served over HTTPS). */
export interface CookieSecurity {
  secure: boolean;
}

export function issueSessionCookies(
  reply: FastifyReply,
  grant: { token: string; expiresAt: Date },
  { secure }: CookieSecurity,
): void {
  reply.setCookie(sessionCookieName, grant.token, {
    ...cookieFlags({ secure, httpOnly: true }),
    expires: grant.expiresAt,
  });
  reply.setCookie(csrfCookieName, csrfTokenFor(grant.token), {
    ...cookieFlags({ secure, httpOnly: false }),
    expires: grant.expiresAt,
  });
}

export function clearSessionCookies(reply: FastifyReply, { secure }: CookieSecurity): void {
  reply.clearCookie(sessionCookieName, cookieFlags({ secure, httpOnly: true }));
  reply.clearCookie(csrfCookieName, cookieFlags({ secure, httpOnly: false }));
}

/**
 * The double-submit rule for a request the session cookie authenticated: a state-changing method must carry
 * the session's CSRF token in `x-csrf-token`, or it answers 403. A browser attaches the cookie to a forged
 * cross-site form as well; only a script of the gateway's own origin can read `gw_csrf` to echo it.
 * A session that predates the CSRF cookie gets it back on its next request.
 *
 * Why not @fastify/csrf-protection: this gives the protection it gives, with less to get wrong.
 * - Bound to the session: the token is a hash keyed by the 256-bit session token (as the plugin's secret kept
 *   in the session, or its HMAC-signed cookie), so a cookie planted from a sibling domain cannot match the
 *   victim's session, and the token can be neither guessed nor derived without it.
 * - Checked on every state-changing route: the check runs where the cookie becomes a credential
 *   (`requireCredential` with `acceptCookie`), so no route can take the cookie without it; with the plugin
 *   each route must opt in, and one that does not is open. Every other route refuses the cookie (401).
 * - SameSite=Strict on both cookies: browsers do not send them on cross-site requests at all; the token covers
 *   same-site cross-origin pages (sibling subdomains) and browsers that ignore SameSite.
 * - The token travels only in a header (a cross-origin page cannot set one without a CORS preflight, which
 *   the gateway never grants), is compared in constant time, and never appears in an answer body (the
 *   plugin's per-request salting guards against BREACH, which needs the token in a compressed body).
 * - Signup and login take JSON only, which a cross-site form cannot send (415): no login CSRF.
 * test/integration/csrf.test.ts checks every documented state-changing route.
 */
export function guardCookieRequest(
  request: FastifyRequest,
  reply: FastifyReply,
  { sessionCredential, secure }: CookieSecurity & { sessionCredential: string },
): void {
  const expected = csrfTokenFor(sessionCredential);
  if (unsafeMethods.has(request.method)) {
    const header = request.headers[csrfHeaderName];
    const given = Array.isArray(header) ? header[0] : header;
    if (given === undefined || !sameSecret(given.trim(), expected)) {
      throw new GatewayError(
        'GW_CSRF_REJECTED',
        `a ${request.method} authenticated by the ${sessionCookieName} cookie must echo the ${csrfCookieName} cookie in the ${csrfHeaderName} header`,
      );
    }
  }
  if (request.cookies[csrfCookieName] !== expected)
    reply.setCookie(csrfCookieName, expected, cookieFlags({ secure, httpOnly: false }));
}

/** For routes whose answers carry secrets (session tokens, raw keys) or an account's own data: no cache, shared or private, keeps them. */
export const answersNotStored: onRequestHookHandler = (_request, reply, done) => {
  reply.header('cache-control', 'no-store');
  done();
};
