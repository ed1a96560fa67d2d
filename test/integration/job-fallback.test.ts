/**
 * Media jobs of every kind take the road requests take over a model's provider rows: a first row that fails
 * before it accepted the job (503, 429, unreachable) hands the job to the next row, whose usage record's
 * route names the row that served and the one that failed; the rows' breakers are the requests' own (a row
 * jobs opened is skipped by a chat request), opened only by failures seen across several accounts, and an
 * open row is skipped without being called; a
 * client-fault 4xx fails the job without another row and without counting against the row. A video task the
 * first row accepted is followed there, never created again elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { fakeSpeechKey, startSpeechFake } from '../fakes/speech-fake.ts';
import { adminHeaders, breakerStateOf, heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import { jobRowsOf } from '../support/image-jobs.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

interface AuditedRecord {
  id: string;
  status: string;
  usdCost: number;
  route?: {
    providerId: string;
    upstreamModel: string;
    fallbacks: Array<{ providerId: string; upstreamModel: string; outcome: string; reason: string; status?: number }>;
  };
}

/** One kind of job: where it is submitted, its body for a prompt, and its two rows. */
interface JobKind {
  url: string;
  body: (prompt: string) => Record<string, unknown>;
  /** The first row, on a faithful fake of its protocol. */
  first: { providerId: 'ark' | 'speech'; upstreamModel: string };
  /** The sandbox's row after it. */
  sandboxModel: string;
}

const text = (value: string) => ({ type: 'text', text: value });

const kinds: Record<string, JobKind> = {
  image: {
    url: '/api/v1/image/generations/async',
    body: (prompt) => ({ model: 'duo-image', content: [text(prompt)] }),
    first: { providerId: 'ark', upstreamModel: 'seedream-4-0-250828' },
    sandboxModel: 'image',
  },
  video: {
    url: '/api/v1/video/generations',
    body: (prompt) => ({ model: 'duo-video', content: [text(prompt)], duration: 2 }),
    first: { providerId: 'ark', upstreamModel: 'seedance-1-0-pro-250528' },
    sandboxModel: 'video',
  },
  'text-to-speech': {
    url: '/api/v1/audio/text-to-speech',
    body: (prompt) => ({ voiceType: 'zh_female_cancan_mars_bigtts', text: prompt }),
    first: { providerId: 'speech', upstreamModel: 'seed-tts-1.0' },
    sandboxModel: 'speech',
  },
  'reference audio': {
    url: '/api/v1/audio/generation-with-reference',
    body: (prompt) => ({ model: 'duo-reference', textPrompt: prompt }),
    first: { providerId: 'speech', upstreamModel: 'seed-audio-1.0' },
    sandboxModel: 'audio-reference',
  },
};

const duo = (
  id: string,
  {
    modalities,
    pricing,
    first,
    sandboxModel,
  }: { modalities: string; pricing: string; first: string; sandboxModel: string },
) =>
  `  - { id: ${id}, ${modalities}, pricing: { ${pricing} }, providers: [{ ${first}, priority: 1 }, { provider: sandbox, model: ${sandboxModel}, priority: 2 }] }`;

describe('media jobs over their model’s provider rows', () => {
  let ark: FakeServer;
  let speech: FakeServer;
  let openai: FakeServer;
  let gateway: TestGateway;
  let prompts = 0;

  beforeAll(async () => {
    [ark, speech, openai] = await Promise.all([startArkFake(), startSpeechFake(), startOpenAiFake()]);
    gateway = await startTestGateway({
      upstreams: [ark, speech, openai],
      configText: [
        'providers:',
        fakeProviderYaml('ark', 'ark', ark),
        fakeProviderYaml('openai', 'openai', openai),
        `  speech: { protocol: speech, baseUrl: "${speech.url}", apiKey: ${fakeSpeechKey} }`,
        '  down: { protocol: ark, baseUrl: "http://127.0.0.1:9/api/v3", apiKey: sk-x, timeoutMs: 2000 }',
        '  sandbox: { protocol: sandbox }',
        'models:',
        duo('duo-image', {
          modalities: 'outputModalities: [image]',
          pricing: 'perImage: 0.03',
          first: 'provider: ark, model: seedream-4-0-250828',
          sandboxModel: 'image',
        }),
        // An image model and a chat model on one provider row: one breaker for both.
        '  - { id: shared-image, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: openai, model: gpt-image-1, priority: 1 }, { provider: sandbox, model: image, priority: 2 }] }',
        '  - { id: shared-chat, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, providers: [{ provider: openai, model: gpt-image-1, priority: 1 }, { provider: sandbox, model: echo, priority: 2 }] }',
        '  - { id: weary-image, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-a, priority: 1 }, { provider: ark, model: seedream-b, priority: 2 }] }',
        duo('down-image', {
          modalities: 'outputModalities: [image]',
          pricing: 'perImage: 0.03',
          first: 'provider: down, model: seedream-4-0-250828',
          sandboxModel: 'image',
        }),
        duo('duo-video', {
          modalities: 'outputModalities: [video]',
          pricing: 'perVideoSecond: 0.05',
          first: 'provider: ark, model: seedance-1-0-pro-250528',
          sandboxModel: 'video',
        }),
        duo('taken-video', {
          modalities: 'outputModalities: [video]',
          pricing: 'perVideoSecond: 0.05',
          first: 'provider: ark, model: seedance-1-0-lite-t2v-250428',
          sandboxModel: 'video',
        }),
        duo('seed-tts-1.0', {
          modalities: 'outputModalities: [audio]',
          pricing: 'perMCharacters: 60',
          first: 'provider: speech, model: seed-tts-1.0',
          sandboxModel: 'speech',
        }),
        duo('duo-reference', {
          modalities: 'inputModalities: [text, audio], outputModalities: [audio]',
          pricing: 'perAudioSecond: 0.01',
          first: 'provider: speech, model: seed-audio-1.0',
          sandboxModel: 'audio-reference',
        }),
        'voices:',
        '  - { voiceType: zh_female_cancan_mars_bigtts, name: Cancan, gender: female, age: adult, categories: [General], languages: [{ language: zh-CN, text: 你好 }], resourceId: seed-tts-1.0 }',
        // Three failures in a row open a row, from the default three accounts; nothing closes it during the tests.
        'upstream: { breakerFailures: 3, breakerCooldownMs: 600000 }',
        'jobs: { maxAttempts: 3, retryBaseMs: 20, idlePollMs: 50, taskPollMs: 50 }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  /** Submits a job with a prompt of its own (`words` in it) and waits for it to end; answers its id and prompt. */
  async function run(
    key: string,
    accountId: string,
    { kind, words, body = kind.body }: { kind: JobKind; words: string; body?: JobKind['body'] },
  ) {
    prompts += 1;
    const prompt = `job ${prompts} ${words}`;
    const submitted = await gateway.request({
      method: 'POST',
      url: kind.url,
      headers: keyHeaders(key),
      payload: body(prompt),
    });
    expect(submitted.statusCode, submitted.body).toBeLessThan(300);
    const { generationId } = submitted.json<{ generationId: string }>();
    for (let read = 0; ; read += 1) {
      const job = (await jobRowsOf(gateway, accountId)).find((row) => row.id === generationId);
      if (job && ['succeeded', 'failed', 'cancelled'].includes(job.state)) return { generationId, prompt, job };
      if (read > 400) throw new Error(`job ${generationId} did not end`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  const record = async (accountId: string, generationId: string) => {
    const answer = await gateway.request({
      method: 'GET',
      url: `/api/admin/v1/accounts/${accountId}/generations?limit=100`,
      headers: adminHeaders,
    });
    return answer.json<{ results: AuditedRecord[] }>().results.find((found) => found.id === generationId);
  };
  /** The calls the first row's fake got that carry `prompt`. */
  const sentTo = (fake: FakeServer, prompt: string) =>
    fake.requests.filter((request) => request.method === 'POST' && JSON.stringify(request.body).includes(prompt))
      .length;
  const fakeOf = (kind: JobKind) => (kind.first.providerId === 'ark' ? ark : speech);

  describe.each(Object.entries(kinds))('%s jobs', (_name, kind) => {
    // The account whose jobs fail on the first row, before any other account's do.
    let first: { key: string; accountId: string };

    it('go on to the second row when the first answers 503 or 429, settled once, the record naming both rows', async () => {
      first = await gateway.createFundedKey({ credits: 5 });
      for (const status of [503, 429]) {
        const { generationId, prompt, job } = await run(first.key, first.accountId, {
          kind,
          words: `fake-error-${status}`,
        });
        expect(job.state, job.error ?? '').toBe('succeeded');
        expect(job).toMatchObject({ providerId: 'sandbox', upstreamModel: kind.sandboxModel });
        // The first row was called once: a failure another row may not share goes on, not back to the queue.
        expect(sentTo(fakeOf(kind), prompt)).toBe(1);
        const recorded = await record(first.accountId, generationId);
        expect(recorded).toMatchObject({
          status: 'succeeded',
          route: {
            providerId: 'sandbox',
            upstreamModel: kind.sandboxModel,
            fallbacks: [{ ...kind.first, outcome: 'failed', reason: `upstream answered ${status}`, status }],
          },
        });
        expect(recorded!.usdCost).toBeGreaterThan(0);
      }
      expect(await heldNanosOf(gateway, first.accountId)).toBe(0n);
    });

    it('fail on a client-fault 4xx without another row, their holds given back, the row not counted', async () => {
      for (let account = 0; account < 3; account += 1) {
        const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
        const { generationId, prompt, job } = await run(key, accountId, { kind, words: 'fake-error-400' });
        expect(job).toMatchObject({ state: 'failed', ...kind.first });
        expect(job.error).toContain('400');
        expect(sentTo(fakeOf(kind), prompt)).toBe(1);
        expect(await record(accountId, generationId)).toMatchObject({
          status: 'failed',
          usdCost: 0,
          route: { ...kind.first, fallbacks: [] },
        });
        expect(await heldNanosOf(gateway, accountId)).toBe(0n);
      }
      expect(await breakerStateOf(gateway, kind.first)).toBe(0);
    });

    it("leave the row to the others however often one account's jobs make it fail", async () => {
      const { generationId } = await run(first.key, first.accountId, { kind, words: 'fake-error-503' });
      expect((await record(first.accountId, generationId))?.status).toBe('succeeded');
      // Three failures in a row, all of one account's jobs: the row stays closed.
      expect(await breakerStateOf(gateway, kind.first)).toBe(0);
    });

    it('skip the row once failures came from three accounts, without calling it', async () => {
      for (let account = 0; account < 2; account += 1) {
        const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
        expect((await run(key, accountId, { kind, words: 'fake-error-503' })).job.state).toBe('succeeded');
      }
      expect(await breakerStateOf(gateway, kind.first)).toBe(1);
      const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
      const { generationId, prompt, job } = await run(key, accountId, { kind, words: 'a quiet harbour' });
      expect(job.state, job.error ?? '').toBe('succeeded');
      expect(sentTo(fakeOf(kind), prompt)).toBe(0);
      expect(await record(accountId, generationId)).toMatchObject({
        status: 'succeeded',
        route: {
          providerId: 'sandbox',
          fallbacks: [{ ...kind.first, outcome: 'skipped', reason: 'breaker open' }],
        },
      });
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    });
  });

  it("share their rows' breakers with requests: a row that jobs opened is skipped by a chat request", async () => {
    const row = { providerId: 'openai', upstreamModel: 'gpt-image-1' };
    const shared: JobKind = {
      ...kinds.image!,
      body: (prompt) => ({ model: 'shared-image', content: [text(prompt)] }),
    };
    for (let account = 0; account < 3; account += 1) {
      const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
      expect((await run(key, accountId, { kind: shared, words: 'fake-error-503' })).job.state).toBe('succeeded');
    }
    expect(await breakerStateOf(gateway, row)).toBe(1);
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const chats = () => openai.requests.filter((request) => request.path.includes('/chat/')).length;
    const before = chats();
    const answer = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: keyHeaders(key),
      payload: { model: 'shared-chat', messages: [{ role: 'user', content: 'anyone there' }] },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(chats()).toBe(before);
    await gateway.settled();
    const [recorded] = (
      await gateway.request({
        method: 'GET',
        url: `/api/admin/v1/accounts/${accountId}/generations?limit=100`,
        headers: adminHeaders,
      })
    ).json<{ results: AuditedRecord[] }>().results;
    expect(recorded).toMatchObject({
      route: { providerId: 'sandbox', fallbacks: [{ ...row, outcome: 'skipped', reason: 'breaker open' }] },
    });
  });

  it('go on to the second row when the first cannot be reached', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const down: JobKind = { ...kinds.image!, body: (prompt) => ({ model: 'down-image', content: [text(prompt)] }) };
    const { generationId, job } = await run(key, accountId, { kind: down, words: 'nobody home' });
    expect(job.state, job.error ?? '').toBe('succeeded');
    expect(await record(accountId, generationId)).toMatchObject({
      route: {
        providerId: 'sandbox',
        fallbacks: [{ providerId: 'down', outcome: 'failed', reason: 'upstream unreachable' }],
      },
    });
  });

  it('retry on the row they were last sent to when every row fails, the record naming every try', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const weary: JobKind = { ...kinds.image!, body: (prompt) => ({ model: 'weary-image', content: [text(prompt)] }) };
    const { generationId, prompt, job } = await run(key, accountId, { kind: weary, words: 'fake-error-503' });
    // Both rows, then (jobs.maxAttempts: 3) the last one once more, after the backoff.
    expect(job).toMatchObject({ state: 'failed', providerId: 'ark', upstreamModel: 'seedream-b', attempts: 3 });
    expect(sentTo(ark, prompt)).toBe(3);
    const failed = (upstreamModel: string) => ({ providerId: 'ark', upstreamModel, outcome: 'failed', status: 503 });
    expect(await record(accountId, generationId)).toMatchObject({
      status: 'failed',
      usdCost: 0,
      route: {
        providerId: 'ark',
        upstreamModel: 'seedream-b',
        fallbacks: [failed('seedream-a'), failed('seedream-b')],
      },
    });
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('follow a video task where the first row accepted it, and never create it again elsewhere', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const taken: JobKind = {
      ...kinds.video!,
      body: (prompt) => ({ model: 'taken-video', content: [text(prompt)], duration: 2 }),
    };
    // The task is created, then its reads answer 404: the job fails where its task is.
    const { generationId, prompt, job } = await run(key, accountId, { kind: taken, words: 'fake-video-lost' });
    expect(job).toMatchObject({ state: 'failed', providerId: 'ark', upstreamModel: 'seedance-1-0-lite-t2v-250428' });
    expect(job.upstreamTaskId).not.toBeNull();
    expect(sentTo(ark, prompt)).toBe(1);
    expect(await record(accountId, generationId)).toMatchObject({
      status: 'failed',
      route: { providerId: 'ark', fallbacks: [] },
    });
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });
});
