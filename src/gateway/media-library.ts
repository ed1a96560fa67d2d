import { type ResultOutput, recordedPrompt, requestedSpeech, resultOutputs } from '../domain/media-job.ts';
import type { MediaKind } from '../domain/usage-modalities.ts';
import type { MediaLinks } from '../jobs/media-links.ts';
import type { ArchivedJobRow, MediaAssetRow, MediaJobsRepository } from '../storage/media-jobs-repository.ts';

/**
 * One archived output of a job, with a fresh signed link (links expire, so they are made on every read), and
 * what its job's result says of it (a layer's place, a duration, a transcript).
 */
export interface MediaOutput extends Omit<ResultOutput, 'assetId'> {
  assetId: string;
  mediaType: string;
  bytes: number;
  downloadUrl: string;
}

/** A succeeded media job as the account's media view lists it. */
export interface MediaItem {
  generationId: string;
  kind: MediaKind;
  model: string;
  createdAt: string;
  /** The text of the request's prompt parts as recorded (long prompts are cut short there). */
  prompt?: string;
  outputs: MediaOutput[];
}

export interface MediaPage {
  results: MediaItem[];
  total: number;
  offset: number;
  limit: number;
}

export interface MediaLibraryDependencies {
  jobs: Pick<MediaJobsRepository, 'listArchived'>;
  links: MediaLinks;
  clock?: () => Date;
}

/**
 * The account's generated media that is still archived: image, video and audio jobs that succeeded, each
 * output with its media type and a signed download link. Outputs come in the order the job made them;
 * outputs past their retention are no longer listed.
 */
export class MediaLibrary {
  private readonly clock: () => Date;

  constructor(private readonly dependencies: MediaLibraryDependencies) {
    this.clock = dependencies.clock ?? (() => new Date());
  }

  async page(
    accountId: string,
    query: { kind?: MediaKind; offset: number; limit: number },
    baseUrl: string,
  ): Promise<MediaPage> {
    const now = this.clock();
    const { jobs, assets, total } = await this.dependencies.jobs.listArchived(
      accountId,
      { kind: query.kind, now },
      query,
    );
    const assetsByJob = new Map<string, MediaAssetRow[]>();
    for (const asset of assets) assetsByJob.set(asset.jobId, [...(assetsByJob.get(asset.jobId) ?? []), asset]);
    const results = await Promise.all(
      jobs.map((job) => this.item(job, assetsByJob.get(job.id) ?? [], { now, baseUrl })),
    );
    return { results, total, offset: query.offset, limit: query.limit };
  }

  private async item(
    job: ArchivedJobRow,
    assets: MediaAssetRow[],
    { now, baseUrl }: { now: Date; baseUrl: string },
  ): Promise<MediaItem> {
    const described = resultOutputs(job.kind, job.result);
    const order = described.map((output) => output.assetId);
    const position = (asset: MediaAssetRow) => {
      const index = order.indexOf(asset.id);
      return index === -1 ? order.length : index;
    };
    const ordered = [...assets].sort((a, b) => position(a) - position(b) || a.objectKey.localeCompare(b.objectKey));
    const outputs = await Promise.all(
      ordered.map(async (asset) => ({
        ...described.find((output) => output.assetId === asset.id),
        assetId: asset.id,
        mediaType: asset.mediaType,
        bytes: asset.bytes,
        downloadUrl: await this.dependencies.links.link(asset.objectKey, now, baseUrl),
      })),
    );
    const item: MediaItem = {
      generationId: job.id,
      kind: job.kind,
      model: job.model,
      createdAt: job.createdAt.toISOString(),
      outputs,
    };
    // An audio job's request holds its text as a field of its own, not as content parts.
    const prompt =
      recordedPrompt(job.recordedRequest) ?? (job.kind === 'audio' ? requestedSpeech(job.request) : undefined);
    if (prompt !== undefined) item.prompt = prompt;
    return item;
  }
}
