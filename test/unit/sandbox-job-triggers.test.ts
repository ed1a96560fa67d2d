import { afterEach, describe, expect, it, vi } from 'vitest';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { actOutTrigger, jobTrigger } from '../../src/providers/sandbox/job-triggers.ts';
import { sandboxVideo } from '../../src/providers/sandbox/sandbox-video.ts';
import { Secret } from '../../src/domain/secret.ts';
import type { CallOptions } from '../../src/providers/provider-adapter.ts';

const options: CallOptions = {
  target: {
    baseUrl: '',
    apiKey: new Secret(''),
    timeoutMs: 1000,
    firstByteTimeoutMs: 1000,
    connectTimeoutMs: 1000,
    maxEventCharacters: 1024,
    headers: {},
  },
};

describe('sandbox job trigger words', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    ['a heron', undefined],
    ['a heron sandbox-fail', { kind: 'fail' }],
    ['Sandbox-Cancel now', { kind: 'cancel' }],
    ['(sandbox-slow)', { kind: 'slow', seconds: undefined }],
    ['sandbox-slow-5 please', { kind: 'slow', seconds: 5 }],
    ['sandbox-slow-0', undefined],
    ['sandbox-fail-2', undefined],
    ['my-sandbox-fail', undefined],
    ['sandbox-failure', undefined],
  ])('%s', (prompt, trigger) => {
    expect(jobTrigger(prompt)).toEqual(trigger);
  });

  it('refuses as an upstream would for fail and cancel', async () => {
    await expect(actOutTrigger({ kind: 'fail' }, undefined)).rejects.toBeInstanceOf(UpstreamHttpError);
    await expect(actOutTrigger({ kind: 'cancel' }, undefined)).rejects.toMatchObject({ status: 400 });
    await expect(actOutTrigger(undefined, undefined)).resolves.toBeUndefined();
  });

  it('waits the seconds of sandbox-slow-N, and a bare sandbox-slow until its job is cut', async () => {
    vi.useFakeTimers();
    let done = false;
    const slow = actOutTrigger({ kind: 'slow', seconds: 2 }, undefined).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(1999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await slow;
    expect(done).toBe(true);

    const deadline = new AbortController();
    const endless = actOutTrigger({ kind: 'slow', seconds: undefined }, deadline.signal);
    await vi.advanceTimersByTimeAsync(3_600_000);
    deadline.abort();
    await expect(endless).rejects.toBeInstanceOf(UpstreamUnreachableError);
  });

  it('keeps a sandbox-slow-N video task running for N seconds, then delivers it', async () => {
    vi.useFakeTimers({ now: 0 });
    const request = { content: [{ type: 'text' as const, text: 'a heron sandbox-slow-10' }], duration: 1 };
    const taskId = await sandboxVideo.createTask(request, 'video', options);
    await vi.advanceTimersByTimeAsync(9_999);
    expect((await sandboxVideo.poll(taskId, options)).state).toBe('running');
    await vi.advanceTimersByTimeAsync(1);
    expect((await sandboxVideo.poll(taskId, options)).state).toBe('succeeded');
  });

  it('reads a task id it did not make as a failed task', async () => {
    const forged = `sandbox-${Buffer.from(JSON.stringify({ seed: 1 })).toString('base64url')}`;
    expect(await sandboxVideo.poll(forged, options)).toMatchObject({ state: 'failed' });
  });
});
