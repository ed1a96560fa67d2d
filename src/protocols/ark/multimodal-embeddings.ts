import { Type, type Static } from 'typebox';
import { Vector } from '../vector.ts';
import { wireCheck } from '../wire-check.ts';

/** One input part of a BytePlus ModelArk multimodal embedding request. */
export const MultimodalPart = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.String() }),
  Type.Object({ type: Type.Literal('image_url'), image_url: Type.Object({ url: Type.String() }) }),
  Type.Object({ type: Type.Literal('video_url'), video_url: Type.Object({ url: Type.String() }) }),
]);
export type MultimodalPart = Static<typeof MultimodalPart>;

/** `POST /embeddings/multimodal`: the parts of one call are fused into one vector. */
export const MultimodalEmbeddingsRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  input: Type.Array(MultimodalPart, { minItems: 1 }),
  encoding_format: Type.Optional(Type.Literal('float')),
  dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type MultimodalEmbeddingsRequest = Static<typeof MultimodalEmbeddingsRequest>;
export const isMultimodalEmbeddingsRequest = wireCheck(MultimodalEmbeddingsRequest);

/** Its answer: `data` is one object, the fused vector. Token counts of another type are no count, not a broken answer. */
export const MultimodalEmbeddingsAnswer = Type.Object({
  data: Type.Object({ embedding: Vector }),
  usage: Type.Optional(Type.Union([Type.Object({ prompt_tokens: Type.Optional(Type.Unknown()) }), Type.Null()])),
});
export type MultimodalEmbeddingsAnswer = Static<typeof MultimodalEmbeddingsAnswer>;
export const isMultimodalEmbeddingsAnswer = wireCheck(MultimodalEmbeddingsAnswer);

/** The protocol's error body (OpenAI's shape). */
export const ArkError = Type.Object({
  error: Type.Object({ code: Type.String(), message: Type.String(), type: Type.Optional(Type.String()) }),
});
export type ArkError = Static<typeof ArkError>;
