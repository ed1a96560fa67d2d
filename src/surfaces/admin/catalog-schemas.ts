import { Type, type Static } from '@fastify/type-provider-typebox';
import { ModelSchema, PricingSchema } from '../../config/config-schema.ts';
import { pageFields } from '../../http/answer-schemas.ts';

/** The runtime catalog's answers and examples, as the OpenAPI document shows them. */

const Source = Type.Enum(['file', 'runtime'] as const);

export const CatalogModelViewSchema = Type.Object(
  {
    id: Type.String(),
    source: Type.Enum(['file', 'runtime'] as const, {
      description:
        "`runtime`: an entry set through this API replaces (or adds to) gateway.yaml's; `file`: gateway.yaml's",
    }),
    inFile: Type.Boolean({
      description: 'gateway.yaml has an entry for this id (deleting the runtime one falls back to it)',
    }),
    overrides: Type.Object(
      { entry: Type.Boolean(), pricing: Type.Boolean(), active: Type.Boolean() },
      { description: 'What the runtime catalog sets over the file: a whole entry, prices, the on/off switch' },
    ),
    active: Type.Boolean({ description: 'Switched on' }),
    served: Type.Boolean({ description: 'Clients can use it now: switched on, with an active provider row' }),
    priceVersion: Type.Optional(
      Type.String({ description: 'The version of its prices: usage records charged from now on name it' }),
    ),
    entry: ModelSchema,
  },
  {
    description: 'A catalog model: the entry that serves (gateway.yaml shape), where it comes from, its price version',
  },
);

export const CatalogModelListSchema = Type.Object(
  { results: Type.Array(CatalogModelViewSchema) },
  { description: 'Every model of the catalog, file models first (in the file order), then runtime-only ones by id' },
);

export const PriceVersionSchema = Type.Object({
  id: Type.String(),
  modelId: Type.String(),
  pricing: PricingSchema,
  source: Source,
  actor: Type.Optional(
    Type.String({ description: 'Who set it (`operator` for the admin API); absent for gateway.yaml' }),
  ),
  createdAt: Type.String(),
  current: Type.Boolean({ description: 'The version the model is charged at now' }),
});

export const PriceHistorySchema = Type.Object(
  { results: Type.Array(PriceVersionSchema), ...pageFields },
  { description: "One page of the model's price versions, newest first" },
);

export const modelEntryExample: Static<typeof ModelSchema> = {
  id: 'gpt-4o-mini',
  name: 'GPT-4o mini',
  pricing: { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  providers: [{ provider: 'openai', model: 'gpt-4o-mini', priority: 1 }],
};

export const pricingExample: Static<typeof PricingSchema> = { inputPerMTok: 0.2, outputPerMTok: 0.8 };

export const catalogModelExample: Static<typeof CatalogModelViewSchema> = {
  id: 'gpt-4o-mini',
  source: 'runtime',
  inFile: true,
  overrides: { entry: true, pricing: false, active: false },
  active: true,
  served: true,
  priceVersion: 'price_8f2d6a1c4e7b9d3f5a0c2e4b6d8f1a3c',
  entry: modelEntryExample,
};

export const pricedModelExample: Static<typeof CatalogModelViewSchema> = {
  ...catalogModelExample,
  source: 'file',
  overrides: { entry: false, pricing: true, active: false },
  priceVersion: 'price_2c4e6a8b0d1f3a5c7e9b1d3f5a7c9e0b',
  entry: { ...modelEntryExample, pricing: pricingExample },
};

export const disabledModelExample: Static<typeof CatalogModelViewSchema> = {
  ...catalogModelExample,
  overrides: { entry: true, pricing: false, active: true },
  active: false,
  served: false,
  entry: { ...modelEntryExample, isActive: false },
};

export const catalogListExample: Static<typeof CatalogModelListSchema> = { results: [catalogModelExample] };

export const priceHistoryExample: Static<typeof PriceHistorySchema> = {
  results: [
    {
      id: 'price_2c4e6a8b0d1f3a5c7e9b1d3f5a7c9e0b',
      modelId: 'gpt-4o-mini',
      pricing: pricingExample,
      source: 'runtime',
      actor: 'operator',
      createdAt: '2026-03-02T10:04:31.512Z',
      current: true,
    },
    {
      id: 'price_8f2d6a1c4e7b9d3f5a0c2e4b6d8f1a3c',
      modelId: 'gpt-4o-mini',
      pricing: { inputPerMTok: 0.15, outputPerMTok: 0.6 },
      source: 'file',
      createdAt: '2026-03-01T08:00:00.000Z',
      current: false,
    },
  ],
  total: 2,
  offset: 0,
  limit: 20,
};
