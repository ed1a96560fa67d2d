import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import { pricedModel } from '../../gateway/model-listing.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { principalOf, requireCredential } from '../../http/authentication.ts';
import { answersNotStored } from '../../http/session-cookies.ts';
import { ApiKeySchema, RateLimitsSchema } from '../../http/answer-schemas.ts';
import {
  accountExample,
  apiKeyExample,
  createdKeyExample,
  keyPatchExample,
  limitsPatchExample,
  newKeyExample,
  rateLimitsExample,
  rateLimitsPatchExample,
} from '../../http/examples.ts';
import { noBody } from '../../http/openapi/route-documentation.ts';
import { afterOwnSettlements } from '../../http/settled-reads.ts';
import { KeyIdParams, KeyPatchBody, LimitsPatch, NewKeyBody, RateLimitsPatch } from '../../http/schemas.ts';
import { listedKeysExample, pricedModelsExample } from './account-examples.ts';
import { AccountSchema, CreatedKeySchema, ListedKeySchema, PricedModelSchema } from './account-schemas.ts';
import { auditRoutes } from './audit-routes.ts';
import { mediaRoutes } from './media-routes.ts';
import { usageRoutes } from './usage-routes.ts';
import { webhookRoutes } from './webhook-routes.ts';
import { refuseUnknownFields } from '../../http/validation.ts';

/** The services this surface uses, and only those. */
export type AccountServices = Pick<
  GatewayServices,
  | 'accounts'
  | 'apiKeys'
  | 'audit'
  | 'authenticator'
  | 'catalog'
  | 'config'
  | 'ledger'
  | 'usage'
  | 'mediaLibrary'
  | 'webhooks'
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
  refuseUnknownFields(app);
  app.addHook('onRequest', answersNotStored);
  app.addHook('onRequest', requireCredential(services.authenticator, { acceptCookie: { secureCookies } }));
  app.addHook('preHandler', afterOwnSettlements(services.ledger));
  await app.register(usageRoutes, { services });
  await app.register(mediaRoutes, { services });
  await app.register(auditRoutes, { services });
  await app.register(webhookRoutes, { services });
  const accountIdOf = (request: FastifyRequest) => principalOf(request).accountId;
  const sessionAccountOf = (request: FastifyRequest, action: string) => {
    const principal = principalOf(request);
    if (principal.kind !== 'session')
      throw new GatewayError('GW_SESSION_REQUIRED', `${action} needs a signed-in session, not an API key`);
    return principal.accountId;
  };

  app.get(
    '/account',
    {
      schema: {
        summary: 'The account',
        description: 'The signed-in account (or the account of the key sent): its id, email and credit balance in USD.',
        response: { 200: AccountSchema },
        documentedExample: { answer: accountExample },
      },
    },
    async (request) => services.accounts.getAccount(accountIdOf(request)),
  );

  /** The catalog with prices, for the dashboard: what `/api/v1/ai/models` lists, priced, without provider names. */
  app.get(
    '/account/models',
    {
      schema: {
        summary: 'The catalog with prices',
        description:
          'Every model of the catalog with its modalities, capabilities and USD prices (under the names gateway.yaml gives them), without provider names.',
        response: { 200: Type.Array(PricedModelSchema) },
        documentedExample: { answer: pricedModelsExample },
      },
    },
    async () => services.catalog.list().map(pricedModel),
  );

  app.get(
    '/api-keys',
    {
      schema: {
        summary: "The account's keys",
        description:
          'Every key of the account, without the keys themselves: its caps and rate limits, and what it spent in each window.',
        response: { 200: Type.Array(ListedKeySchema) },
        documentedExample: { answer: listedKeysExample },
      },
    },
    async (request) => services.apiKeys.list(accountIdOf(request)),
  );

  app.post(
    '/api-keys',
    {
      config: { audit: { action: 'api-key.create', subject: { type: 'api-key', from: 'answer' } } },
      schema: {
        summary: 'Create a key',
        description:
          'A new key of the account (a session only), with optional spend caps and rate limits. The key itself is in the answer; the dashboard can reveal it again later.',
        body: NewKeyBody,
        response: { 201: CreatedKeySchema },
        documentedExample: { request: newKeyExample, answer: createdKeyExample },
      },
    },
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
        summary: 'Reveal a key',
        description: 'The key itself, for a signed-in session only (an API key cannot read another key).',
        params: KeyIdParams,
        response: { 200: Type.Object({ key: Type.String() }, { description: 'The key itself (a session only)' }) },
        documentedExample: { answer: { key: createdKeyExample.key } },
      },
    },
    async (request) => ({
      key: await services.apiKeys.reveal(sessionAccountOf(request, 'revealing a key'), request.params.keyId),
    }),
  );

  app.patch(
    '/api-keys/:keyId/usage-limit',
    {
      config: { audit: { action: 'api-key.spend-caps', subject: { type: 'api-key', from: 'path' } } },
      schema: {
        summary: "Set or remove a key's spend caps",
        description:
          'Each window given (daily, weekly, monthly, total) gets the cap in USD, or loses it with `null`; the windows left out keep theirs. A cap set at or below 80% or 100% of what the key spent in its current window sends the levels reached as `api_key.cap_reached` webhook events, once per level and window, as spending would. While work is under way, a cap lowered below what the key spent in its window plus what that work holds is refused with 409 (it would leave the work unpaid). A session only.',
        params: KeyIdParams,
        body: LimitsPatch,
        response: { 200: ApiKeySchema },
        documentedExample: { request: limitsPatchExample, answer: apiKeyExample },
      },
    },
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
      config: { audit: { action: 'api-key.rate-limits', subject: { type: 'api-key', from: 'path' } } },
      schema: {
        summary: "Set or remove a key's own rate limits",
        description:
          "A key's own limit can only tighten its account's (the operator's): the smaller of the two applies, and a removed one falls back to the account's.",
        params: KeyIdParams,
        body: RateLimitsPatch,
        response: { 200: ApiKeySchema },
        documentedExample: { request: rateLimitsPatchExample, answer: apiKeyExample },
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
        documentedExample: { answer: rateLimitsExample },
      },
    },
    async (request) => services.apiKeys.accountRateLimits(accountIdOf(request)),
  );

  app.patch(
    '/api-keys/:keyId',
    {
      config: { audit: { action: 'api-key.update', subject: { type: 'api-key', from: 'path' } } },
      schema: {
        summary: 'Rename, disable or enable a key',
        description: 'A disabled key answers 401 until it is enabled again. A session only.',
        params: KeyIdParams,
        body: KeyPatchBody,
        response: { 200: ApiKeySchema },
        documentedExample: { request: keyPatchExample, answer: { ...apiKeyExample, ...keyPatchExample } },
      },
    },
    async (request) =>
      services.apiKeys.update(sessionAccountOf(request, 'changing a key'), request.params.keyId, request.body),
  );

  app.delete(
    '/api-keys/:keyId',
    {
      config: { audit: { action: 'api-key.revoke', subject: { type: 'api-key', from: 'path' } } },
      schema: {
        summary: 'Revoke a key',
        description: 'For good: unlike a disabled key, a revoked one cannot be enabled again. A session only.',
        params: KeyIdParams,
        response: { 204: noBody('Revoked: the key answers 401 from now on') },
      },
    },
    async (request, reply) => {
      await services.apiKeys.revoke(sessionAccountOf(request, 'revoking a key'), request.params.keyId);
      return reply.code(204).send();
    },
  );
};
