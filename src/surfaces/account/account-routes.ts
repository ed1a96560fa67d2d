import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { principalOf, requireCredential } from '../../http/authentication.ts';
import { KeyIdParams, KeyPatchBody, LimitsPatch, NewKeyBody } from '../../http/schemas.ts';

/**
 * The signed-in account's own resources (used by the dashboard). A session or one of the account's keys may
 * read them; creating, limiting, revealing and revoking keys needs a session, so a key with spend caps can
 * neither lift its own caps nor mint an uncapped key.
 */
export const accountRoutes: FastifyPluginAsyncTypebox<{ services: GatewayServices }> = async (app, { services }) => {
  app.addHook('onRequest', requireCredential(services.authenticator, { acceptCookie: true }));
  const accountIdOf = (request: FastifyRequest) => principalOf(request).accountId;
  const sessionAccountOf = (request: FastifyRequest, action: string) => {
    const principal = principalOf(request);
    if (principal.kind !== 'session') throw new GatewayError('GW_SESSION_REQUIRED', `${action} needs a signed-in session, not an API key`);
    return principal.accountId;
  };

  app.get('/api/v1/account', async (request) => services.accounts.getAccount(accountIdOf(request)));

  app.get('/api/v1/api-keys', async (request) => services.apiKeys.list(accountIdOf(request)));

  app.post('/api/v1/api-keys', { schema: { body: NewKeyBody } }, async (request, reply) => {
    const created = await services.apiKeys.create(sessionAccountOf(request, 'creating a key'), request.body);
    reply.code(201);
    return created;
  });

  app.get('/api/v1/api-keys/:keyId/reveal', { schema: { params: KeyIdParams } }, async (request) => ({
    key: await services.apiKeys.reveal(sessionAccountOf(request, 'revealing a key'), request.params.keyId),
  }));

  app.patch('/api/v1/api-keys/:keyId/usage-limit', { schema: { params: KeyIdParams, body: LimitsPatch } }, async (request) =>
    services.apiKeys.setLimits(sessionAccountOf(request, 'changing spend limits'), request.params.keyId, request.body),
  );

  app.patch('/api/v1/api-keys/:keyId', { schema: { params: KeyIdParams, body: KeyPatchBody } }, async (request) =>
    services.apiKeys.update(sessionAccountOf(request, 'changing a key'), request.params.keyId, request.body),
  );

  app.delete('/api/v1/api-keys/:keyId', { schema: { params: KeyIdParams } }, async (request, reply) => {
    await services.apiKeys.revoke(sessionAccountOf(request, 'revoking a key'), request.params.keyId);
    return reply.code(204).send();
  });
};
