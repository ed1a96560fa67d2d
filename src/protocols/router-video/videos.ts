import { Type, type Static } from 'typebox';
import { wireCheck } from '../wire-check.ts';

/**
 * The routing provider's asynchronous video API (OpenRouter's, see the wire notes): `POST /videos` answers 202
 * with a job, `GET /videos/{id}` reads it, `GET /videos/{id}/content?index=N` (with the key) streams the MP4.
 * The alpha surface's videos routes answer in these shapes too.
 */
export const routerVideoPaths = {
  create: '/videos',
  job: (id: string) => `/videos/${encodeURIComponent(id)}`,
};

export const RouterVideoStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('in_progress'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('expired'),
]);
export type RouterVideoStatus = Static<typeof RouterVideoStatus>;

const ImageUrl = Type.Object({ url: Type.String({ minLength: 1 }) });

export const RouterVideoRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  prompt: Type.Optional(Type.String()),
  duration: Type.Optional(Type.Integer({ minimum: 1 })),
  resolution: Type.Optional(Type.String()),
  aspect_ratio: Type.Optional(Type.String()),
  size: Type.Optional(Type.String()),
  seed: Type.Optional(Type.Integer()),
  generate_audio: Type.Optional(Type.Boolean()),
  frame_images: Type.Optional(
    Type.Array(
      Type.Object({
        type: Type.Literal('image_url'),
        image_url: ImageUrl,
        frame_type: Type.Union([Type.Literal('first_frame'), Type.Literal('last_frame')]),
      }),
    ),
  ),
  input_references: Type.Optional(
    Type.Array(
      Type.Union([
        Type.Object({ type: Type.Literal('image_url'), image_url: ImageUrl }),
        Type.Object({ type: Type.Literal('video_url'), video_url: ImageUrl }),
      ]),
    ),
  ),
  callback_url: Type.Optional(Type.String()),
  provider: Type.Optional(Type.Object({})),
});
export type RouterVideoRequest = Static<typeof RouterVideoRequest>;
export const isRouterVideoRequest = wireCheck(RouterVideoRequest);

export const RouterVideoJob = Type.Object({
  id: Type.String({ minLength: 1 }),
  polling_url: Type.Optional(Type.String()),
  status: RouterVideoStatus,
  generation_id: Type.Optional(Type.String()),
  unsigned_urls: Type.Optional(Type.Array(Type.String())),
  /** Present once completed: what the job cost, in USD. */
  usage: Type.Optional(
    Type.Object({ cost: Type.Optional(Type.Number({ minimum: 0 })), is_byok: Type.Optional(Type.Boolean()) }),
  ),
  /** A string on failure. */
  error: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type RouterVideoJob = Static<typeof RouterVideoJob>;
export const isRouterVideoJob = wireCheck(RouterVideoJob);
