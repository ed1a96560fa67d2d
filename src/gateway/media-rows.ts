import type { CatalogModel } from '../catalog/catalog.ts';
import type { OutputModality } from '../domain/capabilities.ts';
import { GatewayError } from '../domain/errors.ts';
import { servingRows, type RowSources, type ServingRow } from './serving-rows.ts';

type MediaFamily = 'images' | 'video';

/** The output each media family makes, as models list their outputs. */
const outputOf: Record<MediaFamily, OutputModality> = { images: 'image', video: 'video' };

/**
 * The rows a media job of `model` may be queued on: those whose protocol makes `family`, for a model that
 * lists the family's output among its outputs, best first; 400 naming the model when there is none. A job is
 * bound to the row it is queued on.
 */
export function mediaRows<F extends MediaFamily>(
  sources: RowSources,
  model: CatalogModel,
  family: F,
): Array<ServingRow<F>> {
  const modality = outputOf[family];
  const rows = model.outputModalities.includes(modality) ? servingRows(sources, model, family) : [];
  if (rows.length === 0)
    throw new GatewayError(
      'GW_MODEL_NOT_AVAILABLE',
      `model "${model.modelId}" does not generate ${modality === 'image' ? 'images' : modality}`,
    );
  return rows;
}
