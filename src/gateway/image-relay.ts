import { imageCostNanos, imageHoldNanos, imagePriceSnapshot } from '../billing/image-pricing.ts';
import type { CatalogModel } from '../catalog/catalog.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { RequestContext } from '../domain/request-context.ts';
import type { ImageAdapter, ImageRelayReading } from '../providers/provider-adapter.ts';
import type { Charge, Plan, Recipe } from './generation-pipeline.ts';
import { meterReading } from './meter-reading.ts';
import { metered, startIteration } from './metered.ts';
import type { ServingRow } from './serving-rows.ts';

export interface ImageRelayInput {
  modelId: string;
  /** The images body in the protocol's own shape, as the client sent it; `model` is rewritten to the upstream's. */
  body: Readonly<Record<string, unknown>>;
  numberOfImages: number;
  quality: string | undefined;
  streaming: boolean;
}

export interface RelayedImages {
  status: number;
  contentType: string | undefined;
  body: AsyncIterable<Uint8Array>;
}

type ImageRow = ServingRow<'images'>;

interface ImageRelayPlan extends Plan<ImageRow> {
  input: ImageRelayInput;
  priceSnapshot: ReturnType<typeof imagePriceSnapshot>;
}

/** Whether a row's family forwards the images protocol as given, with a meter for its answers. */
export function relaysImages(adapter: ImageAdapter): boolean {
  return adapter.relay !== undefined && adapter.relayMeter !== undefined;
}

/**
 * The recipe for images to upstreams of the client's own protocol: held at the estimate (`n` images at the
 * quality asked), relayed as it arrives, JSON or SSE, and charged for the images the answer carried, read
 * from a copy of it. The hold lives in this process's credit lease like any quick request's.
 */
export class ImageRelayRecipe implements Recipe<ImageRelayInput, ImageRow, ImageRelayPlan, RelayedImages> {
  readonly modality = 'image';

  /** `rows`: the model's image rows, the winning one relaying; those that relay may serve. */
  constructor(private readonly rows: readonly ImageRow[]) {}

  plan(model: CatalogModel, input: ImageRelayInput, context: RequestContext): ImageRelayPlan {
    const priceSnapshot = imagePriceSnapshot(model);
    return {
      rows: this.rows.filter((row) => relaysImages(row.adapter)),
      holdNanos: imageHoldNanos(priceSnapshot, { numberOfImages: input.numberOfImages, quality: input.quality }),
      recordedRequest: {
        surface: context.surface,
        endpoint: context.endpoint,
        model: input.modelId,
        n: input.numberOfImages,
        quality: input.quality,
        stream: input.streaming,
      },
      input,
      priceSnapshot,
    };
  }

  async dispatch(row: ImageRow, plan: ImageRelayPlan, charge: Charge): Promise<RelayedImages> {
    const { input, priceSnapshot } = plan;
    const exchange = await row.adapter.relay!(
      { upstreamModel: row.upstreamModel, body: input.body },
      { target: row.target },
    );
    const upstream = await startIteration(exchange.body);
    const meter = row.adapter.relayMeter!({
      streaming: input.streaming,
      maxEventCharacters: row.target.maxEventCharacters,
      whole: exchange.whole,
    });
    const body = metered(upstream, {
      observe: (chunk) => meter.push(chunk),
      settle: ({ failed, consumerLeft }) => {
        const reading = meterReading(meter, unreadableImages);
        const costNanos = imageCostNanos(priceSnapshot, reading.images, reading.quality ?? input.quality);
        const status = failed || !reading.complete ? 'failed' : consumerLeft ? 'aborted' : 'succeeded';
        charge.settle(status, costNanos, {
          ...reading.usage,
          generatedImages: reading.images,
          usdCost: nanosToUsd(costNanos),
        });
      },
    });
    return { status: exchange.status, contentType: exchange.contentType, body: await startIteration(body) };
  }

  served(run: RelayedImages): RelayedImages {
    return run;
  }
}

/** A meter that could not read its copy: an answer that delivered nothing. */
function unreadableImages(): ImageRelayReading {
  return { images: 0, complete: false, usage: {} };
}
