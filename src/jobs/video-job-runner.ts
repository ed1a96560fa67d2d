import { setTimeout as sleep } from 'node:timers/promises';
import { durationCostNanos, pricesResolution, secondNanos } from '../billing/duration-pricing.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import { GatewayError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { RowRef } from '../domain/provider-rows.ts';
import type { Secret } from '../domain/secret.ts';
import { UpstreamHttpError } from '../domain/upstream-failure.ts';
import type {
  StoredVideoMediaSource,
  StoredVideoRequest,
  VideoGenerationRequest,
  VideoMediaSource,
  VideoTaskReport,
} from '../domain/video.ts';
import type { StoredVideo } from '../domain/media-job-results.ts';
import { isoVideoFacts } from '../media/media-duration.ts';
import { sniffMediaType } from '../media/media-type.ts';
import type { FetchedMedia } from '../media/remote-media.ts';
import type { AdapterRegistry, CallOptions, VideoAdapter } from '../providers/provider-adapter.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { JobContext, JobOutcome, JobRunner, MediaJobOf } from './job-runner.ts';
import { succeeded, UnsendableJob } from './job-runner.ts';
import { outputKey } from './output-keys.ts';
import { upstreamFailure } from './upstream-errors.ts';

export interface VideoJobRunnerOptions {
  adapters: AdapterRegistry;
  providers: ReadonlyMap<string, ProviderConfig>;
  store: ObjectStore;
  /**
   * Provider output URLs, downloaded within the archive's size and time limits (and by the job's deadline,
   * `signal`), with the provider's credentials where it needs them.
   */
  downloadOutput: (
    url: string,
    credentials?: Readonly<Record<string, Secret>>,
    signal?: AbortSignal,
  ) => Promise<FetchedMedia>;
  retentionMs: number | undefined;
  /** How often the upstream task is read while it runs. */
  pollMs: number;
}

type VideoJob = MediaJobOf<'video'>;

const noLongerConfigured = 'the provider of this job is no longer configured';

/** Reads of a task that fail one after another before the job gives up on it (an unreachable or garbled provider). */
const maxPollFailures = 20;
/** Longest the cancel of a task past the job's deadline may take (its own clock: the deadline's signal has fired). */
const cancelTimeoutMs = 1000;

/**
 * Runs a video job as the upstream's task: created once (the job is marked sent first, and the task id
 * stored as soon as it is known), then read every `pollMs` until it ends. A job taken over after its
 * process died resumes reading the stored task; one that died between sending and storing the id fails
 * rather than creating a second task. The video is archived and recorded before settlement, which charges
 * the delivered seconds at the price of the delivered resolution.
 */
export class VideoJobRunner implements JobRunner<'video'> {
  constructor(private readonly options: VideoJobRunnerOptions) {}

  async run(job: VideoJob, context: JobContext): Promise<JobOutcome> {
    if (job.phase === 'generated' && job.upstreamResult) return this.settled(job, job.upstreamResult);
    let task: { id: string; adapter: VideoAdapter; target: ProviderConfig };
    if (job.upstreamTaskId) {
      // The task was created on the row the job is on: it is followed there, and never created again.
      const provider = this.providerOf(job);
      if (!provider) return { kind: 'failed', error: noLongerConfigured, costNanos: 0n };
      task = { id: job.upstreamTaskId, ...provider };
    } else {
      if (job.phase === 'sent') {
        return {
          kind: 'failed',
          error:
            'the gateway process creating this task stopped before the provider named it; the task was not created again',
          costNanos: 0n,
        };
      }
      const sent = await context.dispatch(async (row, markSent, key) => {
        const found = this.providerOf(row);
        // The task is polled with the key that created it, while this process runs it.
        const provider = found && key ? { ...found, target: { ...found.target, ...key } } : found;
        if (!provider) throw new UnsendableJob(noLongerConfigured);
        let request: VideoGenerationRequest;
        try {
          request = await this.inputs(job.request);
        } catch (error) {
          throw new UnsendableJob(error instanceof Error ? error.message : String(error));
        }
        await markSent();
        const options = { target: provider.target, signal: context.deadline };
        return { id: await provider.adapter.createTask(request, row.upstreamModel, options), ...provider };
      });
      if ('outcome' in sent) return sent.outcome;
      task = sent.value;
      if (!(await context.recordTask(task.id))) return { kind: 'lost' };
    }
    const { adapter, target } = task;
    const options: CallOptions = { target, signal: context.deadline };
    const report = await this.awaitEnd(job, { adapter, taskId: task.id, options }, context);
    if (report === 'lost') return { kind: 'lost' };
    if ('kind' in report) return report;
    if (report.state === 'cancelled')
      return { kind: 'cancelled', error: report.error ?? 'the provider cancelled the task' };
    if (report.state !== 'succeeded')
      return { kind: 'failed', error: report.error ?? `the task ${report.state}`, costNanos: 0n };
    let stored: StoredVideo;
    try {
      stored = await this.archive(job, report, {
        credentials: report.videoNeedsCredentials && onOriginOf(report, target) ? credentialsFor(target) : undefined,
        deadline: context.deadline,
      });
    } catch (error) {
      return {
        kind: 'failed',
        error: `the video could not be archived: ${error instanceof Error ? error.message : String(error)}`,
        costNanos: 0n,
      };
    }
    if (!(await context.recordGenerated(stored))) return { kind: 'lost' };
    return this.settled(job, stored);
  }

  /** The video family and settings of a row's provider, while it is configured and active. */
  private providerOf(row: RowRef): { adapter: VideoAdapter; target: ProviderConfig } | undefined {
    const target = this.options.providers.get(row.providerId);
    const adapter = target ? this.options.adapters.get(target.protocol)?.video : undefined;
    return adapter && target?.active ? { adapter, target } : undefined;
  }

  /** Reads the task until it ends; the job's failure when the task cannot be followed any more. */
  private async awaitEnd(
    job: VideoJob,
    { adapter, taskId, options }: { adapter: VideoAdapter; taskId: string; options: CallOptions },
    context: JobContext,
  ): Promise<VideoTaskReport | 'lost' | Extract<JobOutcome, { kind: 'failed' }>> {
    let failures = 0;
    for (;;) {
      if (context.lost()) return 'lost';
      if (context.deadline.aborted || Date.now() >= job.deadlineAt.getTime()) {
        await adapter
          .cancel(taskId, { ...options, signal: AbortSignal.timeout(cancelTimeoutMs) })
          .catch(() => undefined);
        return { kind: 'failed', error: 'the task did not finish within the job time limit', costNanos: 0n };
      }
      try {
        const report = await adapter.poll(taskId, options);
        failures = 0;
        if (report.state !== 'queued' && report.state !== 'running') return report;
      } catch (error) {
        failures += 1;
        // A task that is not there (or no longer ours to read) will not come back; anything else may pass.
        if (error instanceof UpstreamHttpError && error.status < 500 && error.status !== 408 && error.status !== 429)
          return upstreamFailure(error);
        if (failures >= maxPollFailures)
          return upstreamFailure(error, `the task could not be read ${failures} times in a row: `);
      }
      // Woken by the deadline, which then cancels the task.
      await sleep(this.options.pollMs, undefined, { signal: context.deadline }).catch(() => undefined);
    }
  }

  /** The job's media as the adapter takes them: archived assets read back as bytes, in the request's order. */
  private async inputs(request: StoredVideoRequest): Promise<VideoGenerationRequest> {
    const source = async (stored: StoredVideoMediaSource, where: string): Promise<VideoMediaSource> => {
      if (stored.kind !== 'asset') return stored;
      const object = await this.options.store.get(stored.objectKey);
      if (!object) throw new GatewayError('GW_NOT_FOUND', `${where} is no longer archived`);
      return { kind: 'inline', mediaType: stored.mediaType, data: object.bytes.toString('base64') };
    };
    const content = await Promise.all(
      request.content.map(async (item, index) =>
        item.type === 'text' ? item : { ...item, source: await source(item.source, `content[${index}]`) },
      ),
    );
    return { ...request, content };
  }

  private async archive(
    job: VideoJob,
    report: VideoTaskReport,
    { credentials, deadline }: { credentials: Readonly<Record<string, Secret>> | undefined; deadline: AbortSignal },
  ): Promise<StoredVideo> {
    const video = report.video;
    if (!video) throw new Error('the provider reported success without a video');
    const bytes =
      video.kind === 'url'
        ? (await this.options.downloadOutput(video.url, credentials, deadline)).bytes
        : Buffer.from(video.data, 'base64');
    const mediaType = sniffMediaType(bytes) ?? (video.kind === 'inline' ? video.mediaType : 'application/octet-stream');
    if (!mediaType.startsWith('video/')) throw new Error('the provider output is not a video');
    const measuredSeconds = (await isoVideoFacts(bytes))?.seconds;
    const seconds = measuredSeconds ?? report.durationSeconds;
    if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0)
      throw new Error('the video has no readable duration');
    const objectKey = outputKey(job, `video.${mediaType === 'video/quicktime' ? 'mov' : 'mp4'}`);
    await this.options.store.put(objectKey, bytes, mediaType);
    return {
      assetId: newId('asset'),
      objectKey,
      mediaType,
      bytes: bytes.length,
      durationSeconds: seconds,
      ...(measuredSeconds !== undefined ? { measuredSeconds } : {}),
      ...(report.resolution !== undefined ? { resolution: report.resolution } : {}),
      ...(report.completionTokens !== undefined ? { completionTokens: report.completionTokens } : {}),
      ...(report.totalTokens !== undefined ? { totalTokens: report.totalTokens } : {}),
      ...(report.providerUsage ? { providerUsage: report.providerUsage } : {}),
      ...(video.kind === 'url' ? { providerUrl: video.url } : {}),
    };
  }

  /**
   * Delivered seconds at the delivered resolution's price (the held one when the provider's is not priced). The
   * gateway measures a file's seconds, not its resolution, so what it measured is priced at the held resolution:
   * a provider that claims a dearer one than asked is charged past the hold for no more than the seconds.
   */
  private settled(job: VideoJob, stored: StoredVideo): JobOutcome {
    const snapshot = job.priceSnapshot;
    const resolution =
      stored.resolution !== undefined && pricesResolution(snapshot, stored.resolution)
        ? stored.resolution
        : snapshot.resolution;
    const costNanos = durationCostNanos(secondNanos(snapshot, resolution, job.model), stored.durationSeconds);
    const measuredCostNanos =
      stored.measuredSeconds === undefined
        ? undefined
        : durationCostNanos(secondNanos(snapshot, snapshot.resolution, job.model), stored.measuredSeconds);
    const usage = {
      completionTokens: stored.completionTokens ?? 0,
      totalTokens: stored.totalTokens ?? stored.completionTokens ?? 0,
      usdCost: nanosToUsd(costNanos),
      durationSeconds: stored.durationSeconds,
      providerUsage: stored.providerUsage ?? {},
    };
    return succeeded(
      job,
      { result: { ...stored, usage }, usage, costNanos, measuredCostNanos },
      { outputs: [stored], retentionMs: this.options.retentionMs },
    );
  }
}

/**
 * Whether the reported video is on the provider's own configured origin (`baseUrl`'s): only there does its key
 * go. A URL elsewhere (normally presigned storage) is fetched without credentials, whatever the answer says,
 * so an upstream cannot send the key to an origin of its choosing.
 */
function onOriginOf(report: VideoTaskReport, target: ProviderConfig): boolean {
  if (report.video?.kind !== 'url' || !URL.canParse(report.video.url) || !URL.canParse(target.baseUrl)) return false;
  return new URL(report.video.url).origin === new URL(target.baseUrl).origin;
}

/**
 * The provider's authorization, for its own content URLs only (the fetcher keeps it to that origin, and refuses a
 * file that quotes it).
 */
function credentialsFor(target: ProviderConfig): Record<string, Secret> {
  return { authorization: target.apiKey.bearer(), ...target.headers };
}
