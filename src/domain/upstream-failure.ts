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

/**
 * The error answer a media job keeps of its provider's refusal, so that a request waiting for the job can relay
 * it as the relay path relays an `UpstreamHttpError`: the status, the body (as the upstream client scrubbed it of
 * credentials, at most `maxKeptErrorBodyBytes` of it), the content type as the relay path sends it, and the wait
 * the provider asked for (`retry-after`), when it asked for one.
 */
export interface UpstreamErrorAnswer {
  status: number;
  body: string;
  contentType: string | undefined;
  retryAfterMs?: number;
}

/** The most of an error body a job keeps, in UTF-8 bytes: what the upstream client reads of one for relaying. */
export const maxKeptErrorBodyBytes = 64 * 1024;

/** What a job keeps of an upstream's error answer: its body cut at `maxKeptErrorBodyBytes`. */
export function keptErrorAnswer(error: UpstreamHttpError): UpstreamErrorAnswer {
  return {
    status: error.status,
    body: cutToBytes(error.body, maxKeptErrorBodyBytes),
    contentType: error.contentType,
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
  };
}

/** `text` cut to at most `limit` UTF-8 bytes, never inside a character. */
function cutToBytes(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  // A streaming decode holds back an incomplete last character instead of writing U+FFFD for it.
  return new TextDecoder().decode(bytes.subarray(0, limit), { stream: true });
}

/** The error a job's kept answer is relayed as: the provider's status, body, content type and wait. */
export function relayedErrorOf(answer: UpstreamErrorAnswer): UpstreamHttpError {
  return new UpstreamHttpError(answer.status, answer.body, {
    contentType: answer.contentType,
    retryAfterMs: answer.retryAfterMs,
  });
}
