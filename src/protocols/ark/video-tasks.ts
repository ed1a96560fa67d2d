import { Type, type Static } from 'typebox';
import { wireCheck } from '../wire-check.ts';

/**
 * BytePlus ModelArk Seedance, asynchronous tasks: `POST /contents/generations/tasks` creates one,
 * `GET /contents/generations/tasks/{id}` reads it, `DELETE …/{id}` cancels a queued one (or deletes the
 * record of a finished one).
 */
export const seedanceTaskPaths = {
  create: '/contents/generations/tasks',
  task: (id: string) => `/contents/generations/tasks/${encodeURIComponent(id)}`,
};

export const SeedanceRole = Type.Union([
  Type.Literal('first_frame'),
  Type.Literal('last_frame'),
  Type.Literal('reference_image'),
  Type.Literal('reference_video'),
  Type.Literal('reference_audio'),
]);

export const SeedanceContentItem = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.String() }),
  Type.Object({
    type: Type.Literal('image_url'),
    image_url: Type.Object({ url: Type.String({ minLength: 1 }) }),
    role: Type.Optional(SeedanceRole),
  }),
  Type.Object({
    type: Type.Literal('video_url'),
    video_url: Type.Object({ url: Type.String({ minLength: 1 }) }),
    role: Type.Optional(SeedanceRole),
  }),
]);
export type SeedanceContentItem = Static<typeof SeedanceContentItem>;

export const SeedanceCreateRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  content: Type.Array(SeedanceContentItem, { minItems: 1 }),
  ratio: Type.Optional(Type.String()),
  resolution: Type.Optional(Type.String()),
  duration: Type.Optional(Type.Integer({ minimum: 1 })),
  seed: Type.Optional(Type.Integer({ minimum: -1 })),
  camera_fixed: Type.Optional(Type.Boolean()),
  watermark: Type.Optional(Type.Boolean()),
  generate_audio: Type.Optional(Type.Boolean()),
  return_last_frame: Type.Optional(Type.Boolean()),
  callback_url: Type.Optional(Type.String()),
  service_tier: Type.Optional(Type.Union([Type.Literal('default'), Type.Literal('flex')])),
  execution_expires_after: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type SeedanceCreateRequest = Static<typeof SeedanceCreateRequest>;
export const isSeedanceCreateRequest = wireCheck(SeedanceCreateRequest);

export const SeedanceCreateAnswer = Type.Object({ id: Type.String({ minLength: 1 }) });
export const isSeedanceCreateAnswer = wireCheck(SeedanceCreateAnswer);

export const SeedanceStatus = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('expired'),
]);
export type SeedanceStatus = Static<typeof SeedanceStatus>;

export const SeedanceTask = Type.Object({
  id: Type.String(),
  model: Type.Optional(Type.String()),
  status: SeedanceStatus,
  /** Empty or absent until the task succeeded; `video_url` is a signed URL valid about a day. */
  content: Type.Optional(
    Type.Union([
      Type.Null(),
      Type.Object({ video_url: Type.Optional(Type.String()), last_frame_url: Type.Optional(Type.String()) }),
    ]),
  ),
  usage: Type.Optional(
    Type.Union([
      Type.Null(),
      Type.Object({
        completion_tokens: Type.Optional(Type.Number({ minimum: 0 })),
        total_tokens: Type.Optional(Type.Number({ minimum: 0 })),
      }),
    ]),
  ),
  error: Type.Optional(
    Type.Union([
      Type.Null(),
      Type.Object({ code: Type.Optional(Type.String()), message: Type.Optional(Type.String()) }),
    ]),
  ),
  created_at: Type.Optional(Type.Number()),
  updated_at: Type.Optional(Type.Number()),
  seed: Type.Optional(Type.Number()),
  resolution: Type.Optional(Type.String()),
  ratio: Type.Optional(Type.String()),
  duration: Type.Optional(Type.Number({ minimum: 0 })),
  framespersecond: Type.Optional(Type.Number()),
  generate_audio: Type.Optional(Type.Boolean()),
});
export type SeedanceTask = Static<typeof SeedanceTask>;
export const isSeedanceTask = wireCheck(SeedanceTask);
