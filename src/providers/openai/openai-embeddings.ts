import { inputText, type EmbeddingRequest, type EmbeddingResult } from '../../domain/embedding.ts';
import { isEmbeddingsAnswer } from '../../protocols/openai/embeddings.ts';
import type { CallOptions } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { requireCount } from '../shared/vectors.ts';
import { checked } from '../shared/wire-data.ts';

/** `POST /embeddings` with one string per input; vectors asked for as floats and put back in input order by `index`. */
export async function openAiEmbeddings(
  http: UpstreamHttp,
  request: EmbeddingRequest,
  options: CallOptions,
): Promise<EmbeddingResult> {
  const body = {
    model: request.upstreamModel,
    input: request.inputs.map(inputText),
    encoding_format: 'float',
    ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
  };
  const answer = checked(
    await http.postForJson(options.target, {
      path: '/embeddings',
      headers: { authorization: options.target.apiKey.bearer() },
      body,
    }),
    isEmbeddingsAnswer,
    'embeddings',
  );
  const items = answer.data
    .map((item) => ({ index: item.index ?? 0, vector: item.embedding }))
    .sort((a, b) => a.index - b.index);
  return {
    vectors: requireCount(
      items.map((item) => item.vector),
      request.inputs.length,
    ),
    inputTokens: answer.usage?.prompt_tokens,
  };
}
