import type { EmbeddingInput } from '../../domain/embedding.ts';
import { GatewayError } from '../../domain/errors.ts';
import type { EmbeddingsRequest } from '../../protocols/openai/embeddings.ts';

/** Alpha embeddings take text only: a string, or an array of strings, one vector each. */
export function decodeEmbeddingInput(input: EmbeddingsRequest['input']): EmbeddingInput[] {
  const items = typeof input === 'string' ? [input] : input;
  return items.map((item, index) => {
    if (typeof item === 'string') return { parts: [{ type: 'text', text: item }] };
    if (typeof item === 'object' && !Array.isArray(item)) {
      throw new GatewayError(
        'GW_VALIDATION',
        `body.input.${index}: multimodal input is not accepted on this surface; send it to POST /api/beta/v1/embeddings`,
      );
    }
    throw new GatewayError('GW_VALIDATION', `body.input.${index} must be a string (token arrays are not accepted)`);
  });
}
