import type { CatalogModel, ProviderRow } from '../catalog/catalog.ts';
import type { OutputModality } from '../domain/capabilities.ts';
import { GatewayError } from '../domain/errors.ts';
import type { AdapterRegistry, ProviderAdapter } from '../providers/provider-adapter.ts';

type MediaFamily = 'images' | 'video';

/**
 * The row a media job of `model` runs on: the best-priority row whose protocol makes `family`, for a model
 * that lists `modality` among its outputs; 400 naming the model otherwise. Jobs do not fall back between
 * rows: the job is bound to its row when it is queued.
 */
export function mediaRoute<F extends MediaFamily>(
  adapters: AdapterRegistry,
  model: CatalogModel,
  family: F,
  modality: OutputModality,
): { row: ProviderRow; adapter: NonNullable<ProviderAdapter[F]> } {
  if (model.outputModalities.includes(modality)) {
    for (const row of model.rows) {
      const adapter = adapters.get(row.protocol)?.[family];
      if (adapter) return { row, adapter: adapter as NonNullable<ProviderAdapter[F]> };
    }
  }
  throw new GatewayError(
    'GW_MODEL_NOT_AVAILABLE',
    `model "${model.modelId}" does not generate ${modality === 'image' ? 'images' : modality}`,
  );
}
