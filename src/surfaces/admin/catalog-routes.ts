import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../../gateway/services.ts';
import { ModelSchema, PricingSchema } from '../../config/config-schema.ts';
import { jsonBody, noBody } from '../../http/openapi/route-documentation.ts';
import { ModelIdPath, PageQueryFields } from '../../http/schemas.ts';
import {
  CatalogModelListSchema,
  CatalogModelViewSchema,
  PriceHistorySchema,
  catalogListExample,
  catalogModelExample,
  disabledModelExample,
  modelEntryExample,
  priceHistoryExample,
  pricedModelExample,
  pricingExample,
} from './catalog-schemas.ts';
import { operatorOnly } from './operator-only.ts';

/** The services this surface uses, and only those. */
export type CatalogAdminServices = Pick<GatewayServices, 'adminToken' | 'config' | 'runtimeCatalog'>;

/** Who the price versions the admin API sets name as their author. */
const operator = 'operator';

/**
 * The runtime catalog through the admin API: models, prices and switches stored in the database over
 * gateway.yaml, applied in every process within moments. Model ids may contain slashes, so the id is the rest
 * of each path; the bodies are checked in code (catalog/runtime-catalog.ts) as gateway.yaml is, so a refusal
 * names every problem and changes nothing.
 */
export const catalogRoutes: FastifyPluginAsyncTypebox<{ services: CatalogAdminServices }> = async (
  app,
  { services },
) => {
  const catalog = services.runtimeCatalog;
  app.addHook('onRequest', operatorOnly(services.adminToken));

  app.get(
    '/v1/catalog/models',
    {
      schema: {
        summary: 'The catalog with its sources',
        description:
          "Every model as it serves: gateway.yaml's entry or the runtime one that replaces it, with runtime prices and the on/off switch applied, where each part comes from, and its price version.",
        response: { 200: CatalogModelListSchema },
        documentedExample: { answer: catalogListExample },
      },
    },
    async () => ({ results: catalog.list() }),
  );

  app.get(
    '/v1/catalog/models/*',
    {
      schema: {
        summary: 'One catalog model with its source',
        description: 'The entry that serves the id, where it comes from, and its price version.',
        params: ModelIdPath,
        wildcardName: 'modelId',
        response: { 200: CatalogModelViewSchema },
        documentedExample: { answer: catalogModelExample },
      },
    },
    async (request) => catalog.get(request.params['*']),
  );

  app.put(
    '/v1/catalog/models/*',
    {
      config: { audit: { action: 'catalog.model.put', subject: { type: 'model', from: 'path' } } },
      schema: {
        summary: 'Create or replace a model at runtime',
        description:
          "A model entry in gateway.yaml's shape, checked as the file is (fields, ranges, each row's provider configured); its `id` must be the path's. It replaces the file's entry for the id (and any runtime prices) in every process within a second, until it is deleted; a reload of gateway.yaml keeps it. New prices get a new price version. An entry that fails changes nothing: 400 naming each problem.",
        params: ModelIdPath,
        wildcardName: 'modelId',
        documentedBody: jsonBody(ModelSchema, "A model entry, as in gateway.yaml's `models`"),
        response: { 200: CatalogModelViewSchema },
        documentedExample: { request: modelEntryExample, answer: catalogModelExample },
      },
    },
    async (request) => catalog.put(request.params['*'], request.body, operator),
  );

  app.delete(
    '/v1/catalog/models/*',
    {
      config: { audit: { action: 'catalog.model.delete', subject: { type: 'model', from: 'path' } } },
      schema: {
        summary: "Delete a model's runtime entry, prices and switch",
        description:
          "gateway.yaml's entry for the id serves again, if it has one (its prices get a new price version); otherwise the model leaves the catalog. 404 when the id has nothing set at runtime.",
        params: ModelIdPath,
        wildcardName: 'modelId',
        response: { 204: noBody('Deleted: the file entry, if any, serves from now on') },
      },
    },
    async (request, reply) => {
      await catalog.remove(request.params['*'], operator);
      return reply.code(204).send();
    },
  );

  app.put(
    '/v1/catalog/prices/*',
    {
      config: { audit: { action: 'catalog.price.set', subject: { type: 'model', from: 'path' } } },
      schema: {
        summary: "Set a model's prices",
        description:
          "USD prices in gateway.yaml's `pricing` shape, over whichever entry serves the model (file or runtime), as a new price version. Every process charges the next request at them within a second; requests under way and media jobs already submitted keep the prices they started with.",
        params: ModelIdPath,
        wildcardName: 'modelId',
        documentedBody: jsonBody(PricingSchema, "Prices, as in a gateway.yaml model's `pricing`"),
        response: { 200: CatalogModelViewSchema },
        documentedExample: { request: pricingExample, answer: pricedModelExample },
      },
    },
    async (request) => catalog.setPrices(request.params['*'], request.body, operator),
  );

  app.get(
    '/v1/catalog/prices/*',
    {
      schema: {
        summary: "A model's price history",
        description:
          'Every price the model has had, newest first: where each came from (gateway.yaml or this API), who set it, when, and which is charged now. Usage records name the version they were charged at (`priceVersion`).',
        params: ModelIdPath,
        wildcardName: 'modelId',
        querystring: Type.Object(PageQueryFields(services.config.usage.maxPageSize), { additionalProperties: false }),
        response: { 200: PriceHistorySchema },
        documentedExample: { answer: priceHistoryExample },
      },
    },
    async (request) => catalog.history(request.params['*'], request.query),
  );

  for (const active of [false, true]) {
    app.post(
      active ? '/v1/catalog/enable/*' : '/v1/catalog/disable/*',
      {
        config: {
          audit: {
            action: active ? 'catalog.model.enable' : 'catalog.model.disable',
            subject: { type: 'model', from: 'path' },
          },
        },
        schema: {
          summary: active ? 'Switch a model on' : 'Switch a model off',
          description: active
            ? 'The model serves again (with an active provider row) in every process within a second, whatever its entry says, until the switch is changed or the runtime model deleted.'
            : 'Clients are refused the model (400, not available) in every process within a second, whatever its entry says; requests under way finish.',
          params: ModelIdPath,
          wildcardName: 'modelId',
          response: { 200: CatalogModelViewSchema },
          documentedExample: { answer: active ? catalogModelExample : disabledModelExample },
        },
      },
      async (request) => catalog.setActive(request.params['*'], active, operator),
    );
  }
};
