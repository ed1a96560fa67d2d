import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import {
  AccountSchema,
  ApiKeySchema,
  BalanceSchema,
  CreatedKeySchema,
  RateLimitsSchema,
} from '../../http/answer-schemas.ts';
import {
  accountExample,
  apiKeyExample,
  balanceExample,
  createdKeyExample,
  creditGrantExample,
  keyPatchExample,
  limitsPatchExample,
  newAccountExample,
  newKeyExample,
  rateLimitsExample,
  rateLimitsPatchExample,
} from '../../http/examples.ts';
import { oversightRoutes } from '../../http/oversight-routes.ts';
import {
  CreditGrantBody,
  Identifier,
  KeyIdParams,
  KeyPatchBody,
  LimitsPatch,
  NewAccountBody,
  NewKeyBody,
  RateLimitsPatch,
  UsageQuery,
} from '../../http/schemas.ts';
import { adminAccountRoutes } from './admin-account-routes.ts';
import { AuditedGenerationRecordSchema, AuditedUsagePageSchema, ConfigDiffSchema } from './admin-answer-schemas.ts';
import { auditedRecordExample, auditedUsagePageExample, configDiffExample } from './admin-examples.ts';
import { operatorOnly } from './operator-only.ts';
import { refuseUnknownFields } from '../../http/validation.ts';
import { afterSettlementsRead } from '../../http/settled-reads.ts';

/** The services this surface uses, and only those. */
export type AdminServices = Pick<
  GatewayServices,
  'accounts' | 'adminToken' | 'apiKeys' | 'audit' | 'config' | 'configReloader' | 'ledger' | 'usage'
>;

const AccountParams = Type.Object({ accountId: Identifier });
const GenerationParams = Type.Object({ accountId: Identifier, generationId: Identifier });

/** The operator's API, open only when GATEWAY_ADMIN_TOKEN is set; otherwise every path answers 404. */
export const adminRoutes: FastifyPluginAsyncTypebox<{ services: AdminServices }> = async (app, { services }) => {
  refuseUnknownFields(app);
  app.addHook('onRequest', operatorOnly(services.adminToken));
  app.addHook('preHandler', afterSettlementsRead(services.ledger));
  await app.register(adminAccountRoutes, { services });
  await app.register(oversightRoutes, {
    services,
    auditLogDescription:
      'One page of the changes operators and accounts made (credit, keys, caps, rate limits, accounts, sign-in and sign-out, configuration reloads, catalog models and prices), newest first: who made each, to what, its state before and after, when, from which address and in which request. Filtered by who acted (`operator`, an account id or a key id), by the account concerned, by action, by request id and by time range.',
  });

  app.post(
    '/v1/accounts',
    {
      config: { audit: { action: 'account.create', subject: { type: 'account', from: 'answer' } } },
      schema: {
        summary: 'Create an account',
        description:
          'An account for the email, with a password to sign in with (none: it works only through keys the operator creates) and credits to start with.',
        body: NewAccountBody,
        response: { 201: AccountSchema },
        documentedExample: { request: newAccountExample, answer: accountExample },
      },
    },
    async (request, reply) => {
      const account = await services.accounts.createAccount({
        email: request.body.email,
        password: request.body.password,
        creditsUsd: request.body.credits,
      });
      reply.code(201);
      return account;
    },
  );

  app.get(
    '/v1/accounts/:accountId',
    {
      schema: {
        summary: 'An account',
        description: 'Its id, email and credit balance in USD.',
        params: AccountParams,
        response: { 200: AccountSchema },
        documentedExample: { answer: accountExample },
      },
    },
    async (request) => services.accounts.getAccount(request.params.accountId),
  );

  app.post(
    '/v1/accounts/:accountId/credits',
    {
      config: { audit: { action: 'account.credits', subject: { type: 'account', from: 'path' } } },
      schema: {
        summary: "Grant credits (negative: remove); answers the account's balance",
        description:
          'Adds the amount in USD to the balance (a negative amount removes it), with a note kept in the ledger.',
        documentedExample: { request: creditGrantExample, answer: balanceExample },
        params: AccountParams,
        body: CreditGrantBody,
        response: { 200: BalanceSchema },
      },
    },
    async (request) => ({
      creditBalance: await services.accounts.addCredits(
        request.params.accountId,
        request.body.amount,
        request.body.note ?? null,
      ),
    }),
  );

  app.post(
    '/v1/accounts/:accountId/api-keys',
    {
      config: { audit: { action: 'api-key.create', subject: { type: 'api-key', from: 'answer' } } },
      schema: {
        summary: 'Create a key for an account',
        description:
          'A new key of the account, with optional spend caps and rate limits; the key itself is in the answer.',
        documentedExample: { request: newKeyExample, answer: createdKeyExample },
        params: AccountParams,
        body: NewKeyBody,
        response: { 201: CreatedKeySchema },
      },
    },
    async (request, reply) => {
      const created = await services.apiKeys.create(request.params.accountId, request.body);
      reply.code(201);
      return created;
    },
  );

  app.patch(
    '/v1/api-keys/:keyId',
    {
      config: { audit: { action: 'api-key.update', subject: { type: 'api-key', from: 'path' } } },
      schema: {
        summary: 'Rename, disable or enable a key',
        description: 'A disabled key answers 401 until it is enabled again.',
        documentedExample: { request: keyPatchExample, answer: { ...apiKeyExample, ...keyPatchExample } },
        params: KeyIdParams,
        body: KeyPatchBody,
        response: { 200: ApiKeySchema },
      },
    },
    async (request) => services.apiKeys.update(null, request.params.keyId, request.body),
  );

  app.patch(
    '/v1/api-keys/:keyId/usage-limit',
    {
      config: { audit: { action: 'api-key.spend-caps', subject: { type: 'api-key', from: 'path' } } },
      schema: {
        summary: "Set or remove a key's spend caps",
        description:
          'Each window given (daily, weekly, monthly, total) gets the cap in USD, or loses it with `null`; the windows left out keep theirs. Every process refuses past a lowered cap from the next request, requests in flight included at their settlement. A cap set at or below 80% or 100% of what the key spent in its current window sends the levels reached as `api_key.cap_reached` webhook events, once per level and window, as spending would.',
        documentedExample: { request: limitsPatchExample, answer: apiKeyExample },
        params: KeyIdParams,
        body: LimitsPatch,
        response: { 200: ApiKeySchema },
      },
    },
    async (request) => services.apiKeys.setLimits(null, request.params.keyId, request.body),
  );

  app.patch(
    '/v1/api-keys/:keyId/rate-limits',
    {
      config: { audit: { action: 'api-key.rate-limits', subject: { type: 'api-key', from: 'path' } } },
      schema: {
        summary: "Set or remove a key's rate limits",
        documentedExample: { request: rateLimitsPatchExample, answer: apiKeyExample },
        description: "A key's own limit applies only below its account's: the smaller of the two is enforced.",
        params: KeyIdParams,
        body: RateLimitsPatch,
        response: { 200: ApiKeySchema },
      },
    },
    async (request) => services.apiKeys.setRateLimits(null, request.params.keyId, request.body),
  );

  app.get(
    '/v1/accounts/:accountId/rate-limits',
    {
      schema: {
        summary: "An account's rate limits (its keys' default and ceiling)",
        description: 'Each applies to every key of the account, whose own limit can only be lower.',
        documentedExample: { answer: rateLimitsExample },
        params: AccountParams,
        response: { 200: RateLimitsSchema },
      },
    },
    async (request) => services.apiKeys.accountRateLimits(request.params.accountId),
  );

  app.patch(
    '/v1/accounts/:accountId/rate-limits',
    {
      config: { audit: { action: 'account.rate-limits', subject: { type: 'account', from: 'path' } } },
      schema: {
        summary: "Set or remove an account's rate limits (its keys' default and ceiling)",
        documentedExample: { request: rateLimitsPatchExample, answer: rateLimitsExample },
        description:
          "The operator's limits: each applies to every key of the account, and a key's own limit can only be lower. The account's own sessions can read them, not change them.",
        params: AccountParams,
        body: RateLimitsPatch,
        response: { 200: RateLimitsSchema },
      },
    },
    async (request) => services.apiKeys.setAccountRateLimits(request.params.accountId, request.body),
  );

  // The usage records of an account as the operator sees them: each with its route, which accounts never see.
  app.get(
    '/v1/accounts/:accountId/generations',
    {
      schema: {
        summary: "An account's usage records with their routes",
        description:
          'One page of generation records, filtered by key, model or modality when asked, each with the provider row that served it and the rows tried before.',
        documentedExample: { answer: auditedUsagePageExample },
        params: AccountParams,
        querystring: UsageQuery(services.config.usage.maxPageSize),
        response: { 200: AuditedUsagePageSchema },
      },
    },
    async (request) => services.usage.auditedPage(request.params.accountId, request.query),
  );

  app.get(
    '/v1/accounts/:accountId/generations/:generationId',
    {
      schema: {
        summary: 'One usage record with its route',
        description:
          'A generation record of the account, with the provider row that served it and the rows tried before.',
        documentedExample: { answer: auditedRecordExample },
        params: GenerationParams,
        response: { 200: AuditedGenerationRecordSchema },
      },
    },
    async (request) => services.usage.auditedRecord(request.params.accountId, request.params.generationId),
  );

  app.post(
    '/v1/config/reload',
    {
      config: { audit: { action: 'config.reload', subject: { type: 'config', from: 'answer' } } },
      schema: {
        summary: 'Reload gateway.yaml in this process',
        description:
          'Reads gateway.yaml again (with the environment the process started with) and checks it as the start does. ' +
          'A file that passes replaces the catalog, prices, providers (base URLs, keys, headers, timeouts, job limits), ' +
          'voices and the upstream breaker and retry settings for the requests that start from now on; requests under ' +
          'way finish on the configuration they started with and are charged at its prices. Settings that apply only at ' +
          'start keep their running values and are named in `needsRestart`. A file that fails changes nothing: the answer ' +
          'is 400, with the problems found in `errors`: the checks run in stages, as at start, and a file whose shape fails (an ' +
          'unknown key, say) is refused for that alone; problems across keys (a row naming an undeclared provider) are ' +
          'named once the shape passes. Only this process reloads: call it on each process (or send each SIGHUP).',
        response: { 200: ConfigDiffSchema },
        documentedExample: { answer: configDiffExample },
      },
    },
    async () => {
      const outcome = await services.configReloader.reload('admin');
      if (!outcome.applied)
        throw new GatewayError('GW_VALIDATION', 'gateway.yaml failed validation: nothing changed', outcome.problems);
      return outcome.diff;
    },
  );
};
