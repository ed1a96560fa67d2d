import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';

/** An upstream's embedding as numbers, or a protocol failure: a vector of anything else is not an answer. */
export function requireVector(value: unknown): number[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === 'number' && Number.isFinite(item))) {
    throw new UpstreamUnreachableError('protocol', 'the upstream answered with an embedding that is not a list of numbers');
  }
  return value as number[];
}

/** The list an answer keeps its embeddings in, or a protocol failure when it is missing or not a list. */
export function requireList(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new UpstreamUnreachableError('protocol', 'the upstream answered without a list of embeddings');
  return value;
}

/** Exactly `count` vectors, or a protocol failure: a short answer would misalign every vector after the gap. */
export function requireCount(vectors: number[][], count: number): number[][] {
  if (vectors.length !== count) throw new UpstreamUnreachableError('protocol', `the upstream answered ${vectors.length} embeddings for ${count} inputs`);
  return vectors;
}
