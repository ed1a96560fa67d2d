import { Type, type Static } from 'typebox';
import { Vector } from '../vector.ts';
import { wireCheck } from '../wire-check.ts';

/**
 * One input of several: a text, or tokens (one token array, whose items stand in the list themselves, or an
 * array of them). An object is no input of this protocol: the alpha surface answers a multimodal part (the
 * beta extension's) with where to send it.
 */
const EmbeddingsInputItem = Type.Union([
  Type.String(),
  Type.Integer(),
  Type.Array(Type.Integer()),
  Type.Record(Type.String(), Type.Unknown(), { description: 'A multimodal part: refused, with where to send it' }),
]);

/** An embeddings request as clients send it. */
export const EmbeddingsRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    input: Type.Union([Type.String(), Type.Array(EmbeddingsInputItem, { minItems: 1 })]),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    encoding_format: Type.Optional(Type.String()),
    user: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type EmbeddingsRequest = Static<typeof EmbeddingsRequest>;

/** The answer to an embeddings request, one item per input, each naming the input it embeds. */
export const EmbeddingsAnswer = Type.Object({
  data: Type.Array(Type.Object({ index: Type.Optional(Type.Integer({ minimum: 0 })), embedding: Vector })),
  usage: Type.Optional(Type.Union([Type.Object({ prompt_tokens: Type.Optional(Type.Number()) }), Type.Null()])),
});
export type EmbeddingsAnswer = Static<typeof EmbeddingsAnswer>;
export const isEmbeddingsAnswer = wireCheck(EmbeddingsAnswer);

/**
 * The embeddings list as the gateway answers it (alpha, and the beta extension): each vector as floats, or, with
 * `encoding_format: "base64"` (what the official SDKs ask for by default), as its little-endian float32 bytes
 * in base64.
 */
export const EmbeddingsList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      object: Type.Literal('embedding'),
      index: Type.Integer({ minimum: 0 }),
      embedding: Type.Union([Vector, Type.String({ contentEncoding: 'base64' })]),
    }),
  ),
  model: Type.String(),
  usage: Type.Object({ prompt_tokens: Type.Integer({ minimum: 0 }), total_tokens: Type.Integer({ minimum: 0 }) }),
});
export type EmbeddingsList = Static<typeof EmbeddingsList>;
