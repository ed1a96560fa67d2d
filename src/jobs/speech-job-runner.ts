import type { ProviderConfig } from '../config/load-config.ts';
import { newId } from '../domain/ids.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { SpeechSynthesisRequest } from '../domain/speech.ts';
import { billedCharacters, speechCostNanos, type SpeechPriceSnapshot } from '../billing/speech-pricing.ts';
import type { AdapterRegistry } from '../providers/provider-adapter.ts';
import type { MediaJobRow } from '../storage/media-jobs-repository.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { succeeded, type JobContext, type JobOutcome, type JobRunner } from './job-runner.ts';
import { isTransient, upstreamErrorMessage } from './upstream-errors.ts';

/** What a succeeded text-to-speech job keeps: its archived audio (links are made when read). */
export interface StoredAudioResult {
  assetId: string;
  objectKey: string;
  mediaType: string;
}

const extensions: Record<string, string> = { 'audio/mpeg': 'mp3', 'audio/ogg': 'ogg', 'audio/L16': 'pcm' };

/**
 * Runs a text-to-speech job: marked as sent, synthesized in one call (the speech protocol answers the whole
 * file), written to the store, then recorded as the provider's answer before it settles. A job taken over
 * mid-call fails rather than being sent again; one taken over after its audio was stored settles from it.
 */
export class SpeechJobRunner implements JobRunner {
  constructor(
    private readonly options: {
      adapters: AdapterRegistry;
      providers: ReadonlyMap<string, ProviderConfig>;
      store: ObjectStore;
      retentionMs: number | undefined;
    },
  ) {}

  async run(job: MediaJobRow, context: JobContext): Promise<JobOutcome> {
    const request = job.request as SpeechSynthesisRequest;
    if (job.phase === 'submitted') {
      return { kind: 'failed', error: 'the gateway process running this job stopped while the provider was speaking; the job was not sent again', costNanos: 0n };
    }
    let stored = job.upstreamResult as (StoredAudioResult & { billedCharacters?: number; bytes: number }) | null;
    if (job.phase !== 'generated' || !stored) {
      const target = this.options.providers.get(job.providerId);
      const adapter = target ? this.options.adapters.get(target.protocol)?.speech : undefined;
      if (!adapter || !target?.active) return { kind: 'failed', error: 'the provider of this job is no longer configured', costNanos: 0n };
      if (!(await context.markSubmitted())) return { kind: 'lost' };
      let result;
      try {
        result = await adapter.synthesize(request, { target });
      } catch (error) {
        if (isTransient(error) && job.attempts + 1 < context.maxAttempts) return { kind: 'retry', error: upstreamErrorMessage(error) };
        return { kind: 'failed', error: upstreamErrorMessage(error), costNanos: 0n };
      }
      const bytes = Buffer.from(result.audio, 'base64');
      if (bytes.length === 0) return { kind: 'failed', error: 'the provider returned no audio', costNanos: 0n };
      const objectKey = `audio/${job.id.toLowerCase()}/speech.${extensions[result.mediaType] ?? 'bin'}`;
      await this.options.store.put(objectKey, bytes, result.mediaType);
      stored = { assetId: newId('asset'), objectKey, mediaType: result.mediaType, bytes: bytes.length, ...(result.billedCharacters !== undefined ? { billedCharacters: result.billedCharacters } : {}) };
      if (!(await context.recordGenerated(stored))) return { kind: 'lost' };
    }
    const characters = billedCharacters(request.text);
    const costNanos = speechCostNanos(job.priceSnapshot as SpeechPriceSnapshot, characters);
    const usage = { characters, ...(stored.billedCharacters !== undefined ? { providerCharacters: stored.billedCharacters } : {}), usdCost: nanosToUsd(costNanos) };
    const result: StoredAudioResult = { assetId: stored.assetId, objectKey: stored.objectKey, mediaType: stored.mediaType };
    return succeeded(job, { result, usage, costNanos }, [stored], this.options.retentionMs);
  }
}
