import { Type, type Static } from 'typebox';

/** The four sizes of OpenAI's video API, each a resolution and an aspect ratio. */
export const videoSizes = ['720x1280', '1280x720', '1024x1792', '1792x1024'] as const;
export type VideoSize = (typeof videoSizes)[number];

/** The longest prompt the protocol takes, in characters (code points). */
export const maxVideoPromptCharacters = 32_000;

/**
 * OpenAI Videos, `POST /videos` (JSON, or the multipart form the official SDKs send, where `seconds` is a
 * string of digits and nested fields are written `input_reference[image_url]`). Also the alpha surface's
 * request: every field is checked before routing, and any other field is refused.
 */
export const VideosCreateRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200 }),
    prompt: Type.String({ minLength: 1, maxLength: maxVideoPromptCharacters }),
    seconds: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 3_600 }), Type.String({ pattern: '^\\d{1,4}$' })], {
        description: 'Whole seconds',
      }),
    ),
    size: Type.Optional(Type.Union(videoSizes.map((size) => Type.Literal(size)))),
    input_reference: Type.Optional(
      Type.Object(
        {
          image_url: Type.Optional(Type.String({ description: 'An http(s) URL of the reference image' })),
          file_id: Type.Optional(
            Type.String({ description: 'An uploaded file: refused, no provider of the gateway takes one' }),
          ),
        },
        {
          additionalProperties: false,
          description: 'Exactly one of image_url or file_id',
          minProperties: 1,
          maxProperties: 1,
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type VideosCreateRequest = Static<typeof VideosCreateRequest>;

/** The fields the protocol names: any other is refused. */
export const videosCreateFields: ReadonlySet<string> = new Set(Object.keys(VideosCreateRequest.properties));
