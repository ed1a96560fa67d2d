import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import { pricedModel } from '../../gateway/model-listing.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { principalOf, requireCredential } from '../../http/authentication.ts';
import { answersNotStored } from '../../http/session-cookies.ts';
import { ApiKeySchema, RateLimitsSchema } from '../../http/answer-schemas.ts';
import { noBody } from '../../http/openapi/route-documentation.ts';
import { afterOwnSettlements } from '../../http/settled-reads.ts';
import { KeyIdParams, KeyPatchBody, LimitsPatch, NewKeyBody, RateLimitsPatch } from '../../http/schemas.ts';
import { AccountSchema, CreatedKeySchema, ListedKeySchema, PricedModelSchema } from './account-schemas.ts';
import { mediaRoutes } from './media-routes.ts';
import { usageRoutes } from './usage-routes.ts';

/** The services this surface uses, and only those. */
export type AccountServices = Pick<
  GatewayServices,
  'accounts' | 'apiKeys' | 'authenticator' | 'catalog' | 'config' | 'ledger' | 'usage' | 'mediaLibrary'
>;

/**
 * The signed-in account's own resources (used by the dashboard). A session or one of the account's keys may
 * read them; creating, limiting, revealing and revoking keys needs a session, so a key with spend caps can
 * neither lift its own caps nor mint an uncapped key. The session cookie is accepted here, and with it the
 * CSRF rule (see http/session-cookies.ts); the usage and media routes registered here inherit both. Every read
 * here first waits for this process's settlements of the account (http/settled-reads.ts).
 */
export const accountRoutes: FastifyPluginAsyncTypebox<{ services: AccountServices; secureCookies: boolean }> = async (
  app,
  { services, secureCookies },
) => {
  app.addHook('onRequest', answersNotStored);
  app.addHook('onRequest', requireCredential(services.authenticator, { acceptCookie: { secureCookies } }));
  app.addHook('preHandler', afterOwnSettlements(services.ledger));
  await app.register(usageRoutes, { services });
  await app.register(mediaRoutes, { services });
  const accountIdOf = (request: FastifyRequest) => principalOf(request).accountId;
  const sessionAccountOf = (request: FastifyRequest, action: string) => {
    const principal = principalOf(request);
    if (principal.kind !== 'session')
      throw new GatewayError('GW_SESSION_REQUIRED', `${action} needs a signed-in session, not an API key`);
    return principal.accountId;
  };

  app.get('/account', { schema: { response: { 200: AccountSchema } } }, async (request) =>
    services.accounts.getAccount(accountIdOf(request)),
  );

  /** The catalog with prices, for the dashboard: what `/api/v1/ai/models` lists, priced, without provider names. */
  app.get('/account/models', { schema: { response: { 200: Type.Array(PricedModelSchema) } } }, async () =>
    services.catalog.list().map(pricedModel),
  );

  app.get('/api-keys', { schema: { response: { 200: Type.Array(ListedKeySchema) } } }, async (request) =>
    services.apiKeys.list(accountIdOf(request)),
  );

  app.post(
    '/api-keys',
    { schema: { body: NewKeyBody, response: { 201: CreatedKeySchema } } },
    async (request, reply) => {
      const created = await services.apiKeys.create(sessionAccountOf(request, 'creating a key'), request.body);
      reply.code(201);
      return created;
    },
  );

  app.get(
    '/api-keys/:keyId/reveal',
    {
      schema: {
        params: KeyIdParams,
        response: { 200: Type.Object({ key: Type.String() }, { description: 'The key itself (a session only)' }) },
      },
    },
    async (request) => ({
      key: await services.apiKeys.reveal(sessionAccountOf(request, 'revealing a key'), request.params.keyId),
    }),
  );

  app.patch(
    '/api-keys/:keyId/usage-limit',
    { schema: { params: KeyIdParams, body: LimitsPatch, response: { 200: ApiKeySchema } } },
    async (request) =>
      services.apiKeys.setLimits(
        sessionAccountOf(request, 'changing spend limits'),
        request.params.keyId,
        request.body,
      ),
  );

  app.patch(
    '/api-keys/:keyId/rate-limits',
    {
      schema: {
        summary: "Set or remove a key's own rate limits",
        description:
          "A key's own limit can only tighten its account's (the operator's): the smaller of the two applies, and a removed one falls back to the account's.",
        params: KeyIdParams,
        body: RateLimitsPatch,
        response: { 200: ApiKeySchema },
      },
    },
    async (request) =>
      services.apiKeys.setRateLimits(
        sessionAccountOf(request, 'changing rate limits'),
        request.params.keyId,
        request.body,
      ),
  );

  /**
   * The account's rate limits, read only: the operator sets them (admin API, CLI), each the default and the
   * ceiling of every key of the account, so a tenant cannot lift them.
   */
  app.get(
    '/account/rate-limits',
    {
      schema: {
        summary: "The account's rate limits (set by the operator)",
        description:
          'Each applies to every key of the account, whose own limit can only be lower. Only the operator changes them (admin API or CLI).',
        response: { 200: RateLimitsSchema },
      },
    },
    async (request) => services.apiKeys.accountRateLimits(accountIdOf(request)),
  );

  app.patch(
    '/api-keys/:keyId',
    { schema: { params: KeyIdParams, body: KeyPatchBody, response: { 200: ApiKeySchema } } },
    async (request) =>
      services.apiKeys.update(sessionAccountOf(request, 'changing a key'), request.params.keyId, request.body),
  );

  app.delete(
    '/api-keys/:keyId',
    { schema: { params: KeyIdParams, response: { 204: noBody('Revoked: the key answers 401 from now on') } } },
    async (request, reply) => {
      await services.apiKeys.revoke(sessionAccountOf(request, 'revoking a key'), request.params.keyId);
      return reply.code(204).send();
    },
  );
};
