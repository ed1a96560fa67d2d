import type { EmbeddingPart, EmbeddingRequest, EmbeddingResult } from '../../domain/embedding.ts';
import { isBatchEmbedContentsResponse } from '../../protocols/gemini/embed-content.ts';
import type { CallOptions } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { requireCount } from '../shared/vectors.ts';
import { checked } from '../shared/wire-data.ts';
import { geminiPath } from './gemini-content.ts';

/** The protocol's limit on requests in one batchEmbedContents call. */
const batchLimit = 100;

function geminiPart(part: EmbeddingPart): object {
  if (part.type === 'text') return { text: part.text };
  // The protocol's fileData names files uploaded to it, not addresses on the web.
  if (part.type === 'imageUrl' || part.type === 'audioUrl')
    throw new RangeError(`the gemini protocol takes no ${part.type} input`);
  return { inlineData: { mimeType: part.mediaType, data: part.data } };
}

/**
 * `:batchEmbedContents`, one request per input (the parts of an input are embedded together), in batches
 * of the protocol's size. The protocol reports no token usage for embeddings.
 */
export async function geminiEmbeddings(
  http: UpstreamHttp,
  request: EmbeddingRequest,
  options: CallOptions,
): Promise<EmbeddingResult> {
  const vectors: number[][] = [];
  for (let start = 0; start < request.inputs.length; start += batchLimit) {
    const inputs = request.inputs.slice(start, start + batchLimit);
    const body = {
      requests: inputs.map((input) => ({
        model: `models/${request.upstreamModel}`,
        content: { parts: input.parts.map(geminiPart) },
        ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}),
      })),
    };
    const answer = await http.postForJson(options.target, {
      path: geminiPath(request.upstreamModel, 'batchEmbedContents'),
      headers: { 'x-goog-api-key': options.target.apiKey },
      body,
    });
    const { embeddings } = checked(answer, isBatchEmbedContentsResponse, 'embeddings');
    vectors.push(
      ...requireCount(
        embeddings.map((embedding) => embedding.values),
        inputs.length,
      ),
    );
  }
  return { vectors, inputTokens: undefined };
}
