import { reportedTokens } from '../../domain/chat.ts';
import type { EmbeddingInput, EmbeddingPart, EmbeddingRequest, EmbeddingResult } from '../../domain/embedding.ts';
import {
  isMultimodalEmbeddingsAnswer,
  type MultimodalEmbeddingsRequest,
  type MultimodalPart,
} from '../../protocols/ark/multimodal-embeddings.ts';
import type { CallOptions } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { checked } from '../shared/wire-data.ts';

/** Inputs embedded at once: each is its own upstream call, since the protocol fuses a call's inputs into one vector. */
const concurrentCalls = 8;

function arkPart(part: EmbeddingPart): MultimodalPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'imageUrl':
      return { type: 'image_url', image_url: { url: part.url } };
    case 'imageBase64':
      return { type: 'image_url', image_url: { url: `data:${part.mediaType};base64,${part.data}` } };
    case 'videoBase64':
      return { type: 'video_url', video_url: { url: `data:${part.mediaType};base64,${part.data}` } };
    default:
      throw new RangeError(`the ark protocol has no ${part.type} input`);
  }
}

/**
 * BytePlus ModelArk multimodal embeddings (`POST /embeddings/multimodal`): its `data` is one object, the
 * fused vector of all of a call's parts, so each input is one call.
 */
export async function arkEmbeddings(
  http: UpstreamHttp,
  request: EmbeddingRequest,
  options: CallOptions,
): Promise<EmbeddingResult> {
  const embedOne = async (input: EmbeddingInput) => {
    const body: MultimodalEmbeddingsRequest = {
      model: request.upstreamModel,
      input: input.parts.map(arkPart),
      encoding_format: 'float',
      ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
    };
    const answer = checked(
      await http.postForJson(options.target, {
        path: '/embeddings/multimodal',
        headers: { authorization: options.target.apiKey.bearer() },
        body,
      }),
      isMultimodalEmbeddingsAnswer,
      'an embedding',
    );
    const tokens = reportedTokens(answer.usage?.prompt_tokens);
    if (tokens !== undefined) request.reportUsage?.(tokens);
    return { vector: answer.data.embedding, tokens };
  };
  const results: Array<{ vector: number[]; tokens: number | undefined }> = [];
  for (let start = 0; start < request.inputs.length; start += concurrentCalls) {
    // Every call of a round is let finish, so the usage of those that answered is reported before a failure ends the request.
    const round = await Promise.allSettled(request.inputs.slice(start, start + concurrentCalls).map(embedOne));
    for (const outcome of round) {
      if (outcome.status === 'rejected') throw outcome.reason;
      results.push(outcome.value);
    }
  }
  const reported = results.every((result) => result.tokens !== undefined);
  return {
    vectors: results.map((result) => result.vector),
    inputTokens: reported ? results.reduce((sum, result) => sum + result.tokens!, 0) : undefined,
  };
}
