import { Type, type Static } from 'typebox';
import { Vector } from '../vector.ts';
import { wireCheck } from '../wire-check.ts';
import { maxEmbeddingParts } from '../../domain/embedding.ts';
import { Part } from './content.ts';

/** A content to embed: a turn's shape, with its parts bounded. */
const EmbedContent = Type.Object({
  role: Type.Optional(Type.String()),
  parts: Type.Array(Part, { minItems: 1, maxItems: maxEmbeddingParts }),
});

/**
 * Fields of the protocol that the gateway refuses rather than ignores (it cannot carry them to every provider).
 * The task types are not listed: any of them is refused the same way, by name.
 */
const Refusable = {
  taskType: Type.Optional(
    Type.String({ description: 'RETRIEVAL_QUERY, RETRIEVAL_DOCUMENT, SEMANTIC_SIMILARITY, CLASSIFICATION, ...' }),
  ),
  title: Type.Optional(Type.String({ description: 'The title of a RETRIEVAL_DOCUMENT' })),
};

const EmbedOptions = { outputDimensionality: Type.Optional(Type.Integer({ minimum: 1 })), ...Refusable };

/** `:embedContent`: the protocol's `content`, or the spec's `contents`, with options at the top or under `config`. */
export const EmbedContentRequest = Type.Object(
  {
    model: Type.Optional(Type.String()),
    content: Type.Optional(EmbedContent),
    contents: Type.Optional(EmbedContent),
    ...EmbedOptions,
    config: Type.Optional(Type.Object(EmbedOptions)),
  },
  { additionalProperties: false },
);
export type EmbedContentRequest = Static<typeof EmbedContentRequest>;

/** `:batchEmbedContents`, as the official SDK sends even a single embedding. */
export const BatchEmbedContentsRequest = Type.Object(
  {
    requests: Type.Array(
      Type.Object(
        { model: Type.Optional(Type.String()), content: EmbedContent, ...EmbedOptions },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
  },
  { additionalProperties: false },
);
export type BatchEmbedContentsRequest = Static<typeof BatchEmbedContentsRequest>;

/** The answer to `:embedContent`. */
export const EmbedContentResponse = Type.Object({ embedding: Type.Object({ values: Vector }) });
export type EmbedContentResponse = Static<typeof EmbedContentResponse>;

/** The answer to `:batchEmbedContents`: one embedding per request, in request order. */
export const BatchEmbedContentsResponse = Type.Object({ embeddings: Type.Array(Type.Object({ values: Vector })) });
export type BatchEmbedContentsResponse = Static<typeof BatchEmbedContentsResponse>;
export const isBatchEmbedContentsResponse = wireCheck(BatchEmbedContentsResponse);
