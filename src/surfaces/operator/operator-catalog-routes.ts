import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../../gateway/services.ts';
import { principalOf } from '../../http/authentication.ts';
import { runtimeCatalogRoutes } from '../../http/runtime-catalog-routes.ts';

/** The services this part of the surface uses. */
export type OperatorCatalogServices = Pick<GatewayServices, 'config' | 'runtimeCatalog'>;

/**
 * The console's "Catalog and prices": the runtime catalog's routes as the admin API has them
 * (http/runtime-catalog-routes.ts: same answers, same checks in code, same audit actions), under
 * `/api/operator/v1/catalog`, each change authored by the signed-in operator account, whose id the price
 * versions it sets name. Registered behind the operator API's authentication.
 */
export const operatorCatalogRoutes: FastifyPluginAsyncTypebox<{ services: OperatorCatalogServices }> = async (
  app,
  { services },
) => {
  await app.register(runtimeCatalogRoutes, {
    catalog: services.runtimeCatalog,
    maxPageSize: services.config.usage.maxPageSize,
    actorOf: (request) => principalOf(request).accountId,
  });
};
