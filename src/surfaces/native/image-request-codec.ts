import { Type, type Static } from '@fastify/type-provider-typebox';
import { imageBackgrounds, imageOutputFormats, imageQualities, layerResolutions } from '../../domain/image.ts';
import { Identifier } from '../../http/schemas.ts';
import { httpUrl, requiredField } from './content-part-fields.ts';
import type { ImageContentPart, NativeImageInput } from '../../gateway/image-request-check.ts';

const literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((value) => Type.Literal(value)));

/**
 * One content part. A single object with every part's fields (rather than a union) so that unknown fields
 * are stripped reliably; which fields a type needs is checked in `decodeImageBody`.
 */
const ContentPart = Type.Object(
  {
    type: literals(['text', 'imageUrl', 'imageBase64', 'imageAssetId'] as const),
    text: Type.Optional(Type.String({ maxLength: 100_000 })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 8_192 })),
    data: Type.Optional(Type.String({ minLength: 1 })),
    mediaType: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    assetId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
);

/** The body of every native image route (spec, Native: image); unknown fields are stripped. */
export const ImageGenerationBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200 }),
    content: Type.Array(ContentPart, { minItems: 1, maxItems: 64 }),
    size: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}x[1-9][0-9]{0,5}$' })),
    numberOfImages: Type.Optional(Type.Integer({ minimum: 1, maximum: 15 })),
    guidanceScale: Type.Optional(Type.Number({ minimum: 1, maximum: 10 })),
    outputFormat: Type.Optional(literals(imageOutputFormats)),
    quality: Type.Optional(literals(imageQualities)),
    background: Type.Optional(literals(imageBackgrounds)),
    outputCompression: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    watermark: Type.Optional(Type.Boolean()),
    optimizePromptOptions: Type.Optional(
      Type.Object({ mode: literals(['standard', 'fast'] as const) }, { additionalProperties: false }),
    ),
    maxTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    layerDecomposition: Type.Optional(Type.Boolean()),
    resolution: Type.Optional(literals(layerResolutions)),
  },
  { additionalProperties: false },
);
export type ImageGenerationBody = Static<typeof ImageGenerationBody>;

/** A generation id as the gateway issues them: anything else answers 404 before any lookup. */
export const GenerationIdParams = Type.Object({ generationId: Identifier });

/** The body as the gateway's image pipeline takes it: each part with exactly the fields its type needs. */
export function decodeImageBody(body: ImageGenerationBody): NativeImageInput {
  const content = body.content.map((part, index): ImageContentPart => {
    const where = `content[${index}]`;
    const need = (field: 'text' | 'url' | 'data' | 'assetId') => requiredField(part, field, where);
    switch (part.type) {
      case 'text':
        return { type: 'text', text: need('text') };
      case 'imageUrl':
        return { type: 'imageUrl', url: httpUrl(need('url'), where) };
      case 'imageBase64':
        return {
          type: 'imageBase64',
          data: need('data'),
          ...(part.mediaType !== undefined ? { mediaType: part.mediaType } : {}),
        };
      default:
        return { type: 'imageAssetId', assetId: need('assetId') };
    }
  });
  return {
    modelId: body.model,
    content,
    size: body.size,
    numberOfImages: body.numberOfImages,
    guidanceScale: body.guidanceScale,
    outputFormat: body.outputFormat,
    quality: body.quality,
    background: body.background,
    outputCompression: body.outputCompression,
    watermark: body.watermark,
    optimizePromptMode: body.optimizePromptOptions?.mode,
    maxTokens: body.maxTokens,
    layerDecomposition: body.layerDecomposition,
    resolution: body.resolution,
  };
}
