import { imageCostNanos, imageHoldNanos, imagePriceSnapshot } from '../billing/image-pricing.ts';
import type { CatalogModel } from '../catalog/catalog.ts';
import { GatewayError } from '../domain/errors.ts';
import type { ImageSource, ImageStreamEvent, ImageUsage } from '../domain/image.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { RequestContext } from '../domain/request-context.ts';
import { imageTypeOf, notAnImage } from '../media/media-type.ts';
import type { FetchedMedia } from '../media/remote-media.ts';
import type { ImageAdapter } from '../providers/provider-adapter.ts';
import type { Charge, FailureCharge, Plan, Recipe } from './generation-pipeline.ts';
import {
  checkImageRequest,
  ReferenceUrls,
  type CheckedImageRequest,
  type NamedAsset,
  type NativeImageInput,
  type ReusableAsset,
  type UrlCheck,
} from './image-request-check.ts';
import { metered, startIteration } from './metered.ts';
import type { ServingRow } from './serving-rows.ts';
import { readUpstream } from './upstream-reading.ts';

export interface ImageStreamingSources {
  /** Provider output URLs, fetched to send the image's bytes on. */
  downloadOutput: (url: string) => Promise<FetchedMedia>;
  /** The address rules of reference URLs, checked once the hold is taken. */
  checkReferenceUrl: UrlCheck;
}

/** One image of a translated stream, as bytes, or the end with the provider's usage. */
export type StreamedImage =
  | { type: 'image'; index: number; base64: string; size: string | undefined }
  | { type: 'finish'; usage: ImageUsage };

export interface ImageStreamRun {
  events: AsyncIterable<StreamedImage>;
  droppedParameters: string[];
}

type ImageRow = ServingRow<'images'>;

interface ImageStreamPlan extends Plan<ImageRow> {
  request: CheckedImageRequest['request'];
  dropped: string[];
  priceSnapshot: ReturnType<typeof imagePriceSnapshot>;
  referenceUrls: ReferenceUrls;
}

/** Whether a row's family streams image events. */
export function streamsImages(adapter: ImageAdapter): boolean {
  return adapter.stream !== undefined;
}

/**
 * The recipe for streamed image events translated from a provider whose protocol streams them (ModelArk):
 * held like a job (every image asked, at the quality asked), each image passed on as it is finished, and
 * charged at the end for the images the provider delivered. Not archived: the answer carries the images.
 */
export class ImageStreamRecipe implements Recipe<NativeImageInput, ImageRow, ImageStreamPlan, ImageStreamRun> {
  readonly modality = 'image';

  /** `rows`: the model's image rows, the winning one streaming; those that stream may serve. */
  constructor(
    private readonly rows: readonly ImageRow[],
    private readonly sources: ImageStreamingSources,
  ) {}

  async plan(model: CatalogModel, input: NativeImageInput, context: RequestContext): Promise<ImageStreamPlan> {
    const priceSnapshot = imagePriceSnapshot(model);
    const rows = this.rows.filter((row) => streamsImages(row.adapter));
    const winner = rows[0]!;
    const referenceUrls = new ReferenceUrls();
    const { request, dropped } = await checkImageRequest(model, input, {
      row: winner.row,
      adapter: winner.adapter,
      references: { assets: noAssets, urls: referenceUrls },
      lenient: true,
    });
    return {
      rows,
      holdNanos: imageHoldNanos(priceSnapshot, request),
      recordedRequest: {
        surface: context.surface,
        endpoint: context.endpoint,
        model: model.modelId,
        n: request.numberOfImages,
        stream: true,
      },
      request,
      dropped,
      priceSnapshot,
      referenceUrls,
    };
  }

  /** The reference URLs' hosts are looked up once the hold is taken (a refused URL gives it back). */
  prepare(plan: ImageStreamPlan): Promise<void> {
    return plan.referenceUrls.checkAll(this.sources.checkReferenceUrl);
  }

  /** Resolves once the first image (or the end) is in, or throws without settling. */
  async dispatch(row: ImageRow, plan: ImageStreamPlan, charge: Charge): Promise<ImageStreamRun> {
    const { request, priceSnapshot } = plan;
    const images = request.images.filter((image): image is ImageSource => image.kind !== 'asset');
    const upstream = row.adapter.stream!(
      { ...request, images, upstreamModel: row.upstreamModel },
      { target: row.target },
    );
    const first = await startIteration(this.bytesOf(readUpstream(upstream)));
    let delivered = 0;
    let usage: ImageUsage = {};
    const events = metered(first, {
      observe: (event) => {
        if (event.type === 'image') delivered += 1;
        else usage = event.usage;
      },
      settle: ({ failed, consumerLeft }) => {
        const costNanos = imageCostNanos(priceSnapshot, delivered, request.quality);
        const status = failed ? 'failed' : consumerLeft ? 'aborted' : 'succeeded';
        charge.settle(status, costNanos, { ...usage, generatedImages: delivered, usdCost: nanosToUsd(costNanos) });
      },
    });
    return { events: await startIteration(events), droppedParameters: plan.dropped };
  }

  served(run: ImageStreamRun): ImageStreamRun {
    return run;
  }

  /** A stream that delivered no image is recorded failed with what the provider reported, and charged nothing. */
  failure(_plan: ImageStreamPlan, error: unknown): FailureCharge | undefined {
    if (!(error instanceof NoImageDelivered)) return undefined;
    return { costNanos: 0n, usage: { ...error.usage, generatedImages: 0, usdCost: 0, error: error.message } };
  }

  /**
   * The provider's events with each image as base64, fetched when the provider sent a URL. An output whose bytes
   * are no picture (an error page, whatever type the provider declared) is left out, so it is neither sent nor
   * charged. Images are sent only as they pass, so a stream that ends with none has sent nothing yet (its first
   * event is pulled before the answer begins): it fails there, as the same request unstreamed does.
   */
  private async *bytesOf(upstream: AsyncIterable<ImageStreamEvent>): AsyncGenerator<StreamedImage> {
    const unkept: string[] = [];
    let delivered = 0;
    for await (const event of upstream) {
      if (event.type === 'finish') {
        if (delivered === 0) throw new NoImageDelivered(event.usage, unkept);
        yield event;
      } else if (event.type === 'failure') unkept.push(`output ${event.failure.index}: ${event.failure.message}`);
      else {
        const output = event.image.output;
        const base64 =
          output.kind === 'inline'
            ? output.data
            : (await this.sources.downloadOutput(output.url)).bytes.toString('base64');
        // The signatures sit in a file's first bytes: 64 base64 characters decode to the 48 they need.
        if (imageTypeOf(Buffer.from(base64.slice(0, 64), 'base64')) === undefined) {
          unkept.push(`output ${event.index}: ${notAnImage}`);
          continue;
        }
        delivered += 1;
        yield { type: 'image', index: event.index, base64, size: event.image.size };
      }
    }
  }
}

/**
 * The provider's stream ended without one image that could be sent: 502 before the answer begins, as an image job
 * that kept none fails, naming why each output was not kept.
 */
class NoImageDelivered extends GatewayError {
  constructor(
    readonly usage: ImageUsage,
    unkept: readonly string[],
  ) {
    super(
      'GW_GENERATION_FAILED',
      `image generation failed: ${unkept.length > 0 ? unkept.join('; ') : 'the provider returned no image'}`,
    );
  }
}

/** A streamed answer carries its images itself: there is no archive to reuse assets from. */
async function noAssets(named: readonly NamedAsset[]): Promise<ReadonlyMap<string, ReusableAsset>> {
  const [first] = named;
  if (first) throw new GatewayError('GW_NOT_FOUND', `${first.where}: asset "${first.assetId}" not found`);
  return new Map();
}
