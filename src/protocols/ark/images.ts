import { Type, type Static } from 'typebox';
import { wireCheck } from '../wire-check.ts';

/**
 * BytePlus ModelArk Seedream, `POST /images/generations` (synchronous). The layer decomposition mode is an
 * assumption of ours built on these shapes (see wire-notes.md beside this file).
 */
export const SeedreamRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  prompt: Type.String(),
  /** One reference image (URL or data URL), or several. */
  image: Type.Optional(
    Type.Union([
      Type.String({ minLength: 1 }),
      Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 14 }),
    ]),
  ),
  size: Type.Optional(Type.String()),
  seed: Type.Optional(Type.Integer()),
  guidance_scale: Type.Optional(Type.Number()),
  sequential_image_generation: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('disabled')])),
  sequential_image_generation_options: Type.Optional(
    Type.Object({ max_images: Type.Integer({ minimum: 1, maximum: 15 }) }),
  ),
  response_format: Type.Optional(Type.Union([Type.Literal('url'), Type.Literal('b64_json')])),
  output_format: Type.Optional(Type.Union([Type.Literal('png'), Type.Literal('jpeg')])),
  watermark: Type.Optional(Type.Boolean()),
  optimize_prompt_options: Type.Optional(
    Type.Object({ mode: Type.Union([Type.Literal('standard'), Type.Literal('fast')]) }),
  ),
  stream: Type.Optional(Type.Boolean()),
  /** Layer mode: split the one `image` into a base image and layers (a boolean, as the vendor's SDK sends it). */
  layer_decomposition: Type.Optional(Type.Boolean()),
  /** Layer mode (assumed): the output tier instead of `size`. */
  resolution: Type.Optional(
    Type.Union([Type.Literal('1K'), Type.Literal('1.5K'), Type.Literal('2K'), Type.Literal('auto')]),
  ),
});
export type SeedreamRequest = Static<typeof SeedreamRequest>;
export const isSeedreamRequest = wireCheck(SeedreamRequest);

const ItemError = Type.Object({ code: Type.String(), message: Type.String() });

/** A box's edges, `[left, top, right, bottom]`. */
const LayerEdges = Type.Array(Type.Number(), { minItems: 4, maxItems: 4 });

/** One output of the answer: an image (URL or base64), or the error of an image the group could not make. */
export const SeedreamItem = Type.Object({
  url: Type.Optional(Type.String()),
  b64_json: Type.Optional(Type.String()),
  size: Type.Optional(Type.String()),
  error: Type.Optional(ItemError),
  /** Layer mode (assumed): 0 for the base image, then ascending. */
  z_index: Type.Optional(Type.Integer({ minimum: 0 })),
  /**
   * Layer mode: where the layer lies on the base image, as the vendor's SDK types it (`absolute` in pixels,
   * `normalized` from 0 to 1000, each `[left, top, right, bottom]`); a bare array of pixels is read too.
   */
  bounding_box: Type.Optional(
    Type.Union([
      LayerEdges,
      Type.Object({ absolute: Type.Optional(LayerEdges), normalized: Type.Optional(LayerEdges) }),
    ]),
  ),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
});
export type SeedreamItem = Static<typeof SeedreamItem>;

export const SeedreamUsage = Type.Object({
  generated_images: Type.Optional(Type.Number({ minimum: 0 })),
  output_tokens: Type.Optional(Type.Number({ minimum: 0 })),
  total_tokens: Type.Optional(Type.Number({ minimum: 0 })),
});

export const SeedreamAnswer = Type.Object({
  model: Type.Optional(Type.String()),
  created: Type.Optional(Type.Number()),
  data: Type.Array(SeedreamItem),
  usage: Type.Optional(SeedreamUsage),
});
export type SeedreamAnswer = Static<typeof SeedreamAnswer>;
export const isSeedreamAnswer = wireCheck(SeedreamAnswer);

/** Streamed answers (`stream: true`): one event per finished or failed image, then the completion with usage, then `data: [DONE]`. */
export const SeedreamStreamEvent = Type.Union([
  Type.Object({
    type: Type.Literal('image_generation.partial_succeeded'),
    image_index: Type.Integer({ minimum: 0 }),
    url: Type.Optional(Type.String()),
    b64_json: Type.Optional(Type.String()),
    size: Type.Optional(Type.String()),
  }),
  Type.Object({
    type: Type.Literal('image_generation.partial_failed'),
    image_index: Type.Integer({ minimum: 0 }),
    error: ItemError,
  }),
  Type.Object({ type: Type.Literal('image_generation.completed'), usage: Type.Optional(SeedreamUsage) }),
]);
export type SeedreamStreamEvent = Static<typeof SeedreamStreamEvent>;
export const isSeedreamStreamEvent = wireCheck(SeedreamStreamEvent);

/** The stream's last data line, after the completion event. */
export const seedreamStreamTerminator = '[DONE]';
