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
import type { CatalogModel } from '../catalog/catalog.ts';
import type { Voice, VoiceCatalog } from '../catalog/voices.ts';
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
import type { ReadJobRow } from '../storage/media-jobs-repository.ts';
import type { GenerationPipeline, JobPlan, JobRecipe } from './generation-pipeline.ts';
import type { JobSubmission } from './job-submission.ts';
import { ReferenceUrls } from './image-request-check.ts';
import { referenceRows, speechRows } from './media-rows.ts';
import { truncatedBase64 } from './recorded-content.ts';
import type { Caller, RequestContext } from '../domain/request-context.ts';

export interface SpeechGenerationDependencies {
  pipeline: GenerationPipeline;
  voices: VoiceCatalog;
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
  /** Media retention deleted the audio: no link is left of it. */
  assetExpired?: true;
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
  private readonly speech: TextToSpeechRecipe;
  private readonly reference: ReferenceAudioRecipe;

  constructor(private readonly dependencies: SpeechGenerationDependencies) {
    this.clock = dependencies.clock ?? (() => new Date());
    this.speech = new TextToSpeechRecipe(dependencies);
    this.reference = new ReferenceAudioRecipe(dependencies);
  }

  estimate(caller: Caller, input: TextToSpeechInput): Promise<bigint> {
    return this.dependencies.pipeline.estimate(caller, this.speech, input);
  }

  async submit(caller: RequestContext, input: TextToSpeechInput): Promise<string> {
    return (await this.dependencies.pipeline.enqueue(caller, this.speech, input)).job.id;
  }

  estimateReference(caller: Caller, input: ReferenceAudioInput): Promise<bigint> {
    return this.dependencies.pipeline.estimate(caller, this.reference, input);
  }

  async submitReference(caller: RequestContext, input: ReferenceAudioInput): Promise<string> {
    return (await this.dependencies.pipeline.enqueue(caller, this.reference, input)).job.id;
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
      if ((await this.dependencies.submission.keptAssetIds(job.id)).has(result.assetId))
        view.audioUrl = await this.dependencies.links.link(result.objectKey, this.clock(), baseUrl);
      else view.assetExpired = true;
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
}

/** The recipe for text-to-speech jobs: the voice implies the model; held and charged per character of the text. */
class TextToSpeechRecipe implements JobRecipe<TextToSpeechInput> {
  constructor(private readonly dependencies: SpeechGenerationDependencies) {}

  modelId(input: TextToSpeechInput): string {
    return this.voiceOf(input).resourceId;
  }

  plan(model: CatalogModel, input: TextToSpeechInput): JobPlan {
    const voice = this.voiceOf(input);
    const rows = speechRows(this.dependencies.pipeline.rowSources, model);
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
      rows,
      job: {
        kind: 'audio',
        product: 'text-to-speech',
        request,
        recordedRequest: {
          operation: 'text-to-speech',
          ...parameters,
          characters: billedCharacters(text),
          ...(contextTexts ? { contextTexts: contextTexts.length } : {}),
        },
        priceSnapshot,
      },
      holdNanos: speechCostNanos(priceSnapshot, billedCharacters(input.text)),
      dropped: [],
    };
  }

  private voiceOf(input: TextToSpeechInput): Voice {
    const voice = this.dependencies.voices.find(input.voiceType);
    if (!voice)
      throw new GatewayError(
        'GW_VALIDATION',
        `voiceType "${input.voiceType}" is not a voice of the catalog (GET /api/v1/audio/voices lists them)`,
      );
    return voice;
  }
}

/**
 * The recipe for generation with reference: priced per second the model makes, held for the seconds the
 * prompt should take to say (an indication: the charge is what was delivered).
 */
class ReferenceAudioRecipe implements JobRecipe<ReferenceAudioInput> {
  constructor(private readonly dependencies: SpeechGenerationDependencies) {}

  modelId(input: ReferenceAudioInput): string {
    return input.modelId;
  }

  plan(model: CatalogModel, input: ReferenceAudioInput): JobPlan {
    const rows = referenceRows(this.dependencies.pipeline.rowSources, model);
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
    // The provider fetches the references' URLs: they meet the rules of every URL a job's provider fetches.
    const referenceUrls = new ReferenceUrls();
    for (const [index, reference] of (input.references ?? []).entries()) {
      for (const field of referenceUrlFields) {
        const url = reference[field];
        if (url !== undefined) referenceUrls.add(url, `references[${index}].${field}`);
      }
    }
    return {
      rows,
      job: {
        kind: 'audio',
        product: 'generation-with-reference',
        request,
        recordedRequest: {
          operation: 'generation-with-reference',
          ...definedFields({ ...fields, references: input.references?.map(recordedReference) }),
          format: request.format,
        },
        priceSnapshot,
      },
      holdNanos: durationCostNanos(secondNanos(priceSnapshot, undefined, model.modelId), seconds),
      dropped: [],
      referenceUrls,
    };
  }
}

/** The reference fields that name a URL the provider fetches. */
const referenceUrlFields = ['audioUrl', 'imageUrl'] as const;

/** The spec's one local rule on references: image references are not mixed with audio ones (voices and clips). */
export function refuseMixedReferences(references: readonly AudioReference[]): void {
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
