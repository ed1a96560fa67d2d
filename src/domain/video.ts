/** Canonical video generation: what a video adapter is asked (a task), and what it reports when polled. */

import Type, { type Static } from 'typebox';

export const videoResolutions = ['480p', '720p', '1080p', '4k'] as const;
export type VideoResolution = (typeof videoResolutions)[number];

export const videoImageRoles = ['firstFrame', 'lastFrame', 'referenceImage'] as const;
export type VideoImageRole = (typeof videoImageRoles)[number];

/** A media input as an adapter receives it: a public URL, or bytes. */
export type VideoMediaSource = { kind: 'url'; url: string } | { kind: 'inline'; mediaType: string; data: string };

/** A media input as a job stores it: an archived asset stays a reference until the job runs. */
export const StoredVideoMediaSourceSchema = Type.Union([
  Type.Object({ kind: Type.Literal('url'), url: Type.String() }),
  Type.Object({ kind: Type.Literal('inline'), mediaType: Type.String(), data: Type.String() }),
  Type.Object({ kind: Type.Literal('asset'), objectKey: Type.String(), mediaType: Type.String() }),
]);
export type StoredVideoMediaSource = Static<typeof StoredVideoMediaSourceSchema>;

/** The request's content in its order: prompt text, images with their role, reference videos. */
export type VideoContentItem<Source = VideoMediaSource> =
  | { type: 'text'; text: string }
  | { type: 'image'; role: VideoImageRole; source: Source }
  | { type: 'video'; source: Source };

/** Every field is already validated against the spec and the model's capabilities. */
export interface VideoGenerationRequest<Source = VideoMediaSource> {
  content: ReadonlyArray<VideoContentItem<Source>>;
  duration?: number;
  resolution?: VideoResolution;
  ratio?: string;
  seed?: number;
  watermark?: boolean;
  cameraFixed?: boolean;
  generateAudio?: boolean;
  maxTokens?: number;
}

/** The adapter's request as a video job stores it (the upstream model is the job row's), with stored sources. */
export const StoredVideoRequestSchema = Type.Object({
  content: Type.Array(
    Type.Union([
      Type.Object({ type: Type.Literal('text'), text: Type.String() }),
      Type.Object({
        type: Type.Literal('image'),
        role: Type.Enum(videoImageRoles),
        source: StoredVideoMediaSourceSchema,
      }),
      Type.Object({ type: Type.Literal('video'), source: StoredVideoMediaSourceSchema }),
    ]),
  ),
  duration: Type.Optional(Type.Number()),
  resolution: Type.Optional(Type.Enum(videoResolutions)),
  ratio: Type.Optional(Type.String()),
  seed: Type.Optional(Type.Number()),
  watermark: Type.Optional(Type.Boolean()),
  cameraFixed: Type.Optional(Type.Boolean()),
  generateAudio: Type.Optional(Type.Boolean()),
  maxTokens: Type.Optional(Type.Number()),
});
export type StoredVideoRequest = Static<typeof StoredVideoRequestSchema>;

/** Where an upstream task stands; `expired` is a provider's own time-out. */
export type VideoTaskState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'expired';

export interface VideoTaskReport {
  state: VideoTaskState;
  /** When succeeded: the video, as a (temporary) URL or as bytes. */
  video?: VideoMediaSource;
  /** The URL is the provider's own and is read with its credentials (sent to the provider's origin only). */
  videoNeedsCredentials?: boolean;
  /** What the provider says it delivered; the archived file's own header is preferred for billing. */
  durationSeconds?: number;
  resolution?: string;
  completionTokens?: number;
  totalTokens?: number;
  /** The provider's usage object as it reported it. */
  providerUsage?: Readonly<Record<string, unknown>>;
  /** When failed, cancelled or expired. */
  error?: string;
}
