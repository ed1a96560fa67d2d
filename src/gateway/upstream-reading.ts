import { isGatewayError } from '../domain/errors.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../domain/upstream-failure.ts';

/**
 * An upstream's answer that made its adapter fail in a way no protocol check foresaw (JSON too deep to write
 * back, say) is the upstream's fault, answered like any answer that breaks its protocol: a 502 that may fall
 * back while nothing has been sent, never the gateway's own 500.
 */
export function asUpstreamFailure(error: unknown): unknown {
  if (error instanceof UpstreamHttpError || error instanceof UpstreamUnreachableError || isGatewayError(error))
    return error;
  return new UpstreamUnreachableError('protocol', 'the upstream answer could not be read');
}

/** The events of an adapter's stream, its unforeseen failures made upstream failures. */
export async function* readUpstream<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (error) {
    throw asUpstreamFailure(error);
  }
}
