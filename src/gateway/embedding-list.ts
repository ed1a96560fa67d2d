import { GatewayError } from '../domain/errors.ts';
import type { EmbeddingsList } from '../protocols/openai/embeddings.ts';
import type { EmbeddingInput } from '../domain/embedding.ts';
import type { RequestContext } from '../domain/request-context.ts';
import type { EmbeddingAnswer, EmbeddingGeneration } from './embedding-generation.ts';

/** How the vectors of an embeddings list are written: JSON floats, or float32 bytes in base64. */
export type EmbeddingEncoding = 'float' | 'base64';

/**
 * The `encoding_format` a client asked for. The official OpenAI SDKs (and LangChain through them) ask for
 * base64 unless told otherwise and decode it themselves, so both are served; anything else is refused.
 */
export function embeddingEncoding(format: unknown): EmbeddingEncoding {
  if (format === undefined || format === 'float') return 'float';
  if (format === 'base64') return 'base64';
  throw new GatewayError(
    'GW_VALIDATION',
    `encoding_format ${JSON.stringify(format)} is not supported: send "float" or "base64"`,
  );
}

/** The OpenAI-style embeddings list, which the alpha surface and the beta extension both answer with. */
function embeddingList(model: string, answer: EmbeddingAnswer, encoding: EmbeddingEncoding): EmbeddingsList {
  return {
    object: 'list',
    data: answer.vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: encoding === 'base64' ? float32Base64(vector) : vector,
    })),
    model,
    usage: { prompt_tokens: answer.inputTokens, total_tokens: answer.inputTokens },
  };
}

/** A vector's float32 values, little-endian, in base64: what the SDKs decode into a Float32Array. */
function float32Base64(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let index = 0; index < vector.length; index += 1) bytes.writeFloatLE(vector[index]!, index * 4);
  return bytes.toString('base64');
}

/** An OpenAI-style embeddings request, its inputs decoded by the surface that took it. */
export interface EmbeddingsListRequest {
  model: string;
  inputs: readonly EmbeddingInput[];
  dimensions?: number;
  encoding: EmbeddingEncoding;
}

/**
 * Embeds and answers as the list both the alpha surface and the beta extension send (the record names the
 * surface), with what the serving row dropped, for `x-gateway-dropped-parameters`.
 */
export async function answerEmbeddingsList(
  embeddings: Pick<EmbeddingGeneration, 'embed'>,
  context: RequestContext,
  request: EmbeddingsListRequest,
): Promise<{ list: EmbeddingsList; droppedParameters: string[] }> {
  const { model, inputs, dimensions, encoding } = request;
  const answer = await embeddings.embed(context, {
    modelId: model,
    inputs,
    dimensions,
    recordedRequest: { surface: context.surface, endpoint: context.endpoint, model, dimensions },
  });
  return { list: embeddingList(model, answer, encoding), droppedParameters: answer.droppedParameters };
}
