import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../../gateway/services.ts';
import { runtimeCatalogRoutes } from '../../http/runtime-catalog-routes.ts';
import { operatorOnly } from './operator-only.ts';
import { refuseUnknownFields } from '../../http/validation.ts';

/** The services this surface uses, and only those. */
export type CatalogAdminServices = Pick<GatewayServices, 'adminToken' | 'config' | 'runtimeCatalog'>;

/** Who the price versions the admin API sets name as their author. */
const operator = 'operator';

/** The runtime catalog through the admin API (http/runtime-catalog-routes.ts), behind the admin token. */
export const catalogRoutes: FastifyPluginAsyncTypebox<{ services: CatalogAdminServices }> = async (
  app,
  { services },
) => {
  refuseUnknownFields(app);
  app.addHook('onRequest', operatorOnly(services.adminToken));
  await app.register(runtimeCatalogRoutes, {
    catalog: services.runtimeCatalog,
    maxPageSize: services.config.usage.maxPageSize,
    actorOf: () => operator,
  });
};
