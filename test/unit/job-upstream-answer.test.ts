import { describe, expect, it } from 'vitest';
import {
  maxKeptErrorBodyBytes,
  UpstreamHttpError,
  UpstreamUnreachableError,
} from '../../src/domain/upstream-failure.ts';
import { unsentOutcome, upstreamFailure } from '../../src/jobs/upstream-errors.ts';

const refusal = (body: string) => new UpstreamHttpError(400, body, { contentType: 'application/json; charset=utf-8' });

describe("a job's failure on a provider's error answer", () => {
  it('keeps the status, the body and the content type beside the error text', () => {
    const body = JSON.stringify({ error: { message: 'prompt refused', code: 'Sensitive' } });
    expect(upstreamFailure(refusal(body))).toEqual({
      kind: 'failed',
      error: 'the provider answered 400: prompt refused',
      costNanos: 0n,
      upstreamAnswer: { status: 400, body, contentType: 'application/json; charset=utf-8' },
    });
  });

  it('keeps a 5xx once the job may not be tried again, and none of an unreachable provider', () => {
    const outage = new UpstreamHttpError(503, 'busy', { contentType: 'text/plain; charset=utf-8' });
    expect(unsentOutcome(outage, { mayRetry: true })).toMatchObject({ kind: 'retry' });
    expect(unsentOutcome(outage, { mayRetry: false })).toMatchObject({
      kind: 'failed',
      upstreamAnswer: { status: 503, body: 'busy' },
    });
    const failed = unsentOutcome(new UpstreamUnreachableError('connect', 'connection refused'), { mayRetry: false });
    expect(failed).toEqual({ kind: 'failed', error: 'connection refused', costNanos: 0n });
  });

  it('keeps at most 64 KiB of the body, cut between characters', () => {
    // 'é' is two bytes in UTF-8: an odd prefix puts the limit inside one.
    const body = `x${'é'.repeat(maxKeptErrorBodyBytes)}`;
    const kept = upstreamFailure(refusal(body)).upstreamAnswer!.body;
    expect(Buffer.byteLength(kept)).toBe(maxKeptErrorBodyBytes - 1);
    expect(body.startsWith(kept)).toBe(true);
  });
});
