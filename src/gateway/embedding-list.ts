import { GatewayError } from '../domain/errors.ts';
import type { EmbeddingAnswer } from './embedding-generation.ts';

/** The OpenAI-style embeddings list, which the alpha surface and the beta extension both answer with. */
export function embeddingList(model: string, answer: EmbeddingAnswer) {
  return {
    object: 'list',
    data: answer.vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model,
    usage: { prompt_tokens: answer.inputTokens, total_tokens: answer.inputTokens },
  };
}

/**
 * Vectors are answered as float arrays only. The official OpenAI SDK asks for base64 when the caller sets
 * no `encoding_format`, so the message says what to send (the SDK does not show the spec's error envelope,
 * which is why the README tells its users as well).
 */
export function requireFloatEncoding(format: unknown): void {
  if (format === undefined || format === 'float') return;
  throw new GatewayError(
    'GW_VALIDATION',
    `encoding_format ${JSON.stringify(format)} is not supported: send encoding_format: "float" (vectors are answered as float arrays only)`,
  );
}
