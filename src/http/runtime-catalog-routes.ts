import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { RuntimeCatalog } from '../catalog/runtime-catalog.ts';
import { ModelSchema, PricingSchema } from '../config/config-schema.ts';
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
import type { AuditedRoute } from './audit-hook.ts';
import { jsonBody, noBody } from './openapi/route-documentation.ts';
import { ModelIdPath, PageQueryFields } from './schemas.ts';

/** The model id every route takes as the rest of its path, named `modelId` in the OpenAPI document. */
const modelIdPath = { params: ModelIdPath, wildcardName: 'modelId' } as const;

/** A change of the model the path names, in the audit log as `action`. */
const auditedModel = (action: AuditedRoute['action']): { audit: AuditedRoute } => ({
  audit: { action, subject: { type: 'model', from: 'path' } },
});

export interface CatalogRouteOptions {
  catalog: RuntimeCatalog;
  maxPageSize: number;
  /** Who a change is by: the price versions it makes name them as their author. */
  actorOf: (request: FastifyRequest) => string;
}

/**
 * The runtime catalog's routes, one definition for the admin API and the operator API (each registers them
 * behind its own authentication): models, prices and switches stored in the database over gateway.yaml,
 * applied in every process within moments, each change audited (`catalog.*`). Model ids may contain slashes,
 * so the id is the rest of each path; the bodies are checked in code (catalog/runtime-catalog.ts) as
 * gateway.yaml is (the shape first, then the checks across fields), so a refusal names each problem of the first
 * stage that fails, once, and changes nothing.
 */
export const runtimeCatalogRoutes: FastifyPluginAsyncTypebox<CatalogRouteOptions> = async (
  app,
  { catalog, maxPageSize, actorOf },
) => {
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
        ...modelIdPath,
        response: { 200: CatalogModelViewSchema },
        documentedExample: { answer: catalogModelExample },
      },
    },
    async (request) => catalog.get(request.params['*']),
  );

  app.put(
    '/v1/catalog/models/*',
    {
      config: auditedModel('catalog.model.put'),
      schema: {
        summary: 'Create or replace a model at runtime',
        description:
          "A model entry in gateway.yaml's shape, checked as the file is (fields, ranges, each row's provider configured); its `id` must be the path's. It replaces the file's entry for the id (and any runtime prices) in every process within a second, until it is deleted; a reload of gateway.yaml keeps it. New prices get a new price version. An entry that fails changes nothing: 400 naming each problem of the first stage that finds any (the shape, then the id, then the rows' providers and ranges).",
        ...modelIdPath,
        documentedBody: jsonBody(ModelSchema, "A model entry, as in gateway.yaml's `models`"),
        response: { 200: CatalogModelViewSchema },
        documentedExample: { request: modelEntryExample, answer: catalogModelExample },
      },
    },
    async (request) => catalog.put(request.params['*'], request.body, actorOf(request)),
  );

  app.delete(
    '/v1/catalog/models/*',
    {
      config: auditedModel('catalog.model.delete'),
      schema: {
        summary: "Delete a model's runtime entry, prices and switch",
        description:
          "gateway.yaml's entry for the id serves again, if it has one (its prices get a new price version); otherwise the model leaves the catalog. 404 when the id has nothing set at runtime.",
        ...modelIdPath,
        response: { 204: noBody('Deleted: the file entry, if any, serves from now on') },
      },
    },
    async (request, reply) => {
      await catalog.remove(request.params['*'], actorOf(request));
      return reply.code(204).send();
    },
  );

  app.put(
    '/v1/catalog/prices/*',
    {
      config: auditedModel('catalog.price.set'),
      schema: {
        summary: "Set a model's prices",
        description:
          "USD prices in gateway.yaml's `pricing` shape, over whichever entry serves the model (file or runtime), as a new price version. Every process charges the next request at them within a second; requests under way and media jobs already submitted keep the prices they started with.",
        ...modelIdPath,
        documentedBody: jsonBody(PricingSchema, "Prices, as in a gateway.yaml model's `pricing`"),
        response: { 200: CatalogModelViewSchema },
        documentedExample: { request: pricingExample, answer: pricedModelExample },
      },
    },
    async (request) => catalog.setPrices(request.params['*'], request.body, actorOf(request)),
  );

  app.get(
    '/v1/catalog/prices/*',
    {
      schema: {
        summary: "A model's price history",
        description:
          'Every price the model has had, newest first: where each came from (gateway.yaml or set at runtime), who set it, when, and which is charged now. Usage records name the version they were charged at (`priceVersion`).',
        ...modelIdPath,
        querystring: Type.Object(PageQueryFields(maxPageSize), { additionalProperties: false }),
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
        config: auditedModel(active ? 'catalog.model.enable' : 'catalog.model.disable'),
        schema: {
          summary: active ? 'Switch a model on' : 'Switch a model off',
          description: active
            ? 'The model serves again (with an active provider row) in every process within a second, whatever its entry says, until the switch is changed or the runtime model deleted.'
            : 'Clients are refused the model (400, not available) in every process within a second, whatever its entry says; requests under way finish.',
          ...modelIdPath,
          response: { 200: CatalogModelViewSchema },
          documentedExample: { answer: active ? catalogModelExample : disabledModelExample },
        },
      },
      async (request) => catalog.setActive(request.params['*'], active, actorOf(request)),
    );
  }
};
