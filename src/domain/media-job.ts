/**
 * A media job's stored JSON, described once: what each kind of job stores of its request, of the request as
 * its usage record keeps it, and of the prices it is settled at. Each is checked when a job is queued and when
 * it is read back, so a job queued by another release, whose stored shape this release no longer reads, is
 * failed with the reason instead of being run on a guess.
 */

import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { GenerationAttemptSchema, type GenerationAttempt } from './generation-route.ts';
import { StoredImageRequestSchema } from './image.ts';
import { storedCheck, type StoredCheck } from './stored-check.ts';
import {
  AudioUpstreamResultSchema,
  ImageUpstreamResultSchema,
  StoredAudioResultSchema,
  StoredImageResultSchema,
  StoredVideoResultSchema,
  StoredVideoSchema,
  type AudioUpstreamResult,
  type ImageUpstreamResult,
  type StoredAudioResult,
  type StoredImageResult,
  type StoredVideo,
  type StoredVideoResult,
} from './media-job-results.ts';
import { StoredReferenceAudioRequestSchema, StoredTextToSpeechRequestSchema } from './speech.ts';
import type { MediaKind } from './usage-modalities.ts';
import { StoredVideoRequestSchema, videoResolutions } from './video.ts';

/** The states of a job's row; the spec's machines are views of them (a video task's `running` is `processing` once sent). */
export const mediaJobStates = ['queued', 'processing', 'succeeded', 'failed', 'cancelled'] as const;
export type MediaJobState = (typeof mediaJobStates)[number];

/**
 * How far a running job got: `sent`, the upstream call began; `task`, the upstream task's id is stored;
 * `generated`, the upstream's answer is stored and its outputs are being archived. Null: nothing sent yet.
 */
export const mediaJobPhases = ['sent', 'task', 'generated'] as const;
export type MediaJobPhase = (typeof mediaJobPhases)[number];

/** Nano-USD as a decimal string: JSON has no 64-bit integers. */
const Nanos = Type.String({ pattern: '^[0-9]+$' });

/**
 * The catalog's price version the snapshot was taken from (absent on jobs submitted before versions): the
 * job's usage record names it.
 */
const PriceVersion = Type.Optional(Type.String());

const versioned = Compile(Type.Object({ priceVersion: Type.String() }));

/** The price version a stored snapshot names, whatever its kind (a cancelled job's record names it too). */
export function frozenPriceVersion(snapshot: unknown): string | undefined {
  return versioned.Check(snapshot) ? snapshot.priceVersion : undefined;
}

/** A model's image prices at submission, in nano-USD: the job is settled at these. */
export const ImagePriceSnapshotSchema = Type.Union([
  Type.Object({ kind: Type.Literal('per-image'), nanos: Nanos, priceVersion: PriceVersion }),
  Type.Object({ kind: Type.Literal('by-quality'), low: Nanos, medium: Nanos, high: Nanos, priceVersion: PriceVersion }),
]);
export type ImagePriceSnapshot = Static<typeof ImagePriceSnapshotSchema>;

/**
 * Prices per output second (video, and audio made with references) at submission, in nano-USD, with the
 * resolution the hold was priced at (asked, or the model's default) when there was one.
 */
export const DurationPriceSnapshotSchema = Type.Union([
  Type.Object({
    kind: Type.Literal('per-second'),
    nanos: Nanos,
    resolution: Type.Optional(Type.String()),
    priceVersion: PriceVersion,
  }),
  Type.Object({
    kind: Type.Literal('per-second-by-resolution'),
    nanos: Type.Partial(Type.Record(Type.Enum(videoResolutions), Nanos)),
    resolution: Type.Optional(Type.String()),
    priceVersion: PriceVersion,
  }),
]);
export type DurationPriceSnapshot = Static<typeof DurationPriceSnapshotSchema>;

/** A text-to-speech model's price at submission, nano-USD per million characters. */
export const SpeechPriceSnapshotSchema = Type.Object({
  kind: Type.Literal('per-m-characters'),
  nanos: Nanos,
  priceVersion: PriceVersion,
});
export type SpeechPriceSnapshot = Static<typeof SpeechPriceSnapshotSchema>;

/** Any JSON object: the recorded request keeps the request's fields as the client sent them (base64 cut short). */
const AnyFields = Type.Record(Type.String(), Type.Unknown());

/** One part of a request's content as recorded: its `type` and its fields (a text part's `text`). */
export const RecordedPartSchema = Type.Intersect([Type.Object({ type: Type.String() }), AnyFields]);
export type RecordedPart = Static<typeof RecordedPartSchema>;

function recordedRequestSchema<Operation extends string>(operations: readonly [Operation, ...Operation[]]) {
  return Type.Intersect([
    Type.Object({
      operation: Type.Enum(operations),
      model: Type.Optional(Type.String()),
      content: Type.Optional(Type.Array(RecordedPartSchema)),
    }),
    AnyFields,
  ]);
}

/** What the usage record keeps of an image request. */
export const RecordedImageRequestSchema = recordedRequestSchema(['image-generation']);
export type RecordedImageRequest = Static<typeof RecordedImageRequestSchema>;

/** What the usage record and the task's view keep of a video request (its content in order). */
export const RecordedVideoRequestSchema = recordedRequestSchema(['video-generation']);
export type RecordedVideoRequest = Static<typeof RecordedVideoRequestSchema>;

/** What the usage record keeps of an audio request (of text-to-speech, no text: its length). */
export const RecordedAudioRequestSchema = recordedRequestSchema(['text-to-speech', 'generation-with-reference']);
export type RecordedAudioRequest = Static<typeof RecordedAudioRequestSchema>;

/** What an image job stores to be run and settled. */
export interface ImageJobInput {
  kind: 'image';
  request: Static<typeof StoredImageRequestSchema>;
  recordedRequest: RecordedImageRequest;
  priceSnapshot: ImagePriceSnapshot;
}

export interface VideoJobInput {
  kind: 'video';
  request: Static<typeof StoredVideoRequestSchema>;
  recordedRequest: RecordedVideoRequest;
  priceSnapshot: DurationPriceSnapshot;
}

/** Text-to-speech is priced per character; `product` is its request's (not stored apart), so code can tell the two apart. */
export interface TextToSpeechJobInput {
  kind: 'audio';
  product: 'text-to-speech';
  request: Static<typeof StoredTextToSpeechRequestSchema>;
  recordedRequest: RecordedAudioRequest;
  priceSnapshot: SpeechPriceSnapshot;
}

/** Generation with reference is priced per second made. */
export interface ReferenceAudioJobInput {
  kind: 'audio';
  product: 'generation-with-reference';
  request: Static<typeof StoredReferenceAudioRequestSchema>;
  recordedRequest: RecordedAudioRequest;
  priceSnapshot: DurationPriceSnapshot;
}

export type AudioJobInput = TextToSpeechJobInput | ReferenceAudioJobInput;

/** What a media job stores to be run and settled, by kind: checked when queued and when read. */
export type MediaJobInput = ImageJobInput | VideoJobInput | AudioJobInput;

/**
 * What a job of each kind stores of its run: the rows tried before the one it is on, then the upstream's
 * answer while it is archived, then its result.
 */
interface JobOutputs<Upstream, Result> {
  /** Rows that failed or were skipped before the job's row (its usage record's route names them). */
  fallbacks: GenerationAttempt[];
  upstreamResult: Upstream | null;
  result: Result | null;
}

/** Everything a media job stores as JSON, by kind, as it is read back. */
export type StoredMediaJob =
  | (ImageJobInput & JobOutputs<ImageUpstreamResult, StoredImageResult>)
  | (VideoJobInput & JobOutputs<StoredVideo, StoredVideoResult>)
  | (AudioJobInput & JobOutputs<AudioUpstreamResult, StoredAudioResult>);

/** The stored JSON of a job's input as it was read: columns not yet checked. */
export interface StoredJobFields {
  kind: MediaKind;
  request: unknown;
  recordedRequest: unknown;
  priceSnapshot: unknown;
}

/** Every stored JSON column of a job as it was read. */
export interface StoredJobColumns extends StoredJobFields {
  fallbacks: unknown;
  upstreamResult: unknown;
  result: unknown;
}

/** Why a job's stored JSON cannot be read by this release: the job fails with it. */
export interface UnreadableJobInput {
  problem: string;
}

const checks = {
  imageRequest: storedCheck(StoredImageRequestSchema),
  videoRequest: storedCheck(StoredVideoRequestSchema),
  speechRequest: storedCheck(Type.Union([StoredTextToSpeechRequestSchema, StoredReferenceAudioRequestSchema])),
  imageRecorded: storedCheck(RecordedImageRequestSchema),
  videoRecorded: storedCheck(RecordedVideoRequestSchema),
  audioRecorded: storedCheck(RecordedAudioRequestSchema),
  imagePrices: storedCheck(ImagePriceSnapshotSchema),
  durationPrices: storedCheck(DurationPriceSnapshotSchema),
  speechPrices: storedCheck(SpeechPriceSnapshotSchema),
  fallbacks: storedCheck(Type.Array(GenerationAttemptSchema)),
};

/** The checks of what each kind of job stores of its outcome. */
const outputChecks = {
  image: { upstreamResult: storedCheck(ImageUpstreamResultSchema), result: storedCheck(StoredImageResultSchema) },
  video: { upstreamResult: storedCheck(StoredVideoSchema), result: storedCheck(StoredVideoResultSchema) },
  audio: { upstreamResult: storedCheck(AudioUpstreamResultSchema), result: storedCheck(StoredAudioResultSchema) },
};

const fieldNames = {
  request: 'request',
  recordedRequest: 'recorded request',
  priceSnapshot: 'price snapshot',
  fallbacks: 'list of rows tried',
  upstreamResult: "provider's answer",
  result: 'result',
} as const;

/** A failed check, named for the job: which stored value, where in it, and what is wrong. */
function unreadable(kind: MediaKind, field: keyof typeof fieldNames, problem: string): UnreadableJobInput {
  return {
    problem: `the ${fieldNames[field]} stored with this ${kind} job is not one this release of the gateway can run (${problem})`,
  };
}

/** A job's stored JSON checked against its kind's schemas: its typed input, or why it cannot be read. */
export function readJobInput(stored: StoredJobFields): MediaJobInput | UnreadableJobInput {
  const { request, recordedRequest, priceSnapshot } = stored;
  switch (stored.kind) {
    case 'image':
      if (!checks.imageRequest.check(request))
        return unreadable('image', 'request', checks.imageRequest.problem(request));
      if (!checks.imageRecorded.check(recordedRequest))
        return unreadable('image', 'recordedRequest', checks.imageRecorded.problem(recordedRequest));
      if (!checks.imagePrices.check(priceSnapshot))
        return unreadable('image', 'priceSnapshot', checks.imagePrices.problem(priceSnapshot));
      return { kind: 'image', request, recordedRequest, priceSnapshot };
    case 'video':
      if (!checks.videoRequest.check(request))
        return unreadable('video', 'request', checks.videoRequest.problem(request));
      if (!checks.videoRecorded.check(recordedRequest))
        return unreadable('video', 'recordedRequest', checks.videoRecorded.problem(recordedRequest));
      if (!checks.durationPrices.check(priceSnapshot))
        return unreadable('video', 'priceSnapshot', checks.durationPrices.problem(priceSnapshot));
      return { kind: 'video', request, recordedRequest, priceSnapshot };
    case 'audio':
      return readAudioInput(request, recordedRequest, priceSnapshot);
  }
}

function readAudioInput(
  request: unknown,
  recordedRequest: unknown,
  priceSnapshot: unknown,
): AudioJobInput | UnreadableJobInput {
  if (!checks.speechRequest.check(request))
    return unreadable('audio', 'request', checks.speechRequest.problem(request));
  if (!checks.audioRecorded.check(recordedRequest))
    return unreadable('audio', 'recordedRequest', checks.audioRecorded.problem(recordedRequest));
  if (request.product === 'text-to-speech') {
    if (!checks.speechPrices.check(priceSnapshot))
      return unreadable('audio', 'priceSnapshot', checks.speechPrices.problem(priceSnapshot));
    return { kind: 'audio', product: request.product, request, recordedRequest, priceSnapshot };
  }
  if (!checks.durationPrices.check(priceSnapshot))
    return unreadable('audio', 'priceSnapshot', checks.durationPrices.problem(priceSnapshot));
  return { kind: 'audio', product: request.product, request, recordedRequest, priceSnapshot };
}

const recordedContent = storedCheck(Type.Object({ content: Type.Array(RecordedPartSchema) }));

/**
 * The text of a recorded request's prompt parts, joined by newlines (long prompts were cut short when
 * recorded); undefined when it has none, or no content this release reads.
 */
export function recordedPrompt(recordedRequest: unknown): string | undefined {
  if (!recordedContent.check(recordedRequest)) return undefined;
  const texts = recordedRequest.content.flatMap((part) =>
    part.type === 'text' && typeof part.text === 'string' ? [part.text] : [],
  );
  return texts.length > 0 ? texts.join('\n') : undefined;
}

function nullOr<T>(check: StoredCheck<T>, value: unknown): value is T | null {
  return value === null || check.check(value);
}

/** A job's stored outcome checked against its kind's schemas (null: not there yet). */
function readOutputs<Upstream, Result>(
  kind: MediaKind,
  kindChecks: { upstreamResult: StoredCheck<Upstream>; result: StoredCheck<Result> },
  { fallbacks, upstreamResult, result }: Pick<StoredJobColumns, 'fallbacks' | 'upstreamResult' | 'result'>,
): JobOutputs<Upstream, Result> | UnreadableJobInput {
  if (!checks.fallbacks.check(fallbacks)) return unreadable(kind, 'fallbacks', checks.fallbacks.problem(fallbacks));
  if (!nullOr(kindChecks.upstreamResult, upstreamResult))
    return unreadable(kind, 'upstreamResult', kindChecks.upstreamResult.problem(upstreamResult));
  if (!nullOr(kindChecks.result, result)) return unreadable(kind, 'result', kindChecks.result.problem(result));
  return { fallbacks, upstreamResult, result };
}

/** A job's stored JSON, its input and its outcome, checked against its kind's schemas: typed, or why it cannot be read. */
export function readStoredJob(stored: StoredJobColumns): StoredMediaJob | UnreadableJobInput {
  const input = readJobInput(stored);
  if ('problem' in input) return input;
  switch (input.kind) {
    case 'image': {
      const outputs = readOutputs('image', outputChecks.image, stored);
      return 'problem' in outputs ? outputs : { ...input, ...outputs };
    }
    case 'video': {
      const outputs = readOutputs('video', outputChecks.video, stored);
      return 'problem' in outputs ? outputs : { ...input, ...outputs };
    }
    case 'audio': {
      const outputs = readOutputs('audio', outputChecks.audio, stored);
      return 'problem' in outputs ? outputs : { ...input, ...outputs };
    }
  }
}

/** Why `value` cannot be stored as a job's upstream answer or result of `kind`; undefined when it can. */
export function outputProblem(kind: MediaKind, field: 'upstreamResult' | 'result', value: unknown): string | undefined {
  const check = outputChecks[kind][field];
  return check.check(value)
    ? undefined
    : `the ${fieldNames[field]} of this ${kind} job is not of its kind's shape (${check.problem(value)})`;
}

/** What a job's stored result says of one of its outputs, for the media view. */
export interface ResultOutput {
  assetId: string;
  /** Of a layer decomposition: the base image (`zIndex` 0), or a layer with its place on the base. */
  layer?: { zIndex: number; box?: [number, number, number, number]; name?: string };
  /** Seconds of a video or audio output, as its job measured or was told them. */
  durationSeconds?: number;
  /** The words spoken in an audio output, where the provider gave its transcript. */
  transcript?: string;
}

/**
 * The outputs of a job's stored result in output order (an image job's `images`, the one output of a video
 * or audio job), with what the result says of each; none for a result this release cannot read.
 */
export function resultOutputs(kind: MediaKind, result: unknown): ResultOutput[] {
  switch (kind) {
    case 'image':
      return outputChecks.image.result.check(result) ? result.images.map(imageOutput) : [];
    case 'video':
      return outputChecks.video.result.check(result)
        ? [{ assetId: result.assetId, durationSeconds: result.measuredSeconds ?? result.durationSeconds }]
        : [];
    case 'audio': {
      if (!outputChecks.audio.result.check(result)) return [];
      const output: ResultOutput = { assetId: result.assetId };
      if (result.durationSeconds !== undefined) output.durationSeconds = result.durationSeconds;
      if (result.subtitle?.text) output.transcript = result.subtitle.text;
      return [output];
    }
  }
}

/** The text an audio job was asked to speak (text-to-speech) or to make (its prompt), from its stored request. */
export function requestedSpeech(request: unknown): string | undefined {
  if (!checks.speechRequest.check(request)) return undefined;
  return request.product === 'text-to-speech' ? request.text : request.textPrompt;
}

function imageOutput(image: StoredImageResult['images'][number]): ResultOutput {
  if (image.zIndex === undefined) return { assetId: image.assetId };
  const layer: NonNullable<ResultOutput['layer']> = { zIndex: image.zIndex };
  if (image.boundingBox) layer.box = image.boundingBox.absolute;
  if (image.name !== undefined) layer.name = image.name;
  return { assetId: image.assetId, layer };
}
