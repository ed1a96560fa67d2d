import { secondNanos, videoPriceSnapshot } from '../../src/billing/duration-pricing.ts';
import type { Catalog } from '../../src/catalog/catalog.ts';
import { GatewayError } from '../../src/domain/errors.ts';
import { mediaRows } from '../../src/gateway/media-rows.ts';
import type { RowSources } from '../../src/gateway/serving-rows.ts';
import { ReferenceUrls } from '../../src/gateway/image-request-check.ts';
import { checkVideoRequest, defaultResolution, type NativeVideoInput } from '../../src/gateway/video-request-check.ts';

/** A refusal as a client reads it from the envelope: its code, status and message. */
export interface Refusal {
  code: string;
  status: number;
  message: string;
}

/**
 * The refusal of a decoded video request by the steps of `VideoJobRecipe.plan`, before anything is held: the
 * model resolved, its video rows, its prices, the request checked against the best row, the adapter's own check
 * and the price of the resolution. `decode` is the surface's decoding, whose refusals count as the request's.
 * Throws when nothing refuses. References are not read: these requests name no asset, and URLs pass.
 */
export async function videoPlanRefusal(
  { catalog, sources }: { catalog: Catalog; sources: RowSources },
  decode: () => NativeVideoInput,
): Promise<Refusal> {
  try {
    const input = decode();
    const model = catalog.resolve(input.modelId);
    const [best] = mediaRows(sources, model, 'video');
    const prices = videoPriceSnapshot(model);
    const request = await checkVideoRequest(model.modelId, input, {
      row: best!.row,
      references: {
        assets: async (named) => {
          if (named.length > 0) throw new Error('no asset is named by these requests');
          return new Map();
        },
        urls: new ReferenceUrls(),
      },
    });
    best!.adapter.check(request, model.modelId);
    secondNanos(prices, request.resolution ?? defaultResolution(best!.row), model.modelId);
  } catch (error) {
    if (error instanceof GatewayError) return { code: error.code, status: error.status, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}
