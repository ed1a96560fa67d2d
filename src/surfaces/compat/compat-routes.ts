import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { principalOf, requireCredential } from '../../http/authentication.ts';
import { BalanceSchema, KeyLookupSchema, UsagePageSchema } from '../../http/answer-schemas.ts';
import { balanceExample, usagePageExample } from '../../http/examples.ts';
import { PageQueryFields } from '../../http/schemas.ts';
import { afterOwnSettlements } from '../../http/settled-reads.ts';

/** The services this surface uses, and only those. */
export type CompatServices = Pick<
  GatewayServices,
  'accounts' | 'apiKeys' | 'authenticator' | 'config' | 'ledger' | 'usage'
>;

export const compatRoutes: FastifyPluginAsyncTypebox<{ services: CompatServices }> = async (app, { services }) => {
  app.addHook('onRequest', requireCredential(services.authenticator));
  app.addHook('preHandler', afterOwnSettlements(services.ledger));
  const maxPageSize = services.config.usage.maxPageSize;

  app.get(
    '/v1/usage',
    {
      schema: {
        summary: 'Usage records, newest first',
        description: "One page of the generation records of the credential's account (model, status, cost, usage).",
        documentedExample: { answer: usagePageExample },
        querystring: Type.Object(PageQueryFields(maxPageSize)),
        response: { 200: UsagePageSchema },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return services.usage.page(principal.accountId, { offset: request.query.offset, limit: request.query.limit });
    },
  );

  app.get(
    '/v1/balance',
    {
      schema: {
        summary: 'Credit balance',
        description: "The credential's account's credit balance in USD, after this process's settlements of it.",
        response: { 200: BalanceSchema },
        documentedExample: { answer: balanceExample },
      },
    },
    async (request) => {
      const account = await services.accounts.getAccount(principalOf(request).accountId);
      return { creditBalance: account.creditBalance };
    },
  );

  app.get(
    '/v1/api-key',
    {
      schema: {
        summary: 'Key lookup: the key of x-api-key (403 without it)',
        description:
          'The name of the key sent in x-api-key, and for each spend cap set on it the cap, what it spent and what remains; never the balance.',
        response: { 200: KeyLookupSchema },
        documentedExample: {
          answer: { name: 'batch jobs', isActive: true, daily: { limit: 5, spent: 1.25, remaining: 3.75 } },
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      if (principal.kind !== 'key' || principal.source !== 'x-api-key') {
        throw new GatewayError('GW_KEY_REQUIRED', 'key lookup needs the API key in the x-api-key header');
      }
      return services.apiKeys.lookup(principal.apiKeyId);
    },
  );
};
