import { imageHoldNanos, imagePriceSnapshot } from '../billing/image-pricing.ts';
import type { CatalogModel } from '../catalog/catalog.ts';
import { GatewayError } from '../domain/errors.ts';
import type { MediaLinks } from '../jobs/media-links.ts';
import type { ArchivedImage, StoredImageResult } from '../jobs/image-result.ts';
import { keptUpstreamAnswer, type ReadJobRow } from '../storage/media-jobs-repository.ts';
import { relayedErrorOf } from '../domain/upstream-failure.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import {
  checkImageRequest,
  ReferenceUrls,
  type NativeImageInput,
  type ReferenceChecks,
} from './image-request-check.ts';
import type { StoredImageRequest } from '../domain/image.ts';
import type { RecordedImageRequest } from '../domain/media-job.ts';
import type { JobSubmission, JobWait } from './job-submission.ts';
import type { GenerationPipeline, JobPlan, JobRecipe } from './generation-pipeline.ts';
import { mediaRows } from './media-rows.ts';
import { recordedContent } from './recorded-content.ts';
import type { Caller, RequestContext } from '../domain/request-context.ts';

export interface ImageGenerationDependencies {
  pipeline: GenerationPipeline;
  submission: JobSubmission;
  links: MediaLinks;
  store: Pick<ObjectStore, 'get'>;
  clock?: () => Date;
}

/** The spec's Async image job. */
export interface ImageJobView {
  generationId: string;
  status: 'queued' | 'processing' | 'succeeded' | 'failed';
  result?: ImageResultView;
  error?: string;
}

/** An output as the job shows it: its link and asset id while it is kept, `assetExpired` once retention took it. */
export type ImageView = Omit<ArchivedImage, 'objectKey' | 'mediaType' | 'providerUrl' | 'assetId'> & {
  url?: string;
} & ({ downloadUrl: string; assetId: string } | { assetExpired: true });

export interface ImageResultView {
  images: ImageView[];
  usage: StoredImageResult['usage'];
}

/**
 * The recipe for image jobs: every rule of the request checked against the model's best image row, held for
 * every image asked at the quality asked. `lenient` drops fields the model does not take rather than refusing.
 */
class ImageJobRecipe implements JobRecipe<NativeImageInput> {
  constructor(
    private readonly dependencies: ImageGenerationDependencies,
    private readonly lenient: boolean,
  ) {}

  modelId(input: NativeImageInput): string {
    return input.modelId;
  }

  async plan(model: CatalogModel, input: NativeImageInput, caller: Caller): Promise<JobPlan> {
    const rows = mediaRows(this.dependencies.pipeline.rowSources, model, 'images');
    const { row, adapter } = rows[0]!;
    const priceSnapshot = imagePriceSnapshot(model);
    const references: ReferenceChecks = {
      assets: (named) => this.dependencies.submission.ownedAssets(caller, named),
      urls: new ReferenceUrls(),
    };
    const { request, dropped } = await checkImageRequest(model, input, {
      row,
      adapter,
      references,
      lenient: this.lenient,
    });
    return {
      rows,
      holdNanos: imageHoldNanos(priceSnapshot, request),
      job: { kind: 'image', request, recordedRequest: recordedRequest(input, request), priceSnapshot },
      dropped,
      referenceUrls: references.urls,
    };
  }
}

/**
 * Native image generation as jobs: check -> estimate (the hold) -> submit (hold and job in one transaction)
 * -> workers run it -> poll. The estimate endpoint runs the same code as submission up to the hold.
 */
export class ImageGeneration {
  private readonly clock: () => Date;
  private readonly strict: ImageJobRecipe;
  private readonly lenient: ImageJobRecipe;

  constructor(private readonly dependencies: ImageGenerationDependencies) {
    this.clock = dependencies.clock ?? (() => new Date());
    this.strict = new ImageJobRecipe(dependencies, false);
    this.lenient = new ImageJobRecipe(dependencies, true);
  }

  estimate(caller: Caller, input: NativeImageInput): Promise<bigint> {
    return this.dependencies.pipeline.estimate(caller, this.strict, input);
  }

  /** `lenient`: fields the model does not take are dropped (and named in `droppedParameters`) rather than refused. */
  async submit(
    caller: RequestContext,
    input: NativeImageInput,
    lenient = false,
  ): Promise<{ generationId: string; status: 'queued'; droppedParameters: string[] }> {
    const { job, dropped } = await this.dependencies.pipeline.enqueue(
      caller,
      lenient ? this.lenient : this.strict,
      input,
    );
    return { generationId: job.id, status: 'queued', droppedParameters: dropped };
  }

  /** The caller's image job; 404 for an unknown id or another account's. */
  find(caller: Caller, generationId: string): Promise<ReadJobRow> {
    return this.dependencies.submission.find(caller, generationId, 'image');
  }

  /** Waits up to `waitMs` for the job to end; answers it as it is then. */
  waitFor(caller: Caller, generationId: string, wait: JobWait): Promise<ReadJobRow> {
    return this.dependencies.submission.waitFor(caller, { generationId, kind: 'image' }, wait);
  }

  async view(job: ReadJobRow, baseUrl: string): Promise<ImageJobView> {
    // Image jobs are not cancelled; a cancelled one would read as what it is to the spec's machine: not made.
    const status = job.state === 'cancelled' ? 'failed' : job.state;
    const view: ImageJobView = { generationId: job.id, status };
    const result = imageResult(job);
    if (job.state === 'succeeded' && result)
      view.result = await this.resultView(result, {
        baseUrl,
        kept: await this.dependencies.submission.keptAssetIds(job.id),
      });
    if (job.state === 'failed') view.error = job.error ?? 'the image generation failed';
    return view;
  }

  /** `kept`: the ids of the job's outputs still within their retention; the others show as expired. */
  private async resultView(
    result: StoredImageResult,
    { baseUrl, kept }: { baseUrl: string; kept: ReadonlySet<string> },
  ): Promise<ImageResultView> {
    const now = this.clock();
    const images = await Promise.all(
      // Past its retention no link is left of an output: the provider's own, which expires long before, neither.
      result.images.map(async ({ objectKey, mediaType: _mediaType, providerUrl, assetId, ...image }) => ({
        ...(kept.has(assetId)
          ? {
              ...(providerUrl ? { url: providerUrl } : {}),
              downloadUrl: await this.dependencies.links.link(objectKey, now, baseUrl),
              assetId,
            }
          : { assetExpired: true as const }),
        ...image,
      })),
    );
    return { images, usage: result.usage };
  }

  /**
   * What a request that waited for a job that made no images answers: the provider's own error answer, relayed as
   * the relay path relays one (spec, Errors 2), when the job failed on one; else 502 GW_GENERATION_FAILED with
   * `message`. A failure without a provider's answer (unreachable, cut at its deadline, outputs that could not be
   * archived, an answer that broke the protocol) is the gateway's to tell.
   */
  failureOf(job: ReadJobRow, message: string): Error {
    const answer = job.state === 'failed' ? keptUpstreamAnswer(job) : undefined;
    return answer ? relayedErrorOf(answer) : new GatewayError('GW_GENERATION_FAILED', message);
  }

  /** The bytes of a succeeded job's `index`th output, from the archive (alpha answers asked for base64). */
  async outputBytes(job: ReadJobRow, index: number): Promise<Buffer> {
    const image = imageResult(job)?.images[index];
    const stored = image ? await this.dependencies.store.get(image.objectKey) : undefined;
    if (!stored) throw outputNoLongerArchived();
    return stored.bytes;
  }
}

/** An output asked for after media retention deleted it. */
export const outputNoLongerArchived = () =>
  new GatewayError(
    'GW_NOT_FOUND',
    'an output of this generation is no longer archived (deleted after media.retentionDays)',
  );

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
