import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { ModelSchema, PricingSchema } from '../../config/config-schema.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { principalOf } from '../../http/authentication.ts';
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
} from '../../http/catalog-schemas.ts';
import { jsonBody, noBody } from '../../http/openapi/route-documentation.ts';
import { ModelIdPath, PageQueryFields } from '../../http/schemas.ts';

/** The services this part of the surface uses. */
export type OperatorCatalogServices = Pick<GatewayServices, 'config' | 'runtimeCatalog'>;

/** A price version set here names the operator account that set it. */
const operatorOf = (request: FastifyRequest) => principalOf(request).accountId;

/**
 * The console's "Catalog and prices": the runtime catalog (catalog/runtime-catalog.ts) as the admin API has it,
 * with the same answers and the same checks in code, but each change authored by the signed-in operator account.
 * Registered behind the operator API's authentication; model ids may contain slashes, so the id is the rest of
 * each path.
 */
export const operatorCatalogRoutes: FastifyPluginAsyncTypebox<{ services: OperatorCatalogServices }> = async (
  app,
  { services },
) => {
  const catalog = services.runtimeCatalog;

  app.get(
    '/v1/catalog/models',
    {
      schema: {
        summary: 'Catalog models, their sources and price versions',
        description:
          "The console's catalog table: every model as it serves (gateway.yaml's entry or the runtime one over it), whether it is switched on and served, what the runtime catalog overrides, and the price version charged now.",
        response: { 200: CatalogModelListSchema },
        documentedExample: { answer: catalogListExample },
      },
    },
    async () => ({ results: catalog.list() }),
  );

  app.put(
    '/v1/catalog/models/*',
    {
      config: { audit: { action: 'catalog.model.put', subject: { type: 'model', from: 'path' } } },
      schema: {
        summary: 'Create or replace a model entry',
        description:
          "The console's \"edit entry as JSON\": a model in gateway.yaml's shape whose `id` is the path's, checked as the file is. It serves in every process within a second until its runtime entry is deleted; new prices get a new price version authored by the operator. A refused entry changes nothing: 400 naming each problem.",
        params: ModelIdPath,
        wildcardName: 'modelId',
        documentedBody: jsonBody(ModelSchema, "A model entry, as in gateway.yaml's `models`"),
        response: { 200: CatalogModelViewSchema },
        documentedExample: { request: modelEntryExample, answer: catalogModelExample },
      },
    },
    async (request) => catalog.put(request.params['*'], request.body, operatorOf(request)),
  );

  app.delete(
    '/v1/catalog/models/*',
    {
      config: { audit: { action: 'catalog.model.delete', subject: { type: 'model', from: 'path' } } },
      schema: {
        summary: 'Delete the runtime override of a model',
        description:
          "Drops the runtime entry, prices and switch: gateway.yaml's entry serves again if there is one (its prices as a new price version), otherwise the model leaves the catalog. 404 when nothing is set at runtime for the id.",
        params: ModelIdPath,
        wildcardName: 'modelId',
        response: { 204: noBody('Deleted: the file entry, if any, serves from now on') },
      },
    },
    async (request, reply) => {
      await catalog.remove(request.params['*'], operatorOf(request));
      return reply.code(204).send();
    },
  );

  app.put(
    '/v1/catalog/prices/*',
    {
      config: { audit: { action: 'catalog.price.set', subject: { type: 'model', from: 'path' } } },
      schema: {
        summary: "Edit a model's prices",
        description:
          "USD prices in gateway.yaml's `pricing` shape become the model's new price version, authored by the operator; the next request in every process is charged at them within a second, while requests under way and submitted media jobs keep theirs. A bad price is refused with 400 naming the field, and changes nothing.",
        params: ModelIdPath,
        wildcardName: 'modelId',
        documentedBody: jsonBody(PricingSchema, "Prices, as in a gateway.yaml model's `pricing`"),
        response: { 200: CatalogModelViewSchema },
        documentedExample: { request: pricingExample, answer: pricedModelExample },
      },
    },
    async (request) => catalog.setPrices(request.params['*'], request.body, operatorOf(request)),
  );

  app.get(
    '/v1/catalog/prices/*',
    {
      schema: {
        summary: "A model's price versions",
        description:
          "The console's price history: one page of the model's price versions, newest first, each with its prices, when and where it was set (gateway.yaml or at runtime), who set it, and which one is charged now.",
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
          summary: active ? 'Enable a model' : 'Disable a model',
          description: active
            ? 'Switches the model on in every process within a second (it serves with an active provider row), whatever its entry says.'
            : 'Switches the model off in every process within a second: clients are refused it (400, not available); requests under way finish.',
          params: ModelIdPath,
          wildcardName: 'modelId',
          response: { 200: CatalogModelViewSchema },
          documentedExample: { answer: active ? catalogModelExample : disabledModelExample },
        },
      },
      async (request) => catalog.setActive(request.params['*'], active, operatorOf(request)),
    );
  }
};
