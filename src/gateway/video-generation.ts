import {
  durationCostNanos,
  secondNanos,
  videoPriceSnapshot,
  type DurationPriceSnapshot,
} from '../billing/duration-pricing.ts';
import type { Catalog, CatalogModel } from '../catalog/catalog.ts';
import { GatewayError } from '../domain/errors.ts';
import type { MediaLinks } from '../jobs/media-links.ts';
import type { StoredVideoResult } from '../domain/media-job-results.ts';
import type { MediaJobRow, MediaJobsRepository, ReadJobRow } from '../storage/media-jobs-repository.ts';
import type { JobSubmission } from './job-submission.ts';
import type { GenerationPipeline, JobPlan, JobRecipe } from './generation-pipeline.ts';
import { ReferenceUrls } from './image-request-check.ts';
import { mediaRows } from './media-rows.ts';
import { recordedContent } from './recorded-content.ts';
import type { Caller, RequestContext } from '../domain/request-context.ts';
import { checkVideoRequest, defaultResolution, heldSeconds, type NativeVideoInput } from './video-request-check.ts';

export interface VideoGenerationDependencies {
  catalog: Catalog;
  pipeline: GenerationPipeline;
  submission: JobSubmission;
  jobs: Pick<MediaJobsRepository, 'cancelUnsent'>;
  links: MediaLinks;
  clock?: () => Date;
}

export type VideoTaskStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** The spec's VideoTask. */
export interface VideoTaskView {
  taskId: string;
  generationId: string;
  providerId: string;
  status: VideoTaskStatus;
  model: string;
  content: unknown[];
  videoUrl?: string;
  downloadUrl?: string;
  assetId?: string;
  /** Media retention deleted the video: no link or asset id is left of it. */
  assetExpired?: true;
  usage?: {
    completionTokens: number;
    totalTokens: number;
    usdCost: number;
    durationSeconds: number;
    providerUsage: Readonly<Record<string, unknown>>;
  };
  error?: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The recipe for video jobs: every rule of the request and the adapter's own refusals checked against the
 * model's best video row, held for the asked seconds at the asked resolution's price.
 */
class VideoJobRecipe implements JobRecipe<NativeVideoInput> {
  constructor(private readonly dependencies: VideoGenerationDependencies) {}

  modelId(input: NativeVideoInput): string {
    return input.modelId;
  }

  async plan(model: CatalogModel, input: NativeVideoInput, caller: Caller): Promise<JobPlan> {
    const rows = mediaRows(this.dependencies.pipeline.rowSources, model, 'video');
    const { row, adapter } = rows[0]!;
    const prices = videoPriceSnapshot(model);
    const referenceUrls = new ReferenceUrls();
    const request = await checkVideoRequest(model.modelId, input, {
      row,
      references: {
        assets: (named) => this.dependencies.submission.ownedAssets(caller, named),
        urls: referenceUrls,
      },
    });
    adapter.check(request, model.modelId);
    const resolution = request.resolution ?? defaultResolution(row);
    const priceSnapshot: DurationPriceSnapshot = resolution === undefined ? prices : { ...prices, resolution };
    const perSecond = secondNanos(priceSnapshot, resolution, model.modelId);
    const { content: _content, ...parameters } = request;
    return {
      rows,
      holdNanos: durationCostNanos(perSecond, heldSeconds(request, row)),
      job: {
        kind: 'video',
        request,
        recordedRequest: {
          operation: 'video-generation',
          model: input.modelId,
          content: recordedContent(input.content),
          ...parameters,
        },
        priceSnapshot,
      },
      dropped: [],
      referenceUrls,
    };
  }
}

/**
 * Native video generation as task jobs: check -> estimate (the hold: the asked seconds at the asked
 * resolution's price) -> submit (hold and job in one transaction) -> a worker creates and follows the
 * upstream task -> poll. The gateway's generation id is the task id: provider task ids never leave it.
 */
export class VideoGeneration {
  private readonly clock: () => Date;
  private readonly recipe: VideoJobRecipe;

  constructor(private readonly dependencies: VideoGenerationDependencies) {
    this.clock = dependencies.clock ?? (() => new Date());
    this.recipe = new VideoJobRecipe(dependencies);
  }

  /** A submission's model, checked as soon as it is read: the same refusal as on submission when no video model has that id. */
  checkModel(modelId: string): void {
    const model = this.dependencies.catalog.resolve(modelId);
    if (!model.outputModalities.includes('video'))
      throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${modelId}" does not generate video`);
  }

  estimate(caller: Caller, input: NativeVideoInput): Promise<bigint> {
    return this.dependencies.pipeline.estimate(caller, this.recipe, input);
  }

  async submit(caller: RequestContext, input: NativeVideoInput): Promise<MediaJobRow> {
    return (await this.dependencies.pipeline.enqueue(caller, this.recipe, input)).job;
  }

  find(caller: Caller, taskId: string): Promise<ReadJobRow> {
    return this.dependencies.submission.find(caller, taskId, 'video');
  }

  /** Cancels a task that has not been sent to its provider: the hold is released and the task ends `cancelled`. */
  async cancel(caller: Caller, taskId: string): Promise<ReadJobRow> {
    const cancelled = await this.dependencies.jobs.cancelUnsent(
      { id: taskId, accountId: caller.accountId, kind: 'video' },
      this.clock(),
    );
    if (cancelled) return cancelled;
    const job = await this.find(caller, taskId);
    throw new GatewayError(
      'GW_CONFLICT',
      `video task "${taskId}" is ${statusOf(job)}: only a queued task can be cancelled`,
    );
  }

  /** The archived output `index` of a succeeded task (a task has one): its object, and a signed link to it. */
  async output(job: ReadJobRow, index: number, baseUrl: string): Promise<{ objectKey: string; link: string }> {
    const result = videoResult(job);
    if (job.state !== 'succeeded' || !result)
      throw new GatewayError(
        'GW_CONFLICT',
        `video "${job.id}" is ${statusOf(job)}: its content exists once it is completed`,
      );
    if (index !== 0)
      throw new GatewayError('GW_NOT_FOUND', `video "${job.id}" has no output ${index} (it has one, index 0)`);
    if (!(await this.dependencies.submission.keptAssetIds(job.id)).has(result.assetId))
      throw new GatewayError(
        'GW_NOT_FOUND',
        `video "${job.id}" is no longer archived (deleted after media.retentionDays)`,
      );
    return {
      objectKey: result.objectKey,
      link: await this.dependencies.links.link(result.objectKey, this.clock(), baseUrl),
    };
  }

  async view(job: ReadJobRow, baseUrl: string): Promise<VideoTaskView> {
    const view: VideoTaskView = {
      taskId: job.id,
      generationId: job.id,
      providerId: job.providerId,
      status: statusOf(job),
      model: job.model,
      // A task whose stored request this release cannot read shows no content: it fails with the reason.
      content: ('problem' in job ? undefined : job.recordedRequest.content) ?? [],
      createdAt: job.createdAt.toISOString(),
      updatedAt: job.updatedAt.toISOString(),
    };
    const result = videoResult(job);
    if (job.state === 'succeeded' && result) {
      if ((await this.dependencies.submission.keptAssetIds(job.id)).has(result.assetId)) {
        const link = await this.dependencies.links.link(result.objectKey, this.clock(), baseUrl);
        Object.assign(view, { videoUrl: link, downloadUrl: link, assetId: result.assetId });
      } else view.assetExpired = true;
      view.usage = result.usage;
    }
    if (job.state === 'failed' || job.state === 'cancelled')
      view.error = job.error ?? `the video generation ${job.state}`;
    return view;
  }
}

/** A succeeded task's stored result; null before, or for a task whose stored JSON this release cannot read. */
function videoResult(job: ReadJobRow): StoredVideoResult | null {
  return 'problem' in job || job.kind !== 'video' ? null : job.result;
}

/**
 * The spec's task status of a job: `queued` until something was sent upstream (a job waiting for a retry
 * included), `running` while the provider works on it.
 */
function statusOf(job: ReadJobRow): VideoTaskStatus {
  if (job.state === 'processing') return job.phase === null ? 'queued' : 'running';
  return job.state;
}
