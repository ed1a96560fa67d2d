import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiAdapter } from '../../src/providers/openai/openai-adapter.ts';
import type { ProviderTarget } from '../../src/providers/provider-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeRouterKey, startRouterVideoFake } from '../fakes/router-video-fake.ts';
import {
  askFake,
  replayed,
  requestBody,
  shapeDifferences,
  type VendorFixture,
  vendorFixture,
} from '../support/vendor-fixtures.ts';

/**
 * The routing provider's documented video answers (test/fixtures/vendor/router-video) replayed from a loopback
 * upstream against the router video adapter, and the router video fake held to their shapes.
 */
const fixture = (name: string) => vendorFixture('router-video', name);
const http = new UpstreamHttp();
const video = createOpenAiAdapter(http).video!;
afterAll(() => http.close());

const onRouter = async <T>(recorded: VendorFixture, call: (target: ProviderTarget) => Promise<T>) => {
  const { result, sent } = await replayed(recorded, '/api/v1', call);
  return { result, sent: sent.map(({ method, path, body }) => ({ method, path, body })) };
};

const prompt = 'A golden retriever playing fetch on a sunny beach with waves crashing in the background';

describe('router video jobs replayed from the documentation', () => {
  it('sends the documented submit request and takes the job id of its 202 answer', async () => {
    const recorded = fixture('video-submit');
    const { result, sent } = await onRouter(recorded, (target) =>
      video.createTask({ content: [{ type: 'text', text: prompt }] }, 'google/veo-3.1', { target }),
    );
    expect(sent).toEqual([{ method: 'POST', path: recorded.request.path, body: recorded.request.body }]);
    expect(result).toBe('abc123');
  });

  it('reads the documented completed job as a video at its first unsigned URL, read with the key', async () => {
    const recorded = fixture('video-poll-completed');
    const { result, sent } = await onRouter(recorded, (target) => video.poll('abc123', { target }));
    expect(sent[0]).toMatchObject({ method: 'GET', path: recorded.request.path });
    expect(result).toEqual({
      state: 'succeeded',
      video: { kind: 'url', url: 'https://openrouter.ai/api/v1/videos/abc123/content?index=0' },
      videoNeedsCredentials: true,
      providerUsage: { cost: 0.25, is_byok: false },
    });
  });

  it('reads the documented failed job with its error string', async () => {
    const { result } = await onRouter(fixture('video-webhook-failed'), (target) => video.poll('abc123', { target }));
    expect(result).toEqual({ state: 'failed', error: 'Content policy violation' });
  });
});

describe('the router video fake answers as the documentation does', () => {
  let fake: FakeServer;
  beforeAll(async () => {
    fake = await startRouterVideoFake();
  });
  afterAll(() => fake.close());
  const headers = { authorization: `Bearer ${fakeRouterKey}` };

  /** Submits the documented request (or `body`) to the fake and polls the job, as `poll` does, until `status` (at most 5 reads). */
  const submitAndPoll = async (status: string, poll: VendorFixture, body?: unknown) => {
    const submitted = await askFake(fake, fixture('video-submit'), {
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const job: unknown = JSON.parse(submitted.text);
    const id = typeof job === 'object' && job !== null && 'id' in job ? String(job.id) : '';
    const path = `/api/v1/videos/${id}`;
    let polled = await askFake(fake, poll, { headers, path });
    for (let reads = 1; reads < 5 && !polled.text.includes(`"${status}"`); reads++)
      polled = await askFake(fake, poll, { headers, path });
    const ended: unknown = JSON.parse(polled.text);
    return { submitted: { status: submitted.status, job }, ended };
  };

  it('answers a submission, and a job polled to its end, with the documented fields', async () => {
    const poll = fixture('video-poll-completed');
    const { submitted, ended } = await submitAndPoll('completed', poll);
    expect(submitted.status).toBe(202);
    expect(
      shapeDifferences([fixture('video-submit').response.body], [submitted.job], {
        extra: { '$.generation_id': 'named on this answer by the API reference (VideoGenerationResponse)' },
      }),
    ).toEqual([]);
    expect(ended).toMatchObject({ status: 'completed' });
    expect(shapeDifferences([poll.response.body], [ended])).toEqual([]);
  });

  it('answers a job that failed as the documented failed job: its error a string', async () => {
    const failed = fixture('video-webhook-failed');
    const { ended } = await submitAndPoll('failed', failed, {
      ...requestBody(fixture('video-submit')),
      prompt: 'fake-video-fail',
    });
    expect(ended).toMatchObject({ status: 'failed', error: expect.any(String) });
    expect(
      shapeDifferences([failed.response.body], [ended], {
        // The documented failed job is the webhook's; the fake answers a poll, as the completed job documented.
        optional: {
          '$.model': 'the documented poll answer (video-poll-completed) names no model; the webhook job does',
        },
        extra: {
          '$.polling_url': 'the documented poll answer (video-poll-completed) carries it; the webhook job does not',
        },
      }),
    ).toEqual([]);
  });
});
