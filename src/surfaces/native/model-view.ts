import { effectiveCapabilities, type CatalogModel } from '../../catalog/catalog.ts';
import type { Static } from '@fastify/type-provider-typebox';
import type { ModelSchema } from './answer-schemas.ts';

/** The spec's Model resource, as documented. */
export type ModelView = Static<typeof ModelSchema>;

export function modelView(model: CatalogModel): ModelView {
  const view: ModelView = {
    modelId: model.modelId,
    providerIds: [...new Set(model.rows.map((row) => row.providerId))],
    inputModalities: [...model.inputModalities],
    outputModalities: [...model.outputModalities],
    isActive: true,
    revision: model.revision,
  };
  if (model.name !== undefined) view.name = model.name;
  const capabilities = effectiveCapabilities(model);
  if (capabilities !== undefined) view.capabilities = capabilities;
  if (model.createdAt !== undefined) view.createdAt = model.createdAt;
  if (model.updatedAt !== undefined) view.updatedAt = model.updatedAt;
  return view;
}
