import { inputText, type EmbeddingRequest, type EmbeddingResult } from '../../domain/embedding.ts';
import type { CallOptions } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { requireCount, requireList, requireVector } from '../shared/vectors.ts';

interface EmbeddingsAnswer {
  data?: unknown;
  usage?: { prompt_tokens?: number } | null;
}

type Item = { index?: unknown; embedding?: unknown } | null;

/** `POST /embeddings` with one string per input; vectors asked for as floats and put back in input order by `index`. */
export async function openAiEmbeddings(http: UpstreamHttp, request: EmbeddingRequest, options: CallOptions): Promise<EmbeddingResult> {
  const body = {
    model: request.upstreamModel,
    input: request.inputs.map(inputText),
    encoding_format: 'float',
    ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
  };
  const answer = await http.postForJson<EmbeddingsAnswer>(options.target, '/embeddings', { authorization: `Bearer ${options.target.apiKey}` }, body);
  const items = (requireList(answer.data) as Item[]).map((item) => ({ index: Number(item?.index ?? 0), vector: requireVector(item?.embedding) })).sort((a, b) => a.index - b.index);
  return { vectors: requireCount(items.map((item) => item.vector), request.inputs.length), inputTokens: answer.usage?.prompt_tokens };
}
