import {
  audioSecondPriceSnapshot,
  durationCostNanos,
  secondNanos,
  type DurationPriceSnapshot,
} from '../billing/duration-pricing.ts';
import { referenceSecondsEstimate } from '../billing/spoken-length.ts';
import {
  billedCharacters,
  speechCostNanos,
  speechPriceSnapshot,
  type SpeechPriceSnapshot,
} from '../billing/speech-pricing.ts';
import type { Catalog, CatalogModel, ProviderRow } from '../catalog/catalog.ts';
import type { VoiceCatalog } from '../catalog/voices.ts';
import { definedFields } from '../domain/defined-fields.ts';
import { GatewayError } from '../domain/errors.ts';
import {
  imageReferenceFields,
  type AudioFormat,
  type AudioReference,
  type AudioSubtitle,
  type ReferenceAudioRequest,
  type SpeechFormat,
  type SpeechSynthesisRequest,
  type StoredReferenceAudioRequest,
  type StoredSpeechRequest,
  type StoredTextToSpeechRequest,
} from '../domain/speech.ts';
import type { MediaLinks } from '../jobs/media-links.ts';
import type { AdapterRegistry } from '../providers/provider-adapter.ts';
import type { ReadJobRow } from '../storage/media-jobs-repository.ts';
import type { JobSubmission, JobToSubmit } from './job-submission.ts';
import { truncatedBase64 } from './recorded-content.ts';
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
export type TextToSpeechInput = Omit<SpeechSynthesisRequest, 'resourceId' | 'format' | 'sampleRate'> & {
  format?: SpeechFormat;
  sampleRate?: number;
};

/** A generation-with-reference request after its wire shape is checked. */
export type ReferenceAudioInput = Omit<ReferenceAudioRequest, 'format'> & { modelId: string; format?: AudioFormat };

export type AudioProduct = StoredSpeechRequest['product'];

/** The spec's Audio job. */
export interface AudioJobView {
  generationId: string;
  product?: AudioProduct;
  status: 'queued' | 'processing' | 'succeeded' | 'failed';
  audioUrl?: string;
  durationSeconds?: number;
  originalDurationSeconds?: number;
  providerUrl?: string;
  subtitle?: AudioSubtitle;
  error?: string;
}

/**
 * Both audio products as jobs. Text-to-speech: the voice implies the model (its `resourceId`), the price is
 * per character of the text, and the estimate, the hold and the charge are the same figure. Generation
 * with reference: priced per second the model makes, held for the seconds the prompt should take to say
 * (an indication: the charge is what was delivered).
 */
export class SpeechGeneration {
  private readonly clock: () => Date;

  constructor(private readonly dependencies: SpeechGenerationDependencies) {
    this.clock = dependencies.clock ?? (() => new Date());
  }

  async estimate(input: TextToSpeechInput): Promise<bigint> {
    return this.prepareSpeech(input).holdNanos;
  }

  async submit(caller: Caller, input: TextToSpeechInput): Promise<string> {
    return this.dependencies.submission.submit(caller, this.prepareSpeech(input));
  }

  async estimateReference(input: ReferenceAudioInput): Promise<bigint> {
    return this.prepareReference(input).holdNanos;
  }

  async submitReference(caller: Caller, input: ReferenceAudioInput): Promise<string> {
    return this.dependencies.submission.submit(caller, this.prepareReference(input));
  }

  find(caller: Caller, generationId: string): Promise<ReadJobRow> {
    return this.dependencies.submission.find(caller, generationId, 'audio');
  }

  async view(job: ReadJobRow, baseUrl: string): Promise<AudioJobView> {
    // Audio jobs are not cancelled; a cancelled one would read as what it is to the spec's machine: not made.
    const status = job.state === 'cancelled' ? 'failed' : job.state;
    const view: AudioJobView = { generationId: job.id, status };
    // A job whose stored request this release cannot read shows no product: it fails with the reason.
    if (!('problem' in job) && job.kind === 'audio') view.product = job.product;
    const result = 'problem' in job || job.kind !== 'audio' ? null : job.result;
    if (job.state === 'succeeded' && result) {
      view.audioUrl = await this.dependencies.links.link(result.objectKey, this.clock(), baseUrl);
      Object.assign(
        view,
        definedFields({
          durationSeconds: result.durationSeconds,
          originalDurationSeconds: result.originalDurationSeconds,
          providerUrl: result.providerUrl,
          subtitle: result.subtitle,
        }),
      );
    }
    if (job.state === 'failed') view.error = job.error ?? 'the audio generation failed';
    return view;
  }

  private prepareSpeech(input: TextToSpeechInput): JobToSubmit {
    const voice = this.dependencies.voices.find(input.voiceType);
    if (!voice)
      throw new GatewayError(
        'GW_VALIDATION',
        `voiceType "${input.voiceType}" is not a voice of the catalog (GET /api/v1/audio/voices lists them)`,
      );
    const model = this.dependencies.catalog.resolve(voice.resourceId);
    const row = model.rows.find((candidate) => this.dependencies.adapters.get(candidate.protocol)?.speech);
    if (!row) throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not speak`);
    if (input.contextTexts !== undefined && !voice.capabilities.contextTexts) {
      throw new GatewayError(
        'GW_PARAMETER_UNSUPPORTED',
        `model "${model.modelId}" does not support parameter "contextTexts" (voice "${voice.voiceType}"; only ${'seed-tts-2.0'} voices take it)`,
      );
    }
    const priceSnapshot: SpeechPriceSnapshot = speechPriceSnapshot(model);
    const request: StoredTextToSpeechRequest = {
      product: 'text-to-speech',
      ...definedFields(input),
      voiceType: voice.voiceType,
      text: input.text,
      resourceId: model.modelId,
      format: input.format ?? 'mp3',
      sampleRate: input.sampleRate ?? 24_000,
    };
    const { text, contextTexts, product: _product, ...parameters } = request;
    return {
      kind: 'audio',
      product: 'text-to-speech',
      modelId: model.modelId,
      row,
      request,
      recordedRequest: {
        operation: 'text-to-speech',
        ...parameters,
        characters: billedCharacters(text),
        ...(contextTexts ? { contextTexts: contextTexts.length } : {}),
      },
      priceSnapshot,
      holdNanos: speechCostNanos(priceSnapshot, billedCharacters(input.text)),
    };
  }

  private prepareReference(input: ReferenceAudioInput): JobToSubmit {
    const model = this.dependencies.catalog.resolve(input.modelId);
    const row = referenceRow(model, this.dependencies.adapters);
    if (input.references) refuseMixedReferences(input.references);
    const priceSnapshot: DurationPriceSnapshot = audioSecondPriceSnapshot(model);
    const { modelId: _modelId, ...fields } = input;
    const request: StoredReferenceAudioRequest = {
      product: 'generation-with-reference',
      ...definedFields(fields),
      textPrompt: input.textPrompt,
      format: input.format ?? 'mp3',
    };
    const seconds = referenceSecondsEstimate(input.textPrompt, input.speechRate);
    return {
      kind: 'audio',
      product: 'generation-with-reference',
      modelId: model.modelId,
      row,
      request,
      recordedRequest: {
        operation: 'generation-with-reference',
        ...definedFields({ ...fields, references: input.references?.map(recordedReference) }),
        format: request.format,
      },
      priceSnapshot,
      holdNanos: durationCostNanos(secondNanos(priceSnapshot, undefined, model.modelId), seconds),
    };
  }
}

/**
 * The row that makes `model`'s clips: a model that takes audio in and gives audio out, served by a family
 * that generates with reference. 400 naming the model otherwise (a text-to-speech model, say).
 */
function referenceRow(model: CatalogModel, adapters: AdapterRegistry): ProviderRow {
  if (model.outputModalities.includes('audio') && model.inputModalities.includes('audio')) {
    const row = model.rows.find((candidate) => adapters.get(candidate.protocol)?.speech?.generateWithReference);
    if (row) return row;
  }
  throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not generate audio with reference`);
}

/** The spec's one local rule on references: image references are not mixed with audio ones (voices and clips). */
function refuseMixedReferences(references: readonly AudioReference[]): void {
  const isImage = (field: string) => (imageReferenceFields as readonly string[]).includes(field);
  const fields = references.flatMap((reference) => Object.keys(reference));
  if (fields.some(isImage) && fields.some((field) => !isImage(field))) {
    throw new GatewayError(
      'GW_VALIDATION',
      '"references": image references (imageUrl, imageData) cannot be mixed with audio references (speaker, audioUrl, audioData)',
    );
  }
}

/** What the usage record keeps of a reference: inline bytes shortened, like every base64 value it keeps. */
function recordedReference(reference: AudioReference): AudioReference {
  return Object.fromEntries(
    Object.entries(reference).map(([field, value]) => [field, field.endsWith('Data') ? truncatedBase64(value) : value]),
  );
}
