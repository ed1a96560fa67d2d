import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';

/** Exactly `count` vectors, or a protocol failure: a short answer would misalign every vector after the gap. */
export function requireCount(vectors: number[][], count: number): number[][] {
  if (vectors.length !== count)
    throw new UpstreamUnreachableError(
      'protocol',
      `the upstream answered ${vectors.length} embeddings for ${count} inputs`,
    );
  return vectors;
}
