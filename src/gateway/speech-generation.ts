import { billedCharacters, speechCostNanos, speechPriceSnapshot } from '../billing/speech-pricing.ts';
import type { Catalog, ProviderRow } from '../catalog/catalog.ts';
import type { VoiceCatalog } from '../catalog/voices.ts';
import { definedFields } from '../domain/defined-fields.ts';
import { GatewayError } from '../domain/errors.ts';
import type { SpeechFormat, SpeechSynthesisRequest } from '../domain/speech.ts';
import type { StoredAudioResult } from '../jobs/speech-job-runner.ts';
import type { MediaLinks } from '../jobs/media-links.ts';
import type { AdapterRegistry } from '../providers/provider-adapter.ts';
import type { MediaJobRow } from '../storage/media-jobs-repository.ts';
import type { JobSubmission } from './job-submission.ts';
import type { Caller } from './text-generation.ts';

export interface SpeechGenerationDependencies {
  catalog: Catalog;
  voices: VoiceCatalog;
  adapters: AdapterRegistry;
  submission: JobSubmission;
  links: MediaLinks;
  clock?: () => Date;
}

/** A text-to-speech request after its wire shape is checked (lengths, enums, ranges). */
export type TextToSpeechInput = Omit<SpeechSynthesisRequest, 'resourceId' | 'format' | 'sampleRate'> & { format?: SpeechFormat; sampleRate?: number };

/** The spec's Audio job (the text-to-speech product). */
export interface AudioJobView {
  generationId: string;
  product: 'text-to-speech';
  status: 'queued' | 'processing' | 'succeeded' | 'failed';
  audioUrl?: string;
  error?: string;
}

/**
 * Text-to-speech as jobs: the voice implies the model (its `resourceId`), the price is per character of the
 * text, and the estimate, the hold and the charge are the same figure.
 */
export class SpeechGeneration {
  constructor(private readonly dependencies: SpeechGenerationDependencies) {}

  async estimate(input: TextToSpeechInput): Promise<bigint> {
    return this.prepare(input).holdNanos;
  }

  async submit(caller: Caller, input: TextToSpeechInput): Promise<string> {
    const prepared = this.prepare(input);
    const { text, contextTexts, ...parameters } = prepared.request;
    return this.dependencies.submission.submit(caller, {
      kind: 'audio',
      modelId: prepared.request.resourceId,
      row: prepared.row,
      request: prepared.request,
      recordedRequest: { operation: 'text-to-speech', ...parameters, characters: billedCharacters(text), ...(contextTexts ? { contextTexts: contextTexts.length } : {}) },
      priceSnapshot: prepared.priceSnapshot,
      holdNanos: prepared.holdNanos,
    });
  }

  find(caller: Caller, generationId: string): Promise<MediaJobRow> {
    return this.dependencies.submission.find(caller, generationId, 'audio');
  }

  async view(job: MediaJobRow, baseUrl: string): Promise<AudioJobView> {
    const view: AudioJobView = { generationId: job.id, product: 'text-to-speech', status: job.state as AudioJobView['status'] };
    const result = job.result as StoredAudioResult | null;
    if (job.state === 'succeeded' && result) view.audioUrl = await this.dependencies.links.link(result.objectKey, (this.dependencies.clock ?? (() => new Date()))(), baseUrl);
    if (job.state === 'failed') view.error = job.error ?? 'the speech generation failed';
    return view;
  }

  private prepare(input: TextToSpeechInput): { request: SpeechSynthesisRequest; row: ProviderRow; priceSnapshot: ReturnType<typeof speechPriceSnapshot>; holdNanos: bigint } {
    const voice = this.dependencies.voices.find(input.voiceType);
    if (!voice) throw new GatewayError('GW_VALIDATION', `voiceType "${input.voiceType}" is not a voice of the catalog (GET /api/v1/audio/voices lists them)`);
    const model = this.dependencies.catalog.resolve(voice.resourceId);
    const row = model.rows.find((candidate) => this.dependencies.adapters.get(candidate.protocol)?.speech);
    if (!row) throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not speak`);
    if (input.contextTexts !== undefined && !voice.capabilities.contextTexts) {
      throw new GatewayError('GW_PARAMETER_UNSUPPORTED', `model "${model.modelId}" does not support parameter "contextTexts" (voice "${voice.voiceType}"; only ${'seed-tts-2.0'} voices take it)`);
    }
    const priceSnapshot = speechPriceSnapshot(model);
    const request: SpeechSynthesisRequest = {
      ...definedFields(input),
      voiceType: voice.voiceType,
      text: input.text,
      resourceId: model.modelId,
      format: input.format ?? 'mp3',
      sampleRate: input.sampleRate ?? 24_000,
    };
    return { request, row, priceSnapshot, holdNanos: speechCostNanos(priceSnapshot, billedCharacters(input.text)) };
  }
}
