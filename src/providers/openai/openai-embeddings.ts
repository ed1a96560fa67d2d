import { reportedTokens } from '../../domain/chat.ts';
import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
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
  return {
    vectors: inInputOrder(answer.data, request.inputs.length),
    inputTokens: reportedTokens(answer.usage?.prompt_tokens),
  };
}

/**
 * The vectors in the inputs' order: each item names its input (`index`), every input once; an answer that
 * names none is read in order. Indices that repeat or leave an input out are a protocol failure: sorted and
 * renumbered, they would hand a client vectors of other inputs.
 */
function inInputOrder(items: ReadonlyArray<{ index?: number; embedding: number[] }>, count: number): number[][] {
  if (items.every((item) => item.index === undefined))
    return requireCount(
      items.map((item) => item.embedding),
      count,
    );
  const vectors: Array<number[] | undefined> = new Array(count);
  for (const item of items) {
    const index = item.index;
    if (index === undefined || !Number.isInteger(index) || index < 0 || index >= count || vectors[index] !== undefined)
      throw new UpstreamUnreachableError(
        'protocol',
        `the upstream answered embeddings whose indices are not 0 to ${count - 1}, each once`,
      );
    vectors[index] = item.embedding;
  }
  return requireCount(
    vectors.filter((vector) => vector !== undefined),
    count,
  );
}
