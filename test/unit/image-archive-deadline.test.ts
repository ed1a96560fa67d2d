/**
 * An image job whose deadline passes while its outputs are archived ends there: the output being downloaded is no
 * failure of its own (the job's time is up), no other is fetched, the job fails for its time charged nothing, and
 * nothing it stored is left behind, neither what it archived nor an inline output stored before archiving. And
 * the outputs it keeps, inline or fetched, each have a key of their own.
 */
import { describe, expect, it } from 'vitest';
import type { ImageUpstreamResult } from '../../src/domain/media-job-results.ts';
import { ImageJobRunner } from '../../src/jobs/image-job-runner.ts';
import { JobDeadlineError, type JobContext, type MediaJobOf } from '../../src/jobs/job-runner.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { encodePng } from '../../src/providers/sandbox/png.ts';

/** The store in memory: what is in it when the run ends. */
class MemoryStore implements ObjectStore {
  readonly kind = 'fs';
  readonly objects = new Map<string, { bytes: Buffer; contentType: string }>();
  put = (key: string, bytes: Buffer, contentType: string) => {
    this.objects.set(key, { bytes, contentType });
    return Promise.resolve();
  };
  get = (key: string) => Promise.resolve(this.objects.get(key));
  delete = (key: string) => {
    this.objects.delete(key);
    return Promise.resolve();
  };
  deleteFolder = (folder: string) => {
    for (const key of this.objects.keys()) if (key.startsWith(folder)) this.objects.delete(key);
    return Promise.resolve();
  };
  signedLink = (key: string) => Promise.resolve(`/media/${key}`);
  check = () => Promise.resolve();
  close = () => Promise.resolve();
}

const png = encodePng(2, 2, () => [10, 20, 30, 255]);

function generatedJob(upstreamResult: ImageUpstreamResult | null): MediaJobOf<'image'> {
  const now = new Date();
  return {
    id: 'gen_cut',
    accountId: 'acct',
    apiKeyId: null,
    kind: 'image',
    model: 'm',
    providerId: 'p',
    upstreamModel: 'u',
    requestId: null,
    routingStrategy: null,
    request: { images: [], numberOfImages: 3 },
    recordedRequest: { operation: 'image-generation' },
    state: 'processing',
    phase: upstreamResult === null ? null : 'generated',
    upstreamTaskId: null,
    upstreamResult,
    attempts: 1,
    fallbacks: [],
    priceSnapshot: { kind: 'per-image', nanos: '1000' },
    holdId: 'hold',
    holdNanos: 3000n,
    result: null,
    error: null,
    upstreamErrorStatus: null,
    upstreamErrorBody: null,
    upstreamErrorContentType: null,
    upstreamErrorRetryAfterMs: null,
    claimedBy: 'me',
    claimExpiresAt: null,
    runAfter: now,
    deadlineAt: new Date(now.getTime() + 2000),
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
}

describe('an image job archiving its outputs at its deadline', () => {
  it('fails for its time, uncharged, fetching nothing more and keeping nothing it stored', async () => {
    const store = new MemoryStore();
    // An inline output, stored before archiving (as the provider's answer was recorded).
    await store.put('images/gen_cut/2.png', png, 'image/png');
    const deadline = new AbortController();
    const fetched: string[] = [];
    const runner = new ImageJobRunner({
      adapters: new Map(),
      providers: new Map(),
      store,
      downloadOutput: (url, signal) => {
        fetched.push(url);
        if (url.endsWith('/0.png')) return Promise.resolve({ contentType: 'image/png', bytes: png });
        // The deadline passes during this download, which it cuts (as the fetcher does, with its reason).
        deadline.abort(new JobDeadlineError(2));
        const reason: unknown = signal?.reason;
        return Promise.reject(reason);
      },
      fetchInput: () => Promise.reject(new Error('no input is fetched here')),
      retentionMs: undefined,
    });
    const context: JobContext = {
      dispatch: () => Promise.reject(new Error('a generated job is not sent again')),
      recordTask: () => Promise.resolve(true),
      recordGenerated: () => Promise.resolve(true),
      lost: () => false,
      deadline: deadline.signal,
    };
    const outcome = await runner.run(
      generatedJob({
        images: [
          { output: { kind: 'url', url: 'https://files.example/0.png' } },
          { output: { kind: 'url', url: 'https://files.example/1.png' } },
          { output: { kind: 'stored', objectKey: 'images/gen_cut/2.png', mediaType: 'image/png' } },
          { output: { kind: 'url', url: 'https://files.example/3.png' } },
        ],
        failures: [],
        usage: { generatedImages: 4 },
      }),
      context,
    );
    expect(outcome).toEqual({ kind: 'failed', error: 'the job did not finish within 2 seconds', costNanos: 0n });
    expect(fetched).toEqual(['https://files.example/0.png', 'https://files.example/1.png']);
    expect([...store.objects.keys()]).toEqual([]);
  });

  it("keeps every output under a key of its own, an inline one beside one fetched, whatever the provider's list held", async () => {
    const store = new MemoryStore();
    const fetchedPng = encodePng(3, 3, () => [200, 100, 50, 255]);
    const runner = new ImageJobRunner({
      adapters: new Map(),
      providers: new Map(),
      store,
      downloadOutput: () => Promise.resolve({ contentType: 'image/png', bytes: fetchedPng }),
      fetchInput: () => Promise.reject(new Error('no input is fetched here')),
      retentionMs: undefined,
    });
    // The provider's answer: an output that is no picture, one inline, one by URL.
    const answer = {
      images: [
        {
          output: {
            kind: 'inline' as const,
            mediaType: 'image/png',
            data: Buffer.from('not a picture').toString('base64'),
          },
        },
        { output: { kind: 'inline' as const, mediaType: 'image/png', data: png.toString('base64') } },
        { output: { kind: 'url' as const, url: 'https://files.example/2.png' } },
      ],
      failures: [],
      usage: { generatedImages: 3 },
    };
    const context: JobContext = {
      dispatch: <T>() => Promise.resolve({ value: answer as T, row: { providerId: 'p', upstreamModel: 'u' } }),
      recordTask: () => Promise.resolve(true),
      recordGenerated: () => Promise.resolve(true),
      lost: () => false,
      deadline: new AbortController().signal,
    };
    const outcome = await runner.run(generatedJob(null), context);
    expect(outcome.kind).toBe('succeeded');
    const keys = outcome.kind === 'succeeded' ? outcome.assets.map((asset) => asset.objectKey) : [];
    expect(new Set(keys).size).toBe(2);
    expect(keys.map((key) => store.objects.get(key)?.bytes)).toEqual([png, fetchedPng]);
  });
});
