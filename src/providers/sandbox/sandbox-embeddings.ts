import { createHash } from 'node:crypto';
import type { EmbeddingInput, EmbeddingPart, EmbeddingRequest, EmbeddingResult } from '../../domain/embedding.ts';
import type { EmbeddingAdapter } from '../provider-adapter.ts';
import { countTextTokens } from '../../domain/tokenizer.ts';

/** Vector size when the request sets no `dimensions`. */
const defaultDimensions = 1024;

/**
 * What a part contributes to its vector: a text's characters, a medium's decoded bytes. The same image gives
 * the same vector whether it came as raw base64, as a data URL or (fetched by the gateway) from a URL.
 */
function partBytes(part: Exclude<EmbeddingPart, { type: 'imageUrl' | 'audioUrl' }>): Buffer {
  return part.type === 'text'
    ? Buffer.concat([Buffer.from('text\0'), Buffer.from(part.text, 'utf8')])
    : Buffer.concat([Buffer.from('media\0'), Buffer.from(part.data, 'base64')]);
}

/** A unit vector drawn from the SHA-256 of the input's parts: the same content always gives the same vector. */
function vectorOf(input: EmbeddingInput, dimensions: number): number[] {
  const digest = createHash('sha256');
  for (const part of input.parts) {
    // URLs never reach the sandbox (it carries bytes only); a URL that did would be hashed as its text.
    const bytes =
      part.type === 'imageUrl' || part.type === 'audioUrl' ? Buffer.from(`url\0${part.url}`) : partBytes(part);
    digest.update(createHash('sha256').update(bytes).digest());
  }
  const seed = digest.digest();
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block++) {
    const bytes = createHash('sha256').update(seed).update(String(block)).digest();
    for (let offset = 0; offset + 4 <= bytes.length && values.length < dimensions; offset += 4)
      values.push(bytes.readUInt32BE(offset) / 0x7fffffff - 1);
  }
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}

/** Deterministic vectors of the requested dimension; input tokens are the text parts' tokens (media are billed apart). */
function embed(request: EmbeddingRequest): Promise<EmbeddingResult> {
  const dimensions = request.dimensions ?? defaultDimensions;
  const inputTokens = request.inputs.reduce(
    (sum, input) =>
      sum + input.parts.reduce((count, part) => count + (part.type === 'text' ? countTextTokens(part.text) : 0), 0),
    0,
  );
  return Promise.resolve({ vectors: request.inputs.map((input) => vectorOf(input, dimensions)), inputTokens });
}

/**
 * Every part type of the beta extension, media as bytes: the gateway fetches images and audio named by URL
 * (checking them as for any provider), so a vector depends on the content, not on where it was found.
 */
export const sandboxEmbeddings: EmbeddingAdapter = {
  parts: ['text', 'imageBase64', 'audioBase64', 'fileBase64', 'videoBase64'],
  embed,
};
