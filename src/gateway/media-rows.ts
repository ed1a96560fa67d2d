import type { Catalog, CatalogModel } from '../catalog/catalog.ts';
import type { OutputModality } from '../domain/capabilities.ts';
import { GatewayError, isGatewayError } from '../domain/errors.ts';
import type { MediaJobInput } from '../domain/media-job.ts';
import type { RowRef } from '../domain/provider-rows.ts';
import { servingRows, type AdapterFamily, type RowSources, type ServingRow } from './serving-rows.ts';

type MediaFamily = 'images' | 'video';

/** The output each media family makes, as models list their outputs. */
const outputOf: Record<MediaFamily, OutputModality> = { images: 'image', video: 'video' };

/**
 * The rows a media job of `model` may be sent to: those whose protocol makes `family`, for a model that lists
 * the family's output among its outputs, best first; 400 naming the model when there is none.
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

/** The rows that speak `model`'s text-to-speech voices, best first; 400 naming the model when there is none. */
export function speechRows(sources: RowSources, model: CatalogModel): Array<ServingRow<'speech'>> {
  const rows = servingRows(sources, model, 'speech');
  if (rows.length === 0) throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not speak`);
  return rows;
}

/**
 * The rows that make `model`'s clips with reference: a model that takes audio in and gives audio out, served
 * by a family that generates with reference. 400 naming the model otherwise (a text-to-speech model, say).
 */
export function referenceRows(sources: RowSources, model: CatalogModel): Array<ServingRow<'speech'>> {
  const rows =
    model.outputModalities.includes('audio') && model.inputModalities.includes('audio')
      ? servingRows(sources, model, 'speech').filter((row) => row.adapter.generateWithReference !== undefined)
      : [];
  if (rows.length === 0)
    throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not generate audio with reference`);
  return rows;
}

/** The rows of `model` a job of this kind may go to, by the rule its recipe queued it by, best first. */
function rowsOfJob(sources: RowSources, model: CatalogModel, job: MediaJobInput): Array<ServingRow<AdapterFamily>> {
  switch (job.kind) {
    case 'image':
      return mediaRows(sources, model, 'images');
    case 'video':
      return mediaRows(sources, model, 'video');
    case 'audio':
      return job.product === 'text-to-speech' ? speechRows(sources, model) : referenceRows(sources, model);
  }
}

/**
 * The rows a queued job may be sent to now, by the same rule that queued it, best first: none when its model
 * is gone from the catalog or has no such row left.
 */
export function queuedJobRows(
  sources: RowSources,
  catalog: Pick<Catalog, 'find'>,
  job: MediaJobInput & { model: string },
): RowRef[] {
  const model = catalog.find(job.model);
  if (!model) return [];
  try {
    return rowsOfJob(sources, model, job).map(({ providerId, upstreamModel, row }) => ({
      providerId,
      upstreamModel,
      ...(row.standIn === true ? { standIn: true } : {}),
    }));
  } catch (error) {
    if (isGatewayError(error)) return [];
    throw error;
  }
}
