/**
 * An upstream answered with an error status. After the gateway's own checks have passed, the spec relays
 * this to the client unmodified: the provider's status and body.
 */
export class UpstreamHttpError extends Error {
  readonly contentType: string | undefined;
  /** How long the provider asked to wait before trying again (`retry-after`, `retry-after-ms`), when it did. */
  readonly retryAfterMs: number | undefined;

  constructor(
    readonly status: number,
    readonly body: string,
    headers: { contentType: string | undefined; retryAfterMs?: number },
  ) {
    super(`upstream answered ${status}`);
    this.contentType = headers.contentType;
    this.retryAfterMs = headers.retryAfterMs;
    this.name = 'UpstreamHttpError';
  }
}

/** The upstream could not be reached, or did not answer in time. */
export class UpstreamUnreachableError extends Error {
  constructor(
    readonly reason: 'connect' | 'timeout' | 'protocol',
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamUnreachableError';
  }
}

/** What a client is told when the upstream fails after its answer began, in each surface's own shape. */
export const midStreamFailure = 'the upstream provider failed while streaming';
