import { GatewayError } from '../domain/errors.ts';
import { keptErrorAnswer, UpstreamHttpError, UpstreamUnreachableError } from '../domain/upstream-failure.ts';
import { ClaimLost, UnsendableJob, type JobOutcome } from './job-runner.ts';

/**
 * Failures worth another try of the job on the row it was last sent to, after a backoff: the provider could
 * not be reached or refused for load (429, 5xx). A timeout is not: the provider may have made (and billed)
 * the images, and a synchronous call cannot be looked up afterwards (it goes on to the model's next row at
 * once, as a request's does, but never back to the same one).
 */
function isTransient(error: unknown): boolean {
  if (error instanceof UpstreamUnreachableError) return error.reason === 'connect';
  return error instanceof UpstreamHttpError && (error.status === 429 || error.status >= 500);
}

/**
 * The outcome of a job no row served: lost with its claim; a transient failure tried again later (no sooner
 * than the provider's `retry-after`) while the job `mayRetry`; otherwise failed with the reason, charged nothing.
 */
export function unsentOutcome(error: unknown, { mayRetry }: { mayRetry: boolean }): JobOutcome {
  if (error instanceof ClaimLost) return { kind: 'lost' };
  if (isTransient(error) && mayRetry) {
    const retryAfterMs = error instanceof UpstreamHttpError ? error.retryAfterMs : undefined;
    return {
      kind: 'retry',
      error: upstreamErrorMessage(error),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
  if (error instanceof UnsendableJob) return { kind: 'failed', error: error.message, costNanos: 0n };
  return upstreamFailure(error);
}

/**
 * The failure of a job whose last upstream call failed with `error`, charged nothing: its `error` text (after
 * `context`, when given), and the provider's own answer when it answered with an error status, which a request
 * waiting for the job relays (spec, Errors 2). The one place a job keeps that answer, for every kind of job.
 */
export function upstreamFailure(error: unknown, context = ''): Extract<JobOutcome, { kind: 'failed' }> {
  const failed = { kind: 'failed' as const, error: `${context}${upstreamErrorMessage(error)}`, costNanos: 0n };
  return error instanceof UpstreamHttpError ? { ...failed, upstreamAnswer: keptErrorAnswer(error) } : failed;
}

/** The job's `error` text: the provider's own message where its error body has one. */
export function upstreamErrorMessage(error: unknown): string {
  if (error instanceof UpstreamHttpError) {
    const message = providerMessage(error.body);
    return `the provider answered ${error.status}${message ? `: ${message}` : ''}`;
  }
  if (error instanceof UpstreamUnreachableError || error instanceof GatewayError) return error.message;
  return 'the job failed inside the gateway';
}

function providerMessage(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed === null || typeof parsed !== 'object') return undefined;
    // `{error: {message}}` or `{error: "..."}` (OpenAI-style protocols), or `{code, message}` (the speech protocol).
    const error = (parsed as { error?: unknown }).error ?? parsed;
    const message =
      error !== null && typeof error === 'object'
        ? (error as { message?: unknown }).message
        : typeof error === 'string'
          ? error
          : undefined;
    return typeof message === 'string' ? message.slice(0, 500) : undefined;
  } catch {
    return undefined;
  }
}
