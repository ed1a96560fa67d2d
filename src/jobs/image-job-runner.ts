import { definedFields } from '../domain/defined-fields.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import { GatewayError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type {
  GeneratedImage,
  ImageFailure,
  ImageGenerationResult,
  ImageSource,
  LayerBox,
  StoredImageRequest,
  StoredImageSource,
} from '../domain/image.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { FetchedMedia } from '../media/remote-media.ts';
import { imageTypeOf, notAnImage, sniffMediaType } from '../media/media-type.ts';
import { imageDimensions } from '../media/image-dimensions.ts';
import type { AdapterRegistry, ImageAdapter } from '../providers/provider-adapter.ts';
import { discardOutputs, type ObjectStore } from '../storage/object-store.ts';
import { imageCostNanos, type ImagePriceSnapshot } from '../billing/image-pricing.ts';
import type { ImageUpstreamResult } from '../domain/media-job-results.ts';
import { normalizedBox, type ArchivedImage, type StoredImageResult } from './image-result.ts';
import { outputKey } from './output-keys.ts';
import type { JobContext, JobOutcome, JobRunner, MediaJobOf } from './job-runner.ts';
import { pastDeadline, succeeded, UnsendableJob } from './job-runner.ts';

/** An output whose bytes are no picture: a failure of its own code, which is never charged (`billedByProvider`). */
const notAnImageCode = 'NotAnImage';
class NotAnImageError extends Error {}
/** An output the provider handed over that could not be archived (a download that failed): never charged either. */
const archiveFailedCode = 'ArchiveFailed';
/** The failures of outputs the provider made and the gateway could not keep, as opposed to the provider's own. */
const unkeptCodes: ReadonlySet<string> = new Set([notAnImageCode, archiveFailedCode]);

export interface ImageJobRunnerOptions {
  adapters: AdapterRegistry;
  providers: ReadonlyMap<string, ProviderConfig>;
  store: ObjectStore;
  /** Provider output URLs, downloaded within the archive's size and time limits (and by the job's deadline, `signal`). */
  downloadOutput: (url: string, signal?: AbortSignal) => Promise<FetchedMedia>;
  /** Client reference images by URL, for families that take bytes only (public addresses only, unless allowed). */
  fetchInput: (url: string, signal?: AbortSignal) => Promise<FetchedMedia>;
  /** Archived assets expire this long after they are made; undefined keeps them. */
  retentionMs: number | undefined;
}

type ImageJob = MediaJobOf<'image'>;

const extensions: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

/**
 * Runs one image job from wherever it stopped. Sending: the job is marked sent before the call, so a
 * job taken over after its process died mid-call is never sent again (these upstreams answer synchronously
 * and have no task to poll) and fails instead. Archiving: the provider's answer is stored first, so a job
 * taken over while archiving finishes from it.
 */
export class ImageJobRunner implements JobRunner<'image'> {
  constructor(private readonly options: ImageJobRunnerOptions) {}

  async run(job: ImageJob, context: JobContext): Promise<JobOutcome> {
    const { request, priceSnapshot: snapshot } = job;
    if (job.phase === 'sent') {
      return {
        kind: 'failed',
        error:
          'the gateway process running this job stopped while the provider was generating; the job was not sent again',
        costNanos: 0n,
      };
    }
    let upstream: ImageUpstreamResult;
    if (job.phase === 'generated') {
      // Stored by the same write that marked the job generated.
      if (!job.upstreamResult)
        return { kind: 'failed', error: "the provider's answer stored with this job is missing", costNanos: 0n };
      upstream = job.upstreamResult;
    } else {
      const sent = await context.dispatch(async (row, markSent, key) => {
        const target = this.options.providers.get(row.providerId);
        const adapter = target ? this.options.adapters.get(target.protocol)?.images : undefined;
        if (!adapter || !target?.active) throw new UnsendableJob('the provider of this job is no longer configured');
        let images: ImageSource[];
        try {
          images = await this.inputs(request.images, adapter, context.deadline);
        } catch (error) {
          throw new UnsendableJob(error instanceof Error ? error.message : String(error));
        }
        await markSent();
        return adapter.generate(
          { ...request, upstreamModel: row.upstreamModel, images },
          { target: key ?? target, signal: context.deadline },
        );
      });
      if ('outcome' in sent) return sent.outcome;
      upstream = await this.keepInline(job, sent.value);
      if (!(await context.recordGenerated(upstream))) return { kind: 'lost' };
    }
    return this.archive(job, { request, snapshot, upstream }, context);
  }

  /** The job's input images as the adapter takes them: assets read from the archive, URLs fetched for families that take bytes. */
  private async inputs(
    images: readonly StoredImageSource[],
    adapter: ImageAdapter,
    deadline: AbortSignal,
  ): Promise<ImageSource[]> {
    return Promise.all(
      images.map(async (image, index): Promise<ImageSource> => {
        if (image.kind === 'asset') {
          const stored = await this.options.store.get(image.objectKey);
          if (!stored) throw new GatewayError('GW_NOT_FOUND', `reference image ${index + 1} is no longer archived`);
          return { kind: 'inline', mediaType: image.mediaType, data: stored.bytes.toString('base64') };
        }
        if (image.kind === 'url' && !adapter.imageUrls) {
          const fetched = await this.options.fetchInput(image.url, deadline);
          const mediaType = sniffMediaType(fetched.bytes) ?? fetched.contentType ?? 'application/octet-stream';
          if (!mediaType.startsWith('image/'))
            throw new GatewayError('GW_VALIDATION', `reference image ${index + 1} (${image.url}) is not an image`);
          return { kind: 'inline', mediaType, data: fetched.bytes.toString('base64') };
        }
        return image;
      }),
    );
  }

  /**
   * Inline outputs go to the store before the answer is recorded, so the job row never carries megabytes of
   * base64. One that is no picture by its own bytes (whatever type the provider declared) is not kept: it is
   * a failed output, as one fetched by URL is, neither archived nor charged. Each kept output's key is named by
   * its place among the kept ones, as `archive` names the outputs it fetches by URL: by the place in the
   * provider's list, an output fetched later could take the key of one kept here.
   */
  private async keepInline(job: ImageJob, result: ImageGenerationResult): Promise<ImageUpstreamResult> {
    const failures = [...result.failures];
    const kept: Array<{ image: GeneratedImage; bytes?: Buffer; mediaType?: string }> = [];
    for (const [index, image] of result.images.entries()) {
      if (image.output.kind !== 'inline') {
        kept.push({ image });
        continue;
      }
      const bytes = Buffer.from(image.output.data, 'base64');
      const mediaType = imageTypeOf(bytes);
      if (mediaType === undefined)
        failures.push({ index, code: notAnImageCode, message: `output ${index} could not be archived: ${notAnImage}` });
      else kept.push({ image, bytes, mediaType });
    }
    const images = await Promise.all(
      kept.map(async ({ image, bytes, mediaType }, place) => {
        if (bytes === undefined || mediaType === undefined) return image;
        const objectKey = this.objectKey(job, place, mediaType);
        await this.options.store.put(objectKey, bytes, mediaType);
        return { ...image, output: { kind: 'stored' as const, objectKey, mediaType } };
      }),
    );
    return { ...result, images, failures };
  }

  private objectKey(job: ImageJob, index: number, mediaType: string): string {
    return outputKey(job, `${index}.${extensions[mediaType] ?? 'bin'}`);
  }

  /** One output into the store (where it is not yet), with what the result and the asset row need of it. */
  private async archiveOne(
    job: ImageJob,
    { index, image }: { index: number; image: ImageUpstreamResult['images'][number] },
    deadline: AbortSignal,
  ): Promise<ArchivedOutput> {
    let objectKey: string;
    let mediaType: string;
    let bytes: Buffer;
    if (image.output.kind === 'stored') {
      ({ objectKey, mediaType } = image.output);
      const stored = await this.options.store.get(objectKey);
      if (!stored) throw new Error('the archived output is missing');
      bytes = stored.bytes;
    } else {
      bytes =
        image.output.kind === 'url'
          ? (await this.options.downloadOutput(image.output.url, deadline)).bytes
          : Buffer.from(image.output.data, 'base64');
      // The bytes say what they are: a type the provider declares for bytes that are no picture is not believed.
      const picture = imageTypeOf(bytes);
      if (picture === undefined) throw new NotAnImageError(notAnImage);
      mediaType = picture;
      objectKey = this.objectKey(job, index, mediaType);
      await this.options.store.put(objectKey, bytes, mediaType);
    }
    const archived: ArchivedImage = { assetId: newId('asset'), objectKey, mediaType };
    if (image.output.kind === 'url') archived.providerUrl = image.output.url;
    if (image.layer)
      Object.assign(
        archived,
        definedFields({ zIndex: image.layer.zIndex, name: image.layer.name, description: image.layer.description }),
      );
    return {
      image: archived,
      bytes: bytes.length,
      size: imageDimensions(bytes) ?? sizeOf(image.size),
      box: image.layer?.box,
    };
  }

  private async archive(
    job: ImageJob,
    {
      request,
      snapshot,
      upstream,
    }: { request: StoredImageRequest; snapshot: ImagePriceSnapshot; upstream: ImageUpstreamResult },
    context: JobContext,
  ): Promise<JobOutcome> {
    const failures: ImageFailure[] = [...upstream.failures];
    const archived: ArchivedOutput[] = [];
    for (const [index, image] of upstream.images.entries()) {
      try {
        archived.push(await this.archiveOne(job, { index, image }, context.deadline));
      } catch (error) {
        // A download the deadline cut is no failure of its output: the job's time is up (below).
        if (!context.deadline.aborted)
          failures.push({
            index,
            code: error instanceof NotAnImageError ? notAnImageCode : archiveFailedCode,
            message: `output ${index} could not be archived: ${error instanceof Error ? error.message : String(error)}`,
          });
      }
      if (context.lost()) return { kind: 'lost' };
      if (context.deadline.aborted) return this.cutByDeadline(upstream, archived, context.deadline);
    }
    const layers = request.layers !== undefined;
    const quality = upstream.quality ?? request.quality;
    if ((layers && failures.length > 0) || archived.length === 0) {
      // A failed job leaves no asset behind to be swept later: what it archived goes now.
      await discardOutputs(
        this.options.store,
        archived.map(({ image }) => image.objectKey),
      );
      const reasons = failures.map((failure) => failure.message).join('; ');
      const error =
        layers && failures.length > 0
          ? `layer decomposition failed: ${reasons}`
          : reasons || 'the provider returned no image';
      const costNanos = billedByProvider(snapshot, { upstream, failures, deleted: archived.length }, quality);
      return { kind: 'failed', error, costNanos };
    }
    const images = layers ? layerOrder(archived) : archived.map((output) => output.image);
    const costNanos = imageCostNanos(snapshot, archived.length, quality);
    const usage = { ...upstream.usage, generatedImages: archived.length, usdCost: nanosToUsd(costNanos) };
    const result: StoredImageResult = { images, usage, ...(failures.length > 0 ? { failures } : {}) };
    return succeeded(
      job,
      { result, usage, costNanos },
      { outputs: archived.map(({ image, bytes }) => ({ ...image, bytes })), retentionMs: this.options.retentionMs },
    );
  }

  /**
   * Archiving cut by the job's deadline: the job fails for its time, charged nothing (the client gets none of its
   * outputs), and keeps nothing in the store, neither what it archived nor the inline outputs stored before.
   */
  private async cutByDeadline(
    upstream: ImageUpstreamResult,
    archived: readonly ArchivedOutput[],
    deadline: AbortSignal,
  ): Promise<JobOutcome> {
    const stored = upstream.images.flatMap(({ output }) => (output.kind === 'stored' ? [output.objectKey] : []));
    await discardOutputs(this.options.store, new Set([...stored, ...archived.map(({ image }) => image.objectKey)]));
    return pastDeadline(deadline);
  }
}

/** An archived output with what only archiving knows: its size in bytes and pixels, and a layer's box. */
interface ArchivedOutput {
  image: ArchivedImage;
  bytes: number;
  size: { width: number; height: number } | undefined;
  box: LayerBox | undefined;
}

/**
 * A failed job is charged only what the provider reports having made (usually nothing), less what it handed over
 * that the client never got: outputs that were no picture or could not be archived, and those archived and then
 * `deleted` with the failure (the layers of a decomposition one of whose layers failed), as a job that succeeds
 * is charged only for the outputs it archived.
 */
function billedByProvider(
  snapshot: ImagePriceSnapshot,
  failed: { upstream: ImageUpstreamResult; failures: readonly ImageFailure[]; deleted: number },
  quality: string | undefined,
): bigint {
  const made = Math.max(0, Math.trunc(failed.upstream.usage.generatedImages ?? 0));
  const unkept = failed.failures.filter((failure) => unkeptCodes.has(failure.code)).length;
  return imageCostNanos(snapshot, Math.max(0, made - unkept - failed.deleted), quality);
}

function sizeOf(size: string | undefined): { width: number; height: number } | undefined {
  const match = /^(\d+)x(\d+)$/.exec(size ?? '');
  return match ? { width: Number(match[1]), height: Number(match[2]) } : undefined;
}

/** Layer order of the spec: the base first (zIndex 0, no box), then layers ascending by zIndex, each box also normalized to the base. */
function layerOrder(outputs: ArchivedOutput[]): ArchivedImage[] {
  const sorted = [...outputs].sort((a, b) => (a.image.zIndex ?? 0) - (b.image.zIndex ?? 0));
  const base = sorted[0]!.size;
  return sorted.map(({ image, box }, index) => {
    if (index === 0) return { ...image, zIndex: 0 };
    return box && base
      ? { ...image, boundingBox: { absolute: box, normalized: normalizedBox(box, base.width, base.height) } }
      : image;
  });
}
