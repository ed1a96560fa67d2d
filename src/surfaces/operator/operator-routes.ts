import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { afterSettlementsRead } from '../../http/settled-reads.ts';
import { ApiKeySchema } from '../../http/answer-schemas.ts';
import { actAsOperator } from '../../http/audit-hook.ts';
import { principalOf, requireCredential } from '../../http/authentication.ts';
import { apiKeyExample } from '../../http/examples.ts';
import { oversightRoutes } from '../../http/oversight-routes.ts';
import { noBody } from '../../http/openapi/route-documentation.ts';
import { KeyIdParams, PasswordBody } from '../../http/schemas.ts';
import { answersNotStored } from '../../http/session-cookies.ts';
import {
  creditAdjustmentExample,
  operatorAccountDetailExample,
  operatorAccountPageExample,
  operatorKeysExample,
} from './operator-examples.ts';
import { operatorCatalogRoutes } from './operator-catalog-routes.ts';
import { operatorProviderRoutes } from './operator-provider-routes.ts';
import { AccountParams, AccountSearchQuery, CreditAdjustmentBody, OperatorKeyPatchBody } from './operator-requests.ts';
import { OperatorAccountDetailSchema, OperatorAccountPageSchema, OperatorKeySchema } from './operator-schemas.ts';
import { operatorUsageRoutes } from './operator-usage-routes.ts';
import { refuseUnknownFields } from '../../http/validation.ts';

/** The services this surface uses, and only those. */
export type OperatorServices = Pick<
  GatewayServices,
  | 'apiKeys'
  | 'audit'
  | 'authenticator'
  | 'config'
  | 'ledger'
  | 'operatorAccounts'
  | 'providerRows'
  | 'runtimeCatalog'
  | 'usageSearch'
>;

/**
 * The operator console's API (`/api/operator/v1`): a session of an operator account only, as the bearer
 * session token or the dashboard's cookie (with the CSRF rule of session-cookies.ts). No credential: 401; a
 * user's session: 403; an API key, even an operator's: 403 (a key in a script must not carry the console).
 * Every change here is the operator's in the audit log, naming the operator account.
 */
export const operatorRoutes: FastifyPluginAsyncTypebox<{ services: OperatorServices; secureCookies: boolean }> = async (
  app,
  { services, secureCookies },
) => {
  refuseUnknownFields(app);
  app.addHook('onRequest', answersNotStored);
  app.addHook('onRequest', requireCredential(services.authenticator, { acceptCookie: { secureCookies } }));
  app.addHook('onRequest', async (request) => {
    const principal = principalOf(request);
    if (principal.kind !== 'session')
      throw new GatewayError('GW_SESSION_REQUIRED', 'the operator API takes a signed-in session, not an API key');
    if (principal.role !== 'operator')
      throw new GatewayError('GW_FORBIDDEN', 'the operator API is for operator accounts only');
    actAsOperator(request);
  });
  app.addHook('preHandler', afterSettlementsRead(services.ledger));
  await app.register(operatorUsageRoutes, { services });
  await app.register(oversightRoutes, {
    services,
    auditLogDescription:
      'One page of the changes operators and accounts made, newest first: who made each (the operator account for changes made in this console), to what, its state before and after, when, from which address and in which request. Filtered by who acted (`operator`, an account id or a key id), by the account concerned, by action, by request id and by time range.',
  });
  await app.register(operatorProviderRoutes, { services });
  await app.register(operatorCatalogRoutes, { services });
  const operatorOf = (request: FastifyRequest) => principalOf(request).accountId;

  app.get(
    '/v1/accounts',
    {
      schema: {
        summary: 'Search accounts',
        description:
          'One page of accounts, oldest first, whose email contains `email` (any case), each with its balance, role, whether it is disabled and its key count.',
        querystring: AccountSearchQuery(services.config.usage.maxPageSize),
        response: { 200: OperatorAccountPageSchema },
        documentedExample: { answer: operatorAccountPageExample },
      },
    },
    async (request) => {
      const { email, offset, limit } = request.query;
      return services.operatorAccounts.search(email, { offset, limit });
    },
  );

  app.get(
    '/v1/accounts/:accountId',
    {
      schema: {
        summary: 'An account',
        description:
          'Its balance, what is held for requests under way, what it spent, its role, key count and whether it is disabled.',
        params: AccountParams,
        response: { 200: OperatorAccountDetailSchema },
        documentedExample: { answer: operatorAccountDetailExample },
      },
    },
    async (request) => services.operatorAccounts.view(request.params.accountId),
  );

  app.post(
    '/v1/accounts/:accountId/credits',
    {
      config: { audit: { action: 'account.credits', subject: { type: 'account', from: 'path' } } },
      schema: {
        summary: 'Grant or remove credit, with a reason',
        description:
          'Adds `amount` USD to the balance; a negative amount removes it. The reason is required and kept in the ledger and the audit log. A removal that would take the balance below zero is refused with 400 and changes nothing.',
        params: AccountParams,
        body: CreditAdjustmentBody,
        response: { 200: OperatorAccountDetailSchema },
        documentedExample: { request: creditAdjustmentExample, answer: operatorAccountDetailExample },
      },
    },
    async (request) =>
      services.operatorAccounts.adjustCredits(request.params.accountId, request.body.amount, request.body.reason),
  );

  app.post(
    '/v1/accounts/:accountId/disable',
    {
      config: { audit: { action: 'account.disable', subject: { type: 'account', from: 'path' } } },
      schema: {
        summary: 'Disable an account',
        description:
          "From the next request on, in every process, the account's keys answer 401 on every surface, its sessions too, and it cannot sign in. Nothing is deleted: enabling it gives everything back. An operator cannot disable their own account.",
        params: AccountParams,
        response: { 200: OperatorAccountDetailSchema },
        documentedExample: { answer: { ...operatorAccountDetailExample, disabled: true } },
      },
    },
    async (request) => services.operatorAccounts.setDisabled(request.params.accountId, true, operatorOf(request)),
  );

  app.post(
    '/v1/accounts/:accountId/enable',
    {
      config: { audit: { action: 'account.enable', subject: { type: 'account', from: 'path' } } },
      schema: {
        summary: 'Enable an account',
        description: 'Its keys and sessions work again from the next request on, in every process.',
        params: AccountParams,
        response: { 200: OperatorAccountDetailSchema },
        documentedExample: { answer: operatorAccountDetailExample },
      },
    },
    async (request) => services.operatorAccounts.setDisabled(request.params.accountId, false, operatorOf(request)),
  );

  app.put(
    '/v1/accounts/:accountId/password',
    {
      config: { audit: { action: 'account.password', subject: { type: 'account', from: 'path' } } },
      schema: {
        summary: "Set an account's password",
        description:
          "Sets the password the account signs in with (8 to 256 characters, as at signup), whether it had one or not, and ends the account's sessions in every process (the operator's own stays, when it is their own account). Its API keys keep working. The password is never answered, logged or kept in the audit log.",
        params: AccountParams,
        body: PasswordBody,
        response: { 204: noBody("The password is set; the account's sessions ended") },
        documentedExample: { request: { password: 'a passphrase set by the operator' } },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      if (principal.kind !== 'session') throw new Error('the operator API reached without a session');
      await services.operatorAccounts.setPassword(request.params.accountId, {
        password: request.body.password,
        operatorSessionTokenHash: principal.sessionTokenHash,
      });
      return reply.code(204).send();
    },
  );

  app.get(
    '/v1/accounts/:accountId/api-keys',
    {
      schema: {
        summary: "An account's keys",
        description:
          'Every key of the account that is not revoked, without the keys themselves: caps, rate limits, and what each spent in each window.',
        params: AccountParams,
        response: { 200: Type.Array(OperatorKeySchema) },
        documentedExample: { answer: operatorKeysExample },
      },
    },
    async (request) => services.apiKeys.list(request.params.accountId),
  );

  app.patch(
    '/v1/api-keys/:keyId',
    {
      config: { audit: { action: 'api-key.update', subject: { type: 'api-key', from: 'path' } } },
      schema: {
        summary: 'Disable or enable a key',
        description: 'A disabled key answers 401 on every surface, in every process, until it is enabled again.',
        params: KeyIdParams,
        body: OperatorKeyPatchBody,
        response: { 200: ApiKeySchema },
        documentedExample: { request: { isActive: false }, answer: { ...apiKeyExample, isActive: false } },
      },
    },
    async (request) => services.apiKeys.update(null, request.params.keyId, request.body),
  );
};
