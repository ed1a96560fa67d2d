import type { CreditLedger } from '../billing/credit-ledger.ts';
import { imageCostNanos, imageHoldNanos, imagePriceSnapshot } from '../billing/image-pricing.ts';
import type { Catalog, ProviderRow } from '../catalog/catalog.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import { GatewayError } from '../domain/errors.ts';
import type { ImageSource, ImageStreamEvent, ImageUsage } from '../domain/image.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { FetchedMedia } from '../media/remote-media.ts';
import type { AdapterRegistry, ImageAdapter } from '../providers/provider-adapter.ts';
import { checkImageRequest, type NativeImageInput } from './image-request-check.ts';
import { metered, startIteration } from './metered.ts';
import type { RequestContext } from '../domain/request-context.ts';
import type { WorkTracker } from './work-tracker.ts';

export interface ImageStreamingDependencies {
  catalog: Catalog;
  adapters: AdapterRegistry;
  providers: ReadonlyMap<string, ProviderConfig>;
  ledger: CreditLedger;
  work: WorkTracker;
  /** Provider output URLs, fetched to send the image's bytes on. */
  downloadOutput: (url: string) => Promise<FetchedMedia>;
  /** Reference URLs checked before the hold: `RemoteMediaFetcher.check`, throwing `RemoteMediaError` for a URL that is refused. */
  checkReferenceUrl: (url: string) => Promise<void>;
}

/** One image of a translated stream, as bytes, or the end with the provider's usage. */
export type StreamedImage =
  | { type: 'image'; index: number; base64: string; size: string | undefined }
  | { type: 'finish'; usage: ImageUsage };

export interface ImageStreamRun {
  events: AsyncIterable<StreamedImage>;
  droppedParameters: string[];
}

/**
 * Streamed image events for a compatibility surface, translated from a provider whose protocol streams them
 * (ModelArk): held like a job (every image asked, at the quality asked), each image passed on as it is
 * finished, and charged at the end for the images the provider delivered. Not archived: the surface's answer
 * carries the images themselves.
 */
export class ImageStreaming {
  constructor(private readonly dependencies: ImageStreamingDependencies) {}

  /** The model's winning image row, when its family streams image events. */
  route(modelId: string): { row: ProviderRow; adapter: ImageAdapter } | undefined {
    for (const row of this.dependencies.catalog.resolve(modelId).rows) {
      const adapter = this.dependencies.adapters.get(row.protocol)?.images;
      if (adapter) return adapter.stream ? { row, adapter } : undefined;
    }
    return undefined;
  }

  async start(
    caller: RequestContext,
    input: NativeImageInput,
    route: { row: ProviderRow; adapter: ImageAdapter },
  ): Promise<ImageStreamRun> {
    const { catalog, ledger, providers, work } = this.dependencies;
    const model = catalog.resolve(input.modelId);
    const snapshot = imagePriceSnapshot(model);
    const noAssets = (assetId: string, where: string) =>
      Promise.reject(new GatewayError('GW_NOT_FOUND', `${where}: asset "${assetId}" not found`));
    const { request, dropped } = await checkImageRequest(
      model,
      route.row,
      route.adapter,
      input,
      { findAsset: noAssets, checkUrl: this.dependencies.checkReferenceUrl },
      true,
    );
    const reservation = await ledger.reserve({
      accountId: caller.accountId,
      apiKeyId: caller.apiKeyId,
      amountNanos: imageHoldNanos(snapshot, request),
      modelId: model.modelId,
      requestLog: caller.log,
    });
    reservation.whenEnded(work.begin());
    const recorded = {
      surface: caller.surface,
      endpoint: caller.endpoint,
      model: model.modelId,
      n: request.numberOfImages,
      stream: true,
    };
    let delivered = 0;
    let usage: ImageUsage = {};
    const images = request.images.filter((image): image is ImageSource => image.kind !== 'asset');
    const upstream = route.adapter.stream!(
      { ...request, images, upstreamModel: route.row.upstreamModel },
      { target: providers.get(route.row.providerId)! },
    );
    const events = metered(this.bytesOf(upstream), {
      observe: (event) => {
        if (event.type === 'image') delivered += 1;
        else usage = event.usage;
      },
      settle: ({ failed, consumerLeft }) => {
        const costNanos = imageCostNanos(snapshot, delivered, request.quality);
        const status = failed ? 'failed' : consumerLeft ? 'aborted' : 'succeeded';
        reservation.settleInBackground({
          costNanos,
          modality: 'image',
          status,
          request: recorded,
          usage: { ...usage, generatedImages: delivered, usdCost: nanosToUsd(costNanos) },
        });
      },
    });
    return { events: await startIteration(events), droppedParameters: dropped };
  }

  /** The provider's events with each image as base64, fetched when the provider sent a URL; failed images are left out. */
  private async *bytesOf(upstream: AsyncIterable<ImageStreamEvent>): AsyncGenerator<StreamedImage> {
    for await (const event of upstream) {
      if (event.type === 'finish') yield event;
      else if (event.type === 'image') {
        const output = event.image.output;
        const base64 =
          output.kind === 'inline'
            ? output.data
            : (await this.dependencies.downloadOutput(output.url)).bytes.toString('base64');
        yield { type: 'image', index: event.index, base64, size: event.image.size };
      }
    }
  }
}
