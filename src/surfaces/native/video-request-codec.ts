import { Type, type Static } from '@fastify/type-provider-typebox';
import { GatewayError } from '../../domain/errors.ts';
import { Identifier } from '../../http/schemas.ts';
import { videoImageRoles, videoResolutions } from '../../domain/video.ts';
import { httpUrl, requiredField } from './content-part-fields.ts';
import type { NativeVideoInput, VideoContentPart } from '../../gateway/video-request-check.ts';

const literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)));

/** One content part: every part's fields in one object, so unknown fields are stripped; `decodeVideoBody` checks which a type needs. */
const ContentPart = Type.Object(
  {
    type: literals([
      'text',
      'imageUrl',
      'imageBase64',
      'imageAssetId',
      'videoUrl',
      'videoBase64',
      'videoAssetId',
    ] as const),
    text: Type.Optional(Type.String({ maxLength: 100_000 })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 8_192 })),
    data: Type.Optional(Type.String({ minLength: 1 })),
    mediaType: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    assetId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    role: Type.Optional(literals(videoImageRoles)),
  },
  { additionalProperties: false },
);

/** The body of the native video routes (spec, Native: video); unknown fields are stripped. */
export const VideoGenerationBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200 }),
    content: Type.Array(ContentPart, { minItems: 1, maxItems: 64 }),
    duration: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600 })),
    resolution: Type.Optional(literals(videoResolutions)),
    ratio: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
    seed: Type.Optional(Type.Integer({ minimum: -1, maximum: 4_294_967_295 })),
    watermark: Type.Optional(Type.Boolean()),
    cameraFixed: Type.Optional(Type.Boolean()),
    maxTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    generateAudio: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type VideoGenerationBody = Static<typeof VideoGenerationBody>;

/** A task id as the gateway issues them: anything else answers 404 before any lookup. */
export const TaskIdParams = Type.Object({ taskId: Identifier });

/** The body as the video pipeline takes it: each part with exactly the fields its type needs, in order. */
export function decodeVideoBody(body: VideoGenerationBody): NativeVideoInput {
  const content = body.content.map((part, index): VideoContentPart => {
    const where = `content[${index}]`;
    const need = (field: 'text' | 'url' | 'data' | 'assetId') => requiredField(part, field, where);
    const role = part.role !== undefined ? { role: part.role } : {};
    const mediaType = part.mediaType !== undefined ? { mediaType: part.mediaType } : {};
    const type: string = part.type;
    if (part.role !== undefined && !type.startsWith('image'))
      throw new GatewayError('GW_VALIDATION', `${where}: "role" applies to image parts only`);
    switch (part.type) {
      case 'text':
        return { type: 'text', text: need('text') };
      case 'imageUrl':
        return { type: 'imageUrl', url: httpUrl(need('url'), where), ...role };
      case 'imageBase64':
        return { type: 'imageBase64', data: need('data'), ...mediaType, ...role };
      case 'imageAssetId':
        return { type: 'imageAssetId', assetId: need('assetId'), ...role };
      case 'videoUrl':
        return { type: 'videoUrl', url: httpUrl(need('url'), where) };
      case 'videoBase64':
        return { type: 'videoBase64', data: need('data'), ...mediaType };
      default:
        return { type: 'videoAssetId', assetId: need('assetId') };
    }
  });
  return {
    modelId: body.model,
    content,
    duration: body.duration,
    resolution: body.resolution,
    ratio: body.ratio,
    seed: body.seed,
    watermark: body.watermark,
    cameraFixed: body.cameraFixed,
    maxTokens: body.maxTokens,
    generateAudio: body.generateAudio,
  };
}
