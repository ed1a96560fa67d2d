import { UpstreamHttpError, UpstreamUnreachableError } from '../domain/upstream-failure.ts';

/**
 * Failures before the first byte that the next provider row may not share: the upstream could not be
 * reached or timed out, or it answered 429 or 5xx.
 */
export function worthFallingBack(error: unknown): boolean {
  if (error instanceof UpstreamUnreachableError) return true;
  return error instanceof UpstreamHttpError && (error.status === 429 || error.status >= 500);
}
