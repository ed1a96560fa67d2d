import { timingSafeEqual, createHash } from 'node:crypto';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { CreditGrantBody, Identifier, KeyIdParams, KeyPatchBody, NewAccountBody, NewKeyBody } from '../../http/schemas.ts';

const AccountParams = Type.Object({ accountId: Identifier });

function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The operator's API, open only when GATEWAY_ADMIN_TOKEN is set; otherwise every path answers 404. */
export const adminRoutes: FastifyPluginAsyncTypebox<{ services: GatewayServices }> = async (app, { services }) => {
  const adminToken = services.adminToken;
  app.addHook('onRequest', async (request) => {
    if (!adminToken) throw new GatewayError('GW_ROUTE_NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} not found`);
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!match?.[1] || !sameSecret(match[1], adminToken)) throw new GatewayError('GW_UNAUTHENTICATED', 'the admin API needs Authorization: Bearer <GATEWAY_ADMIN_TOKEN>');
  });

  app.post(
    '/api/admin/v1/accounts',
    { schema: { body: NewAccountBody } },
    async (request, reply) => {
      const account = await services.accounts.createAccount({ email: request.body.email, password: request.body.password, creditsUsd: request.body.credits });
      reply.code(201);
      return account;
    },
  );

  app.get('/api/admin/v1/accounts/:accountId', { schema: { params: AccountParams } }, async (request) => services.accounts.getAccount(request.params.accountId));

  app.post(
    '/api/admin/v1/accounts/:accountId/credits',
    {
      schema: {
        params: AccountParams,
        body: CreditGrantBody,
      },
    },
    async (request) => ({ creditBalance: await services.accounts.addCredits(request.params.accountId, request.body.amount, request.body.note ?? null) }),
  );

  app.post('/api/admin/v1/accounts/:accountId/api-keys', { schema: { params: AccountParams, body: NewKeyBody } }, async (request, reply) => {
    const created = await services.apiKeys.create(request.params.accountId, request.body);
    reply.code(201);
    return created;
  });

  app.patch('/api/admin/v1/api-keys/:keyId', { schema: { params: KeyIdParams, body: KeyPatchBody } }, async (request) =>
    services.apiKeys.update(null, request.params.keyId, request.body),
  );

  app.delete('/api/admin/v1/api-keys/:keyId', { schema: { params: KeyIdParams } }, async (request, reply) => {
    await services.apiKeys.revoke(null, request.params.keyId);
    return reply.code(204).send();
  });
};
