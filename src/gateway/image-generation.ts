import { imageHoldNanos, imagePriceSnapshot } from '../billing/image-pricing.ts';
import type { CatalogModel, ProviderRow } from '../catalog/catalog.ts';
import type { Catalog } from '../catalog/catalog.ts';
import { GatewayError } from '../domain/errors.ts';
import type { MediaLinks } from '../jobs/media-links.ts';
import type { ArchivedImage, StoredImageResult } from '../jobs/image-result.ts';
import type { AdapterRegistry } from '../providers/provider-adapter.ts';
import type { ReadJobRow } from '../storage/media-jobs-repository.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { checkImageRequest, type NativeImageInput, type ReferenceChecks } from './image-request-check.ts';
import type { StoredImageRequest } from '../domain/image.ts';
import type { RecordedImageRequest } from '../domain/media-job.ts';
import type { JobSubmission } from './job-submission.ts';
import { mediaRoute } from './media-route.ts';
import { recordedContent } from './recorded-content.ts';
import type { Caller } from './text-generation.ts';

export interface ImageGenerationDependencies {
  catalog: Catalog;
  adapters: AdapterRegistry;
  submission: JobSubmission;
  links: MediaLinks;
  store: Pick<ObjectStore, 'get'>;
  /** Reference URLs checked before the hold: `RemoteMediaFetcher.check`, throwing `RemoteMediaError` for a URL that is refused. */
  checkReferenceUrl: (url: string) => Promise<void>;
  clock?: () => Date;
}

/** The spec's Async image job. */
export interface ImageJobView {
  generationId: string;
  status: 'queued' | 'processing' | 'succeeded' | 'failed';
  result?: ImageResultView;
  error?: string;
}

export interface ImageResultView {
  images: Array<Omit<ArchivedImage, 'objectKey' | 'mediaType' | 'providerUrl'> & { url?: string; downloadUrl: string }>;
  usage: StoredImageResult['usage'];
}

interface PreparedImageRequest {
  model: CatalogModel;
  row: ProviderRow;
  request: StoredImageRequest;
  dropped: string[];
  holdNanos: bigint;
  priceSnapshot: ReturnType<typeof imagePriceSnapshot>;
}

/**
 * Native image generation as jobs: check -> estimate (the hold) -> submit (hold and job in one transaction)
 * -> workers run it -> poll. The estimate endpoint runs the same code as submission up to the hold.
 */
export class ImageGeneration {
  private readonly clock: () => Date;

  constructor(private readonly dependencies: ImageGenerationDependencies) {
    this.clock = dependencies.clock ?? (() => new Date());
  }

  async estimate(caller: Caller, input: NativeImageInput): Promise<bigint> {
    return (await this.prepare(caller, input, false)).holdNanos;
  }

  /** `lenient`: fields the model does not take are dropped (and named in `droppedParameters`) rather than refused. */
  async submit(
    caller: Caller,
    input: NativeImageInput,
    lenient = false,
  ): Promise<{ generationId: string; status: 'queued'; droppedParameters: string[] }> {
    const prepared = await this.prepare(caller, input, lenient);
    const generationId = await this.dependencies.submission.submit(caller, {
      kind: 'image',
      modelId: prepared.model.modelId,
      row: prepared.row,
      request: prepared.request,
      recordedRequest: recordedRequest(input, prepared.request),
      priceSnapshot: prepared.priceSnapshot,
      holdNanos: prepared.holdNanos,
    });
    return { generationId, status: 'queued', droppedParameters: prepared.dropped };
  }

  /** The caller's image job; 404 for an unknown id or another account's. */
  find(caller: Caller, generationId: string): Promise<ReadJobRow> {
    return this.dependencies.submission.find(caller, generationId, 'image');
  }

  /** Waits up to `waitMs` for the job to end; answers it as it is then. */
  waitFor(caller: Caller, generationId: string, waitMs: number, signal?: AbortSignal): Promise<ReadJobRow> {
    return this.dependencies.submission.waitFor(caller, generationId, 'image', waitMs, signal);
  }

  async view(job: ReadJobRow, baseUrl: string): Promise<ImageJobView> {
    // Image jobs are not cancelled; a cancelled one would read as what it is to the spec's machine: not made.
    const status = job.state === 'cancelled' ? 'failed' : job.state;
    const view: ImageJobView = { generationId: job.id, status };
    const result = imageResult(job);
    if (job.state === 'succeeded' && result) view.result = await this.resultView(result, baseUrl);
    if (job.state === 'failed') view.error = job.error ?? 'the image generation failed';
    return view;
  }

  async resultView(result: StoredImageResult, baseUrl: string): Promise<ImageResultView> {
    const now = this.clock();
    const images = await Promise.all(
      result.images.map(async ({ objectKey, mediaType: _mediaType, providerUrl, ...image }) => ({
        ...(providerUrl ? { url: providerUrl } : {}),
        downloadUrl: await this.dependencies.links.link(objectKey, now, baseUrl),
        ...image,
      })),
    );
    return { images, usage: result.usage };
  }

  /** Everything up to the hold: the model, every rule of the request, and the amount. */
  private async prepare(caller: Caller, input: NativeImageInput, lenient: boolean): Promise<PreparedImageRequest> {
    const model = this.dependencies.catalog.resolve(input.modelId);
    const { row, adapter } = mediaRoute(this.dependencies.adapters, model, 'images', 'image');
    const priceSnapshot = imagePriceSnapshot(model);
    const { request, dropped } = await checkImageRequest(model, row, adapter, input, this.references(caller), lenient);
    return { model, row, request, dropped, priceSnapshot, holdNanos: imageHoldNanos(priceSnapshot, request) };
  }

  private references(caller: Caller): ReferenceChecks {
    return {
      findAsset: (assetId, where) => this.dependencies.submission.ownedAsset(caller, assetId, where),
      checkUrl: this.dependencies.checkReferenceUrl,
    };
  }

  /** The bytes of a succeeded job's `index`th output, from the archive (alpha answers asked for base64). */
  async outputBytes(job: ReadJobRow, index: number): Promise<Buffer> {
    const image = imageResult(job)?.images[index];
    const stored = image ? await this.dependencies.store.get(image.objectKey) : undefined;
    if (!stored) throw new GatewayError('GW_NOT_FOUND', 'an output of this generation is no longer archived');
    return stored.bytes;
  }
}

/** A succeeded job's stored result; null before, or for a job whose stored JSON this release cannot read. */
function imageResult(job: ReadJobRow): StoredImageResult | null {
  return 'problem' in job || job.kind !== 'image' ? null : job.result;
}

/** What the usage record keeps of the request: its fields, with base64 and long prompts cut short. */
function recordedRequest(input: NativeImageInput, request: StoredImageRequest): RecordedImageRequest {
  const content = recordedContent(input.content);
  const { images: _images, prompt: _prompt, ...parameters } = request;
  return { operation: 'image-generation', model: input.modelId, content, ...parameters };
}
