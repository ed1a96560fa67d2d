import type { CreditLedger } from '../billing/credit-ledger.ts';
import { imageCostNanos, imageHoldNanos, imagePriceSnapshot } from '../billing/image-pricing.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { AdapterRegistry, ImageAdapter, ImageRelayReading } from '../providers/provider-adapter.ts';
import type { ProviderRow } from '../catalog/catalog.ts';
import type { GenerationAttempt, GenerationRoute } from '../domain/generation-route.ts';
import { metered, startIteration } from './metered.ts';
import type { RequestContext } from '../domain/request-context.ts';
import { dispatchWithFallback, type Resilience } from './upstream-dispatch.ts';
import type { WorkTracker } from './work-tracker.ts';

export interface ImageRelayDependencies {
  catalog: Catalog;
  adapters: AdapterRegistry;
  providers: ReadonlyMap<string, ProviderConfig>;
  ledger: CreditLedger;
  work: WorkTracker;
  resilience: Resilience;
}

export interface ImageRelayInput {
  modelId: string;
  /** The alpha images body as the client sent it; `model` is rewritten to the upstream's. */
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

/**
 * Alpha images to an upstream of the same protocol: held at the estimate (`n` images at the quality
 * asked), relayed as it arrives, JSON or SSE, and charged for the images the answer carried, read from a
 * copy of it. The hold lives in this process's credit lease like any quick request's.
 */
export class ImageRelay {
  constructor(private readonly dependencies: ImageRelayDependencies) {}

  /** The row that serves `modelId` by pass-through, if its winning image row speaks the images protocol natively. */
  passThroughRow(modelId: string): { row: ProviderRow; adapter: ImageAdapter } | undefined {
    const model = this.dependencies.catalog.resolve(modelId);
    for (const row of model.rows) {
      const adapter = this.dependencies.adapters.get(row.protocol)?.images;
      if (adapter) return adapter.relay && adapter.relayMeter ? { row, adapter } : undefined;
    }
    return undefined;
  }

  async start(
    caller: RequestContext,
    input: ImageRelayInput,
    route: { row: ProviderRow; adapter: ImageAdapter },
  ): Promise<RelayedImages> {
    const startedAt = Date.now();
    const { catalog, ledger, providers, work } = this.dependencies;
    const model = catalog.resolve(input.modelId);
    const snapshot = imagePriceSnapshot(model);
    const target = providers.get(route.row.providerId)!;
    const reservation = await ledger.reserve({
      accountId: caller.accountId,
      apiKeyId: caller.apiKeyId,
      amountNanos: imageHoldNanos(snapshot, { numberOfImages: input.numberOfImages, quality: input.quality }),
      modelId: model.modelId,
      requestLog: caller.log,
    });
    reservation.whenEnded(work.begin());
    const request = {
      surface: caller.surface,
      endpoint: caller.endpoint,
      model: input.modelId,
      n: input.numberOfImages,
      quality: input.quality,
      stream: input.streaming,
    };
    const attempts: GenerationAttempt[] = [];
    const generationRoute: GenerationRoute = {
      providerId: route.row.providerId,
      upstreamModel: route.row.upstreamModel,
      fallbacks: [],
      ...(caller.requestId ? { requestId: caller.requestId } : {}),
    };
    let exchange;
    try {
      ({ value: exchange } = await dispatchWithFallback({
        modelId: model.modelId,
        accountId: caller.accountId,
        rows: [route.row],
        resilience: this.dependencies.resilience,
        mayContinue: () => true,
        attempt: (row) => route.adapter.relay!({ upstreamModel: row.upstreamModel, body: input.body }, { target }),
        attempts,
      }));
    } catch (error) {
      // The row skipped with its breaker open: nothing went upstream, so nothing is recorded.
      if (attempts.every((attempt) => attempt.outcome === 'skipped'))
        await reservation.release().catch(() => undefined);
      else
        reservation.settleInBackground({
          costNanos: 0n,
          modality: 'image',
          status: 'failed',
          request,
          route: { ...generationRoute, fallbacks: attempts.slice(0, -1) },
        });
      throw error;
    }
    generationRoute.fallbacks = attempts;
    generationRoute.firstByteMs = Date.now() - startedAt;
    const meter = route.adapter.relayMeter!(input.streaming, target.maxEventCharacters);
    const body = metered(exchange.body, {
      observe: (chunk) => meter.push(chunk),
      settle: ({ failed, consumerLeft }) => {
        const reading: ImageRelayReading = safeReading(meter);
        const costNanos = imageCostNanos(snapshot, reading.images, reading.quality ?? input.quality);
        const status = failed || !reading.complete ? 'failed' : consumerLeft ? 'aborted' : 'succeeded';
        const usage = { ...reading.usage, generatedImages: reading.images, usdCost: nanosToUsd(costNanos) };
        reservation.settleInBackground({
          costNanos,
          modality: 'image',
          status,
          request,
          usage,
          route: generationRoute,
        });
      },
    });
    return { status: exchange.status, contentType: exchange.contentType, body: await startIteration(body) };
  }
}

function safeReading(meter: { reading(): ImageRelayReading }): ImageRelayReading {
  try {
    return meter.reading();
  } catch {
    return { images: 0, complete: false, usage: {} };
  }
}
