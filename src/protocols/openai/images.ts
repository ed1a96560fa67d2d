import { Type, type Static } from 'typebox';
import { wireCheck } from '../wire-check.ts';

const strings = <T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)));

/**
 * OpenAI Images, `POST /images/generations` (JSON). Also the alpha surface's request: `prompt` and `model`
 * are required there; `n` is what the estimate holds for; the rest is forwarded as given or translated.
 */
export const ImagesGenerateRequest = Type.Object({
  model: Type.String({ minLength: 1, maxLength: 200 }),
  prompt: Type.String({ minLength: 1, maxLength: 32_000 }),
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: 15 })),
  size: Type.Optional(Type.String({ maxLength: 32 })),
  quality: Type.Optional(Type.String({ maxLength: 16 })),
  output_format: Type.Optional(strings(['png', 'jpeg', 'webp'] as const)),
  output_compression: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  response_format: Type.Optional(strings(['url', 'b64_json'] as const)),
  background: Type.Optional(strings(['transparent', 'opaque', 'auto'] as const)),
  style: Type.Optional(Type.String({ maxLength: 16 })),
  moderation: Type.Optional(Type.String({ maxLength: 16 })),
  stream: Type.Optional(Type.Boolean()),
  partial_images: Type.Optional(Type.Integer({ minimum: 0, maximum: 3 })),
  user: Type.Optional(Type.String({ maxLength: 256 })),
  provider: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type ImagesGenerateRequest = Static<typeof ImagesGenerateRequest>;

export const ImagesUsage = Type.Object({
  input_tokens: Type.Optional(Type.Number({ minimum: 0 })),
  output_tokens: Type.Optional(Type.Number({ minimum: 0 })),
  total_tokens: Type.Optional(Type.Number({ minimum: 0 })),
  input_tokens_details: Type.Optional(
    Type.Object({
      image_tokens: Type.Optional(Type.Number({ minimum: 0 })),
      text_tokens: Type.Optional(Type.Number({ minimum: 0 })),
    }),
  ),
});
export type ImagesUsage = Static<typeof ImagesUsage>;

/** The ImagesResponse: `data[]` of `b64_json` (GPT image models) or `url` (DALL·E), and token usage. */
export const ImagesAnswer = Type.Object({
  created: Type.Optional(Type.Number()),
  data: Type.Array(
    Type.Object({
      b64_json: Type.Optional(Type.String()),
      url: Type.Optional(Type.String()),
      revised_prompt: Type.Optional(Type.String()),
    }),
  ),
  quality: Type.Optional(Type.String()),
  size: Type.Optional(Type.String()),
  output_format: Type.Optional(Type.String()),
  background: Type.Optional(Type.String()),
  usage: Type.Optional(ImagesUsage),
});
export type ImagesAnswer = Static<typeof ImagesAnswer>;
export const isImagesAnswer = wireCheck(ImagesAnswer);

/** Streamed (`stream: true`): `event:` + `data:` pairs; partial images, then one completed event per image with usage. */
export const ImagesStreamEvent = Type.Union([
  Type.Object({
    type: Type.Literal('image_generation.partial_image'),
    b64_json: Type.String(),
    partial_image_index: Type.Integer({ minimum: 0 }),
  }),
  Type.Object({
    type: Type.Literal('image_generation.completed'),
    b64_json: Type.String(),
    quality: Type.Optional(Type.String()),
    size: Type.Optional(Type.String()),
    usage: Type.Optional(ImagesUsage),
  }),
]);
export type ImagesStreamEvent = Static<typeof ImagesStreamEvent>;
export const isImagesStreamEvent = wireCheck(ImagesStreamEvent);
