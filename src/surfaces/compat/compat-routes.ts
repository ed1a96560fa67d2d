import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { principalOf, requireCredential } from '../../http/authentication.ts';

export const compatRoutes: FastifyPluginAsyncTypebox<{ services: GatewayServices }> = async (app, { services }) => {
  app.addHook('onRequest', requireCredential(services.authenticator));
  const maxPageSize = services.config.usage.maxPageSize;

  app.get(
    '/api/compat/v1/usage',
    {
      schema: {
        querystring: Type.Object({
          offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
          limit: Type.Integer({ minimum: 1, maximum: maxPageSize, default: 20 }),
        }),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return services.usage.page(principal.accountId, request.query.offset, request.query.limit);
    },
  );

  app.get('/api/compat/v1/balance', async (request) => {
    const account = await services.accounts.getAccount(principalOf(request).accountId);
    return { creditBalance: account.creditBalance };
  });

  app.get('/api/compat/v1/api-key', async (request) => {
    const principal = principalOf(request);
    if (principal.kind !== 'key' || principal.source !== 'x-api-key') {
      throw new GatewayError('GW_KEY_REQUIRED', 'key lookup needs the API key in the x-api-key header');
    }
    return services.apiKeys.lookup(principal.apiKeyId);
  });
};
