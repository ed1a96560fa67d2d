import { Type, type Static } from '@fastify/type-provider-typebox';
import { CapabilitiesSchema, VoiceSchema } from '../../config/config-schema.ts';
import type { Capabilities } from '../../domain/capabilities.ts';
import { imageOutputFormats, type LayerBox } from '../../domain/image.ts';
import { audioMediaTypes, type AudioSubtitle } from '../../domain/speech.ts';

/** Answers of the native API (spec, Resources): what the OpenAPI document shows (answer-agreements.ts beside it checks them against the views). */

/** What archived media is served as: the image formats, MP4 video, and the audio formats. */
export const archivedMediaTypes = [
  ...imageOutputFormats.map((format) => `image/${format}`),
  'video/mp4',
  ...Object.values(audioMediaTypes),
];

const EffectiveCapabilitiesSchema = Type.Unsafe<Capabilities>({
  ...CapabilitiesSchema,
  description: 'The effective capabilities of the priority-winning provider row; absent means unconstrained',
});

export const ModelSchema = Type.Object(
  {
    modelId: Type.String({ description: 'Pass as `model` in requests' }),
    name: Type.Optional(Type.String()),
    providerIds: Type.Array(Type.String()),
    inputModalities: Type.Array(Type.String()),
    outputModalities: Type.Array(Type.String()),
    isActive: Type.Literal(true),
    revision: Type.Integer(),
    capabilities: Type.Optional(EffectiveCapabilitiesSchema),
    createdAt: Type.Optional(Type.String()),
    updatedAt: Type.Optional(Type.String()),
  },
  { description: "The spec's Model" },
);

export const CostEstimateSchema = Type.Object(
  {
    data: Type.Object({
      estimatedUserCost: Type.Number({ minimum: 0, description: 'USD: what submitting holds' }),
      currency: Type.Literal('USD'),
    }),
    success: Type.Literal(true),
    status: Type.Literal(200),
  },
  { description: 'The cost estimate: exactly what submitting the same body holds; nothing is stored' },
);

const Box = Type.Unsafe<LayerBox>(
  Type.Array(Type.Integer(), { minItems: 4, maxItems: 4, description: '[left, top, right, bottom]' }),
);

const imageFields = {
  zIndex: Type.Optional(Type.Integer({ description: 'Layer order, 0 = base (layer decomposition only)' })),
  boundingBox: Type.Optional(Type.Object({ absolute: Box, normalized: Box })),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
};

/** Stands where an output's link and asset id were once media retention (`media.retentionDays`) has deleted it. */
export const AssetExpired = Type.Literal(true, {
  description: 'The archived output was deleted after media.retentionDays: no link or asset id is left of it',
});

const ImageSchema = Type.Union([
  Type.Object({
    assetId: Type.String({ description: 'Reusable as `imageAssetId` by the same account' }),
    downloadUrl: Type.String({ description: 'The archived output: an expiring signed link' }),
    url: Type.Optional(Type.String({ description: "The provider's own URL, when it answered with one (it expires)" })),
    ...imageFields,
  }),
  Type.Object({ assetExpired: AssetExpired, ...imageFields }),
]);

const ImageUsageSchema = Type.Object({
  generatedImages: Type.Optional(Type.Number()),
  inputTokens: Type.Optional(Type.Number()),
  outputTokens: Type.Optional(Type.Number()),
  totalTokens: Type.Optional(Type.Number()),
  inputImageTokens: Type.Optional(Type.Number()),
  outputImageTokens: Type.Optional(Type.Number()),
  usdCost: Type.Number({ description: 'What the job was charged, in USD' }),
});

export const ImageResultSchema = Type.Object(
  { images: Type.Array(ImageSchema), usage: ImageUsageSchema },
  { description: "The spec's ImageResult" },
);

const imageJobStates = ['queued', 'processing', 'succeeded', 'failed'] as const;

export const ImageJobSchema = Type.Object(
  {
    generationId: Type.String(),
    status: Type.Enum(imageJobStates),
    result: Type.Optional(ImageResultSchema),
    error: Type.Optional(Type.String()),
  },
  { description: "The spec's async image job: polling changes nothing" },
);

/** The waiting route's answer when the job succeeded in time: the ImageResult with its generation id. */
export const WaitedImageSchema = Type.Object(
  { generationId: Type.String(), ...ImageResultSchema.properties },
  { description: 'The job succeeded within jobs.syncWaitMs' },
);

export const QueuedJobSchema = Type.Object(
  { generationId: Type.String(), status: Type.Enum(imageJobStates) },
  { description: 'Queued: poll GET /api/v1/image/generations/async/{generationId}' },
);

export const SubmittedAudioSchema = Type.Object(
  { generationId: Type.String() },
  { description: 'Queued: poll GET /api/v1/audio/generations/{generationId}' },
);

export const VideoTaskSchema = Type.Object(
  {
    taskId: Type.String({ description: "The gateway's generation id; provider task ids never leave the gateway" }),
    generationId: Type.String(),
    providerId: Type.String(),
    status: Type.Enum(['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const),
    model: Type.String(),
    content: Type.Array(Type.Unknown(), {
      description: 'The request content in order, base64 values cut to their first characters',
    }),
    videoUrl: Type.Optional(Type.String()),
    downloadUrl: Type.Optional(Type.String()),
    assetId: Type.Optional(Type.String()),
    assetExpired: Type.Optional(AssetExpired),
    usage: Type.Optional(
      Type.Object({
        completionTokens: Type.Number(),
        totalTokens: Type.Number(),
        usdCost: Type.Number(),
        durationSeconds: Type.Number(),
        providerUsage: Type.Record(Type.String(), Type.Unknown()),
      }),
    ),
    error: Type.Optional(Type.String()),
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  { description: "The spec's VideoTask" },
);

const Word = Type.Object({ text: Type.String(), startTime: Type.Number(), endTime: Type.Number() });
const Subtitle = Type.Unsafe<AudioSubtitle>(
  Type.Object(
    { text: Type.String(), sentences: Type.Array(Type.Object({ ...Word.properties, words: Type.Array(Word) })) },
    { description: 'The transcript, its sentences and their words; times in milliseconds from the start of the audio' },
  ),
);

export const AudioJobSchema = Type.Object(
  {
    generationId: Type.String(),
    product: Type.Optional(
      Type.Enum(['text-to-speech', 'generation-with-reference'] as const, {
        description: 'Absent only for a job whose stored request this release cannot read (it fails with the reason)',
      }),
    ),
    status: Type.Enum(['queued', 'processing', 'succeeded', 'failed'] as const),
    audioUrl: Type.Optional(Type.String({ description: 'Signed download link, once succeeded' })),
    assetExpired: Type.Optional(AssetExpired),
    durationSeconds: Type.Optional(Type.Number()),
    originalDurationSeconds: Type.Optional(
      Type.Number({ description: 'The billed duration (generation with reference)' }),
    ),
    providerUrl: Type.Optional(Type.String()),
    subtitle: Type.Optional(Subtitle),
    error: Type.Optional(Type.String()),
  },
  { description: "The spec's audio job" },
);

export const VoiceEntrySchema = Type.Object({
  ...VoiceSchema.properties,
  capabilities: Type.Object({ contextTexts: Type.Boolean() }),
});
export const VoiceListSchema = Type.Object(
  { voices: Type.Array(VoiceEntrySchema), total: Type.Integer({ minimum: 0 }) },
  { description: 'The voice catalog, filtered' },
);

const Usage = Type.Object({ promptTokens: Type.Number(), completionTokens: Type.Number(), totalTokens: Type.Number() });

/** One `data:` event of the native text stream. */
export const TextChunkSchema = Type.Object({
  delta: Type.String(),
  toolCalls: Type.Optional(
    Type.Array(
      Type.Object({
        index: Type.Integer(),
        id: Type.Optional(Type.String()),
        type: Type.Optional(Type.Literal('function')),
        function: Type.Object({ name: Type.Optional(Type.String()), arguments: Type.String() }),
      }),
      {
        description:
          "OpenAI's fragment shape: the first fragment of a call has its id and name, later ones more arguments",
      },
    ),
  ),
  logprobs: Type.Optional(
    Type.Array(
      Type.Object({
        token: Type.String(),
        logprob: Type.Number({ maximum: 0 }),
        topLogprobs: Type.Array(Type.Object({ token: Type.String(), logprob: Type.Number({ maximum: 0 }) })),
      }),
      {
        description:
          'With `logprobs`: the tokens of the next chunk, each with its log probability and, with `topLogprobs`, the likeliest tokens at its place',
      },
    ),
  ),
  finishReason: Type.Optional(Type.String()),
  usage: Type.Optional(Usage),
});
export type TextChunk = Static<typeof TextChunkSchema>;

/** What the native text stream carries: chunks, or after a failure once it began, one error event (then it closes without [DONE]). */
export const TextStreamEventSchema = Type.Union([TextChunkSchema, Type.Object({ error: Type.String() })]);
