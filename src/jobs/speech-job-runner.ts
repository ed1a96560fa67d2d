import { isAudioOf } from '../media/media-type.ts';
import { durationCostNanos, secondNanos } from '../billing/duration-pricing.ts';
import { billedCharacters, speechCostNanos } from '../billing/speech-pricing.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import { definedFields } from '../domain/defined-fields.ts';
import { newId } from '../domain/ids.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { StoredSpeechRequest } from '../domain/speech.ts';
import { audioSeconds } from '../media/media-duration.ts';
import type { FetchedMedia } from '../media/remote-media.ts';
import type { AdapterRegistry, CallOptions, SpeechAdapter } from '../providers/provider-adapter.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { JobContext, JobOutcome, JobRunner, MediaJobOf } from './job-runner.ts';
import { succeeded, UnsendableJob } from './job-runner.ts';
import { outputKey } from './output-keys.ts';
import { upstreamFailure } from './upstream-errors.ts';

const extensions: Record<string, string> = {
  'audio/mpeg': 'mp3',
  'audio/ogg': 'ogg',
  'audio/L16': 'pcm',
  'audio/wav': 'wav',
};

/**
 * Runs an audio job of either product: marked as sent, made in one call (both products answer the whole
 * file), written to the store, then recorded as the provider's answer before it settles. A job taken over
 * mid-call fails rather than being sent again; one taken over after its audio was stored settles from it.
 * Text-to-speech is charged per character of its text; generation with reference per second the model
 * made (the provider's billed length, else the file's own), past the hold only up to the length read from
 * the file itself (see billing/settlement.ts).
 */
export class SpeechJobRunner implements JobRunner<'audio'> {
  constructor(
    private readonly options: {
      adapters: AdapterRegistry;
      providers: ReadonlyMap<string, ProviderConfig>;
      store: ObjectStore;
      /** Provider output URLs, downloaded within the archive's size and time limits (and by the job's deadline, `signal`). */
      downloadOutput: (url: string, signal?: AbortSignal) => Promise<FetchedMedia>;
      retentionMs: number | undefined;
      /** `media.maxDownloadBytes`: the largest audio an answer may carry, as any output downloaded. */
      maxOutputBytes: number;
    },
  ) {}

  async run(job: MediaJobOf<'audio'>, context: JobContext): Promise<JobOutcome> {
    const { request } = job;
    if (job.phase === 'sent') {
      return {
        kind: 'failed',
        error:
          'the gateway process running this job stopped while the provider was making the audio; the job was not sent again',
        costNanos: 0n,
      };
    }
    let generated = job.upstreamResult;
    if (job.phase !== 'generated' || !generated) {
      const sent = await context.dispatch(async (row, markSent, key) => {
        const target = this.options.providers.get(row.providerId);
        const adapter = target ? this.options.adapters.get(target.protocol)?.speech : undefined;
        if (!adapter || !target?.active) throw new UnsendableJob('the provider of this job is no longer configured');
        await markSent();
        return this.make(
          request,
          { upstreamModel: row.upstreamModel, adapter },
          { target: key ?? target, signal: context.deadline, maxOutputBytes: this.options.maxOutputBytes },
        );
      });
      if ('outcome' in sent) return sent.outcome;
      let made: Awaited<ReturnType<typeof sent.value>>;
      try {
        made = await sent.value();
      } catch (error) {
        return upstreamFailure(error);
      }
      if (made.audio.length === 0) return { kind: 'failed', error: 'the provider returned no audio', costNanos: 0n };
      // Bytes that are no sound of the format asked (an error page sent as audio) are no output: nothing is charged.
      if (!isAudioOf(made.audio, made.mediaType))
        return { kind: 'failed', error: `the provider output is not ${made.mediaType} audio`, costNanos: 0n };
      const { audio, ...facts } = made;
      const objectKey = outputKey(
        job,
        `${request.product === 'text-to-speech' ? 'speech' : 'reference'}.${extensions[facts.mediaType] ?? 'bin'}`,
      );
      await this.options.store.put(objectKey, audio, facts.mediaType);
      generated = { ...facts, assetId: newId('asset'), objectKey, bytes: audio.length };
      if (!(await context.recordGenerated(generated))) return { kind: 'lost' };
    }
    const { bytes, billedCharacters: providerCharacters, measuredSeconds, ...result } = generated;
    const asset = { assetId: result.assetId, objectKey: result.objectKey, mediaType: result.mediaType, bytes };
    if (job.product === 'text-to-speech') {
      const characters = billedCharacters(job.request.text);
      const costNanos = speechCostNanos(job.priceSnapshot, characters);
      const usage = {
        characters,
        ...(providerCharacters !== undefined ? { providerCharacters } : {}),
        usdCost: nanosToUsd(costNanos),
      };
      return succeeded(job, { result, usage, costNanos }, { outputs: [asset], retentionMs: this.options.retentionMs });
    }
    const seconds = result.originalDurationSeconds ?? result.durationSeconds;
    const perSecond = secondNanos(job.priceSnapshot, undefined, job.model);
    // A clip whose length neither the provider nor the file tells is charged what was held for it.
    const costNanos = seconds === undefined ? job.holdNanos : durationCostNanos(perSecond, seconds);
    const usage = {
      ...definedFields({
        durationSeconds: result.durationSeconds,
        originalDurationSeconds: result.originalDurationSeconds,
      }),
      usdCost: nanosToUsd(costNanos),
    };
    const measuredCostNanos = measuredSeconds === undefined ? undefined : durationCostNanos(perSecond, measuredSeconds);
    return succeeded(
      job,
      { result, usage, costNanos, measuredCostNanos },
      { outputs: [asset], retentionMs: this.options.retentionMs },
    );
  }

  /**
   * Asks the provider for the audio; answers how to read it as bytes, with what the provider reported and
   * the playable length read from the file where it can be (a clip given by URL is downloaded then, once the
   * provider's answer is in: its download is no failure of the row, and no reason to send the job elsewhere).
   */
  private async make(
    request: StoredSpeechRequest,
    { upstreamModel, adapter }: { upstreamModel: string; adapter: SpeechAdapter },
    options: CallOptions,
  ) {
    if (request.product === 'text-to-speech') {
      const { product: _product, ...speech } = request;
      const spoken = await adapter.synthesize(speech, options);
      return async () => ({
        audio: Buffer.from(spoken.audio, 'base64'),
        mediaType: spoken.mediaType,
        ...definedFields({ billedCharacters: spoken.billedCharacters, subtitle: spoken.subtitle }),
      });
    }
    const { product: _product, ...reference } = request;
    if (!adapter.generateWithReference)
      throw new UnsendableJob('the provider of this job does not generate audio with reference');
    const made = await adapter.generateWithReference(reference, upstreamModel, options);
    return async () => {
      const audio =
        made.audio.kind === 'inline'
          ? Buffer.from(made.audio.data, 'base64')
          : (await this.options.downloadOutput(made.audio.url, options.signal)).bytes;
      const measuredSeconds = await audioSeconds(audio, made.mediaType, request.sampleRate ?? 24_000);
      return {
        audio,
        mediaType: made.mediaType,
        ...definedFields({
          durationSeconds: measuredSeconds ?? made.durationSeconds,
          measuredSeconds,
          originalDurationSeconds: made.originalDurationSeconds,
          providerUrl: made.providerUrl,
          subtitle: made.subtitle,
        }),
      };
    };
  }
}
