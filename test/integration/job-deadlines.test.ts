/**
 * A media job's deadline (its submission plus `jobs.maxJobSeconds`) cuts its provider calls, whatever the upstream
 * does: an image, a video, a text-to-speech and a reference-audio job on upstreams that hang before their
 * headers, hang mid-body, keep a task running, or stall the output download, and an image job whose outputs are
 * still being archived, all end `failed` within a couple of seconds of the deadline (not at the provider time-outs
 * of minutes, nor `succeeded` with the outputs archived so far), their claims released, every nano of their holds
 * given back and nothing of theirs archived. And a video's output is fetched with the provider's key only on the provider's own
 * origin: a URL on another origin (a presigned one) gets no credentials.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeSpeechKey, startSpeechFake } from '../fakes/speech-fake.ts';
import { fakeStallKey, startPresignedVideoFake, startStallingUpstream } from '../fakes/stalling-upstreams.ts';
import { keyHeaders } from '../support/http-helpers.ts';
import { jobRowsOf } from '../support/image-jobs.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

const credits = 10;
/** Provider clocks far beyond the job's deadline: only the deadline can end these jobs in time. */
const slowClocks = 'timeoutMs: 600000, firstByteTimeoutMs: 300000';
const text = (value: string) => ({ type: 'text', text: value });

interface Submission {
  url: string;
  body: Record<string, unknown>;
}

const submissions: Record<string, Submission> = {
  'image, upstream silent before its headers': {
    url: '/api/v1/image/generations/async',
    body: { model: 'seedream', content: [text('deadline fake-hang')] },
  },
  'image, upstream silent mid-body': {
    url: '/api/v1/image/generations/async',
    body: { model: 'stalled-image', content: [text('deadline mid-body')] },
  },
  'image, outputs still downloading at the deadline': {
    url: '/api/v1/image/generations/async',
    body: { model: 'seedream', content: [text('deadline fake-slow-file-700')], numberOfImages: 4 },
  },
  'video, task running for ever': {
    url: '/api/v1/video/generations',
    body: { model: 'seedance', content: [text('deadline fake-video-slow-100000')], duration: 2 },
  },
  'video, task reads never answered': {
    url: '/api/v1/video/generations',
    body: { model: 'stalled-video', content: [text('deadline unread task')], duration: 2 },
  },
  'video, output download stalled': {
    url: '/api/v1/video/generations',
    body: { model: 'router-video', content: [text('deadline fake-stall-download')], duration: 4 },
  },
  'text-to-speech, upstream silent': {
    url: '/api/v1/audio/text-to-speech',
    body: { voiceType: 'zh_female_cancan_mars_bigtts', text: 'deadline fake-hang' },
  },
  'reference audio, upstream silent': {
    url: '/api/v1/audio/generation-with-reference',
    body: { model: 'seed-audio', textPrompt: 'deadline fake-hang' },
  },
};

async function submit(gateway: TestGateway, key: string, { url, body }: Submission): Promise<void> {
  const response = await gateway.request({ method: 'POST', url, headers: keyHeaders(key), payload: body });
  // A video task is answered as it stands (200), the other jobs with their id (202).
  expect(response.statusCode, response.body).toBe(url.includes('/video/') ? 200 : 202);
}

async function until(what: string, timeoutMs: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The account's books: balance, held total and hold rows. */
async function booksOf(
  gateway: TestGateway,
  accountId: string,
): Promise<{ balance: bigint; held: bigint; holds: number }> {
  await gateway.settled();
  const [row] = await uncheckedRows<{ balance: string; held: string; holds: string }>(
    gateway.gateway.core.storage.db,
    sql`SELECT (SELECT balance_nanos FROM accounts WHERE id = ${accountId})::text AS balance,
               (SELECT held_nanos FROM accounts WHERE id = ${accountId})::text AS held,
               (SELECT count(*) FROM holds WHERE account_id = ${accountId})::text AS holds`,
  );
  return { balance: BigInt(row!.balance), held: BigInt(row!.held), holds: Number(row!.holds) };
}

describe('jobs past maxJobSeconds on upstreams that never finish', () => {
  let gateway: TestGateway;
  let ark: FakeServer;
  let speech: FakeServer;
  let stalling: FakeServer;
  let presigned: { router: FakeServer; storage: FakeServer };

  beforeAll(async () => {
    [ark, speech, stalling, presigned] = await Promise.all([
      startArkFake(),
      startSpeechFake(),
      startStallingUpstream(),
      startPresignedVideoFake(),
    ]);
    gateway = await startTestGateway({
      upstreams: [ark, speech, stalling, presigned.router, presigned.storage],
      configText: [
        'providers:',
        `${fakeProviderYaml('ark', 'ark', ark).replace(/ }$/, `, ${slowClocks} }`)}`,
        `  speech: { protocol: speech, baseUrl: "${speech.url}", apiKey: ${fakeSpeechKey}, ${slowClocks} }`,
        `  stalled-openai: { protocol: openai, baseUrl: "${stalling.url}/v1", apiKey: ${fakeStallKey}, ${slowClocks} }`,
        `  stalled-ark: { protocol: ark, baseUrl: "${stalling.url}/api/v3", apiKey: ${fakeStallKey}, ${slowClocks} }`,
        `  router: { protocol: openai, baseUrl: "${presigned.router.url}/api/v1", apiKey: ${fakeStallKey}, ${slowClocks} }`,
        'models:',
        '  - { id: seedream, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-4-0-250828 }] }',
        '  - { id: stalled-image, outputModalities: [image], pricing: { perImage: 0.04 }, providers: [{ provider: stalled-openai, model: gpt-image-1 }] }',
        '  - { id: seedance, outputModalities: [video], pricing: { perVideoSecond: 0.05 }, providers: [{ provider: ark, model: seedance-1-0-pro-250528 }] }',
        '  - { id: stalled-video, outputModalities: [video], pricing: { perVideoSecond: 0.05 }, providers: [{ provider: stalled-ark, model: seedance-1-0-pro-250528 }] }',
        '  - { id: router-video, outputModalities: [video], pricing: { perVideoSecond: 0.1 }, providers: [{ provider: router, model: google/veo-3.1 }] }',
        '  - { id: seed-tts-1.0, outputModalities: [audio], pricing: { perMCharacters: 60 }, providers: [{ provider: speech, model: seed-tts-1.0 }] }',
        '  - { id: seed-audio, inputModalities: [text, audio], outputModalities: [audio], pricing: { perAudioSecond: 0.01 }, providers: [{ provider: speech, model: seed-audio-1.0 }] }',
        'voices:',
        '  - { voiceType: zh_female_cancan_mars_bigtts, name: Cancan, gender: female, age: adult, categories: [General], languages: [{ language: zh-CN, text: 你好 }], resourceId: seed-tts-1.0 }',
        'jobs: { maxJobSeconds: 2, maxAttempts: 3, retryBaseMs: 50, idlePollMs: 100, taskPollMs: 100, claimSeconds: 30 }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('fails each job within two seconds of its deadline, releases its claim, and gives every hold back', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits });
    const cases = Object.entries(submissions);
    await Promise.all(cases.map(([, submission]) => submit(gateway, key, submission)));
    const held = await booksOf(gateway, accountId);
    expect(held.holds).toBe(cases.length);
    expect(held.held).toBeGreaterThan(0n);

    const ended = async () =>
      (await jobRowsOf(gateway, accountId)).every((row) => row.state === 'failed' || row.state === 'succeeded');
    await until('every job to end', 15_000, ended);
    const rows = await jobRowsOf(gateway, accountId);
    expect(rows).toHaveLength(cases.length);
    for (const row of rows) {
      const what = `${row.kind} job on ${row.providerId} (${row.model}): ${row.error}`;
      expect(row.state, what).toBe('failed');
      expect(row.error, what).toBe('the job did not finish within 2 seconds');
      expect(row.claimedBy, what).toBeNull();
      const late = row.finishedAt!.getTime() - row.deadlineAt.getTime();
      expect(late, what).toBeGreaterThanOrEqual(0);
      expect(late, what).toBeLessThan(2500);
    }
    expect(await booksOf(gateway, accountId)).toEqual({ balance: usdToNanos(credits), held: 0n, holds: 0 });
    // A job cut while archiving keeps nothing of what it had archived: no asset, no file.
    const [assets] = await uncheckedRows<{ count: string }>(
      gateway.gateway.core.storage.db,
      sql`SELECT count(*)::text AS count FROM media_assets WHERE account_id = ${accountId}`,
    );
    expect(assets!.count).toBe('0');
    for (const row of rows.filter(({ kind }) => kind === 'image'))
      for (const index of [0, 1, 2, 3])
        expect(await gateway.gateway.core.store.get(`images/${row.id.toLowerCase()}/${index}.png`)).toBeUndefined();

    // Every upstream was really reached, and hung: the deadline, not an answer, ended each job.
    expect(stalling.requests.filter((request) => request.path === '/v1/images/generations')).toHaveLength(1);
    expect(
      stalling.requests.filter(
        (request) => request.method === 'GET' && request.path.startsWith('/api/v3/contents/generations/tasks/'),
      ).length,
    ).toBeGreaterThanOrEqual(1);
    expect(presigned.storage.requests.filter((request) => request.path.startsWith('/stall/'))).toHaveLength(1);
    // The slow outputs were made and being fetched: the deadline, not the provider, failed their job.
    expect(ark.requests.filter((request) => request.path.startsWith('/files/')).length).toBeGreaterThanOrEqual(2);
    // The task still running at the deadline was cancelled upstream.
    const running = ark.requests.find(
      (request) => request.method === 'POST' && JSON.stringify(request.body).includes('fake-video-slow-100000'),
    );
    expect(running).toBeDefined();
    expect(ark.requests.some((request) => request.method === 'DELETE')).toBe(true);
  });
});

describe("a video's output fetched with the provider's key only on the provider's own origin", () => {
  let gateway: TestGateway;
  let presigned: { router: FakeServer; storage: FakeServer };

  beforeAll(async () => {
    presigned = await startPresignedVideoFake();
    gateway = await startTestGateway({
      upstreams: [presigned.router, presigned.storage],
      configText: [
        'providers:',
        `  router: { protocol: openai, baseUrl: "${presigned.router.url}/api/v1", apiKey: ${fakeStallKey}, headers: { x-provider-tenant: tenant-secret-header } }`,
        'models:',
        '  - { id: router-video, outputModalities: [video], pricing: { perVideoSecond: 0.1 }, providers: [{ provider: router, model: google/veo-3.1 }] }',
        'jobs: { idlePollMs: 50, taskPollMs: 20 }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function videoJob(key: string, prompt: string): Promise<{ status: string; error?: string }> {
    const created = await gateway.request({
      method: 'POST',
      url: '/api/v1/video/generations',
      headers: keyHeaders(key),
      payload: { model: 'router-video', content: [text(prompt)], duration: 4 },
    });
    expect(created.statusCode, created.body).toBe(200);
    const { taskId } = created.json<{ taskId: string }>();
    let task = { status: 'queued' } as { status: string; error?: string };
    await until(`video task ${taskId}`, 20_000, async () => {
      task = (
        await gateway.request({ method: 'GET', url: `/api/v1/video/tasks/${taskId}`, headers: keyHeaders(key) })
      ).json<{ status: string; error?: string }>();
      return task.status === 'succeeded' || task.status === 'failed';
    });
    return task;
  }

  it('downloads a presigned URL on another origin without the key or the configured headers', async () => {
    const { key } = await gateway.createFundedKey({ credits });
    const task = await videoJob(key, 'a presigned output');
    expect(task.status, task.error).toBe('succeeded');
    const downloads = presigned.storage.requests.filter((request) => request.path.startsWith('/videos/'));
    expect(downloads).toHaveLength(1);
    expect(downloads[0]!.headers.authorization).toBeUndefined();
    expect(downloads[0]!.headers['x-provider-tenant']).toBeUndefined();
    expect(JSON.stringify(downloads[0]!.headers)).not.toContain(fakeStallKey);
  });

  it("still sends the key to a content URL on the provider's own origin, which needs it", async () => {
    const { key } = await gateway.createFundedKey({ credits });
    const task = await videoJob(key, 'an output of its own fake-same-origin');
    expect(task.status, task.error).toBe('succeeded');
    const content = presigned.router.requests.filter((request) => request.path.endsWith('/content'));
    expect(content).toHaveLength(1);
    expect(content[0]!.headers.authorization).toBe(`Bearer ${fakeStallKey}`);
    expect(content[0]!.headers['x-provider-tenant']).toBe('tenant-secret-header');
  });
});
