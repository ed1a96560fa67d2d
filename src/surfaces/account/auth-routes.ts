import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import type { SessionGrant } from '../../identity/account-service.ts';
import { principalOf, requireCredential, sessionCookieName } from '../../http/authentication.ts';
import { Email, Password } from '../../http/schemas.ts';

const Credentials = Type.Object({ email: Email, password: Password }, { additionalProperties: false });

export const authRoutes: FastifyPluginAsyncTypebox<{ services: GatewayServices; secureCookies: boolean }> = async (app, { services, secureCookies }) => {
  const issue = (reply: FastifyReply, grant: SessionGrant) => {
    reply.setCookie(sessionCookieName, grant.token, { httpOnly: true, sameSite: 'strict', secure: secureCookies, path: '/', expires: grant.expiresAt });
    return { token: grant.token, account: grant.account };
  };

  app.post('/api/v1/auth/signup', { schema: { body: Credentials } }, async (request, reply) => {
    const grant = await services.accounts.signup(request.body.email, request.body.password);
    reply.code(201);
    return issue(reply, grant);
  });

  app.post('/api/v1/auth/login', { schema: { body: Credentials } }, async (request, reply) => {
    return issue(reply, await services.accounts.login(request.body.email, request.body.password));
  });

  app.post('/api/v1/auth/logout', { onRequest: requireCredential(services.authenticator, { acceptCookie: true }) }, async (request, reply) => {
    const principal = principalOf(request);
    if (principal.kind !== 'session') throw new GatewayError('GW_SESSION_REQUIRED', 'logout ends a session: send the session token, not an API key');
    await services.accounts.logout(principal.sessionTokenHash);
    reply.clearCookie(sessionCookieName, { path: '/' });
    return reply.code(204).send();
  });
};
