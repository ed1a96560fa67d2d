import { timingSafeEqual, createHash } from 'node:crypto';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { AccountSchema, ApiKeySchema, BalanceSchema, CreatedKeySchema } from '../../http/answer-schemas.ts';
import { noBody } from '../../http/openapi/route-documentation.ts';
import { CreditGrantBody, Identifier, KeyIdParams, KeyPatchBody, NewAccountBody, NewKeyBody } from '../../http/schemas.ts';
import { AuditedGenerationRecordSchema, AuditedUsagePageSchema } from './admin-answer-schemas.ts';

const AccountParams = Type.Object({ accountId: Identifier });
const GenerationParams = Type.Object({ accountId: Identifier, generationId: Identifier });
const GenerationsQuery = Type.Object(
  {
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
    limit: Type.Optional(Type.Integer({ minimum: 1 })),
    apiKeyId: Type.Optional(Identifier),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    modality: Type.Optional(Type.Union([Type.Literal('text'), Type.Literal('image'), Type.Literal('video'), Type.Literal('audio')])),
  },
  { additionalProperties: false },
);

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
    { schema: { summary: 'Create an account', body: NewAccountBody, response: { 201: AccountSchema } } },
    async (request, reply) => {
      const account = await services.accounts.createAccount({ email: request.body.email, password: request.body.password, creditsUsd: request.body.credits });
      reply.code(201);
      return account;
    },
  );

  app.get('/api/admin/v1/accounts/:accountId', { schema: { summary: 'An account', params: AccountParams, response: { 200: AccountSchema } } }, async (request) => services.accounts.getAccount(request.params.accountId));

  app.post(
    '/api/admin/v1/accounts/:accountId/credits',
    {
      schema: {
        summary: "Grant credits (negative: remove); answers the account's balance",
        params: AccountParams,
        body: CreditGrantBody,
        response: { 200: BalanceSchema },
      },
    },
    async (request) => ({ creditBalance: await services.accounts.addCredits(request.params.accountId, request.body.amount, request.body.note ?? null) }),
  );

  app.post('/api/admin/v1/accounts/:accountId/api-keys', { schema: { summary: 'Create a key for an account', params: AccountParams, body: NewKeyBody, response: { 201: CreatedKeySchema } } }, async (request, reply) => {
    const created = await services.apiKeys.create(request.params.accountId, request.body);
    reply.code(201);
    return created;
  });

  app.patch('/api/admin/v1/api-keys/:keyId', { schema: { summary: 'Rename, disable or enable a key', params: KeyIdParams, body: KeyPatchBody, response: { 200: ApiKeySchema } } }, async (request) =>
    services.apiKeys.update(null, request.params.keyId, request.body),
  );

  // The usage records of an account as the operator sees them: each with its route, which accounts never see.
  app.get(
    '/api/admin/v1/accounts/:accountId/generations',
    { schema: { summary: "An account's usage records with their routes", params: AccountParams, querystring: GenerationsQuery, response: { 200: AuditedUsagePageSchema } } },
    async (request) => {
      const { offset = 0, limit = 20, ...filter } = request.query;
      if (limit > services.config.usage.maxPageSize) throw new GatewayError('GW_VALIDATION', `limit must be at most ${services.config.usage.maxPageSize}`);
      return services.usage.auditedPage(request.params.accountId, { ...filter, offset, limit });
    },
  );

  app.get(
    '/api/admin/v1/accounts/:accountId/generations/:generationId',
    { schema: { summary: 'One usage record with its route', params: GenerationParams, response: { 200: AuditedGenerationRecordSchema } } },
    async (request) => services.usage.auditedRecord(request.params.accountId, request.params.generationId),
  );

  app.delete('/api/admin/v1/api-keys/:keyId', { schema: { summary: 'Revoke a key', params: KeyIdParams, response: { 204: noBody('Revoked: the key answers 401 from now on') } } }, async (request, reply) => {
    await services.apiKeys.revoke(null, request.params.keyId);
    return reply.code(204).send();
  });
};
