/**
 * What a media job stores of its outcome, described once: the upstream's answer kept between generating and
 * archiving (so a job taken over resumes from it), and the result a succeeded job is shown by. Checked when
 * written and when read, like the job's input (`media-job.ts`).
 */

import Type, { type Static } from 'typebox';

/** A layer's box: `[left, top, right, bottom]`. */
const Box = Type.Tuple([Type.Number(), Type.Number(), Type.Number(), Type.Number()]);

const ImageFailureSchema = Type.Object({ index: Type.Number(), code: Type.String(), message: Type.String() });

/** The spec's `ImageResult.usage` keys, as the provider reported them. */
const ImageUsageSchema = Type.Object({
  generatedImages: Type.Optional(Type.Number()),
  inputTokens: Type.Optional(Type.Number()),
  outputTokens: Type.Optional(Type.Number()),
  totalTokens: Type.Optional(Type.Number()),
  inputImageTokens: Type.Optional(Type.Number()),
  outputImageTokens: Type.Optional(Type.Number()),
});

/** What a settlement that could not charge the whole cost adds to a result's usage. */
const ChargeFields = {
  usdCost: Type.Number(),
  unchargedUsdCost: Type.Optional(Type.Number()),
};

/** One output of an image job, archived: without links (those expire and are made when read). */
export const ArchivedImageSchema = Type.Object({
  assetId: Type.String(),
  objectKey: Type.String(),
  mediaType: Type.String(),
  /** The provider's own URL, when it answered with one (it expires). */
  providerUrl: Type.Optional(Type.String()),
  zIndex: Type.Optional(Type.Number()),
  boundingBox: Type.Optional(Type.Object({ absolute: Box, normalized: Box })),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
});
export type ArchivedImage = Static<typeof ArchivedImageSchema>;

/** What a succeeded image job keeps as its result; `failures`: outputs the provider failed, or that could not be archived. */
export const StoredImageResultSchema = Type.Object({
  images: Type.Array(ArchivedImageSchema),
  usage: Type.Intersect([ImageUsageSchema, Type.Object(ChargeFields)]),
  failures: Type.Optional(Type.Array(ImageFailureSchema)),
});
export type StoredImageResult = Static<typeof StoredImageResultSchema>;

/** The provider's answer to an image job between generating and archiving: outputs already in the store are referenced. */
export const ImageUpstreamResultSchema = Type.Object({
  images: Type.Array(
    Type.Object({
      output: Type.Union([
        Type.Object({ kind: Type.Literal('url'), url: Type.String() }),
        Type.Object({ kind: Type.Literal('inline'), mediaType: Type.String(), data: Type.String() }),
        Type.Object({ kind: Type.Literal('stored'), objectKey: Type.String(), mediaType: Type.String() }),
      ]),
      size: Type.Optional(Type.String()),
      layer: Type.Optional(
        Type.Object({
          zIndex: Type.Number(),
          box: Type.Optional(Box),
          name: Type.Optional(Type.String()),
          description: Type.Optional(Type.String()),
        }),
      ),
    }),
  ),
  failures: Type.Array(ImageFailureSchema),
  usage: ImageUsageSchema,
  quality: Type.Optional(Type.String()),
});
export type ImageUpstreamResult = Static<typeof ImageUpstreamResultSchema>;

/** A video job's archived video and what the provider said of it (links are made when it is read). */
export const StoredVideoSchema = Type.Object({
  assetId: Type.String(),
  objectKey: Type.String(),
  mediaType: Type.String(),
  bytes: Type.Number(),
  /** Seconds of the archived file (its own header), else as the provider reported. */
  durationSeconds: Type.Number(),
  /** Seconds read from the archived file's own header, when it could be read. */
  measuredSeconds: Type.Optional(Type.Number()),
  resolution: Type.Optional(Type.String()),
  completionTokens: Type.Optional(Type.Number()),
  totalTokens: Type.Optional(Type.Number()),
  providerUsage: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  /** The provider's own (temporary) link to the video. */
  providerUrl: Type.Optional(Type.String()),
});
export type StoredVideo = Static<typeof StoredVideoSchema>;

/** What a succeeded video job keeps: its video, and the usage the spec's task shows. */
export const StoredVideoResultSchema = Type.Intersect([
  StoredVideoSchema,
  Type.Object({
    usage: Type.Object({
      completionTokens: Type.Number(),
      totalTokens: Type.Number(),
      durationSeconds: Type.Number(),
      providerUsage: Type.Record(Type.String(), Type.Unknown()),
      ...ChargeFields,
    }),
  }),
]);
export type StoredVideoResult = Static<typeof StoredVideoResultSchema>;

const Timed = { text: Type.String(), startTime: Type.Number(), endTime: Type.Number() };

/** What a succeeded audio job keeps: its archived audio (links are made when read) and what the provider said of it. */
export const StoredAudioResultSchema = Type.Object({
  assetId: Type.String(),
  objectKey: Type.String(),
  mediaType: Type.String(),
  /** Playable seconds (generation with reference). */
  durationSeconds: Type.Optional(Type.Number()),
  /** Seconds the model made, the billed ones (generation with reference). */
  originalDurationSeconds: Type.Optional(Type.Number()),
  providerUrl: Type.Optional(Type.String()),
  subtitle: Type.Optional(
    Type.Object({
      text: Type.String(),
      sentences: Type.Array(Type.Object({ ...Timed, words: Type.Array(Type.Object(Timed)) })),
    }),
  ),
});
export type StoredAudioResult = Static<typeof StoredAudioResultSchema>;

/** The provider's audio as an audio job keeps it between storing it and settling. */
export const AudioUpstreamResultSchema = Type.Intersect([
  StoredAudioResultSchema,
  Type.Object({
    bytes: Type.Number(),
    /** Characters the provider says it billed (text-to-speech). */
    billedCharacters: Type.Optional(Type.Number()),
    /** Seconds read from the audio file itself, when it could be read (generation with reference). */
    measuredSeconds: Type.Optional(Type.Number()),
  }),
]);
export type AudioUpstreamResult = Static<typeof AudioUpstreamResultSchema>;
