import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceSecondsEstimate } from '../../src/billing/spoken-length.ts';
import { durationCostNanos } from '../../src/billing/duration-pricing.ts';
import { usdToNanos } from '../../src/domain/money.ts';
import { audioSeconds } from '../../src/media/media-duration.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeSpeechKey, startSpeechFake } from '../fakes/speech-fake.ts';
import { expectEnvelope, heldNanosOf, keyHeaders, pollUntil, usageRecords } from '../support/http-helpers.ts';
import { balanceNanosOf, jobRowsOf } from '../support/image-jobs.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const voicesYaml = [
  'voices:',
  '  - { voiceType: en_female_anna_uranus_bigtts, name: Anna, gender: female, age: adult, categories: [General], languages: [{ language: en-US, text: Hello }], resourceId: seed-tts-2.0 }',
  '  - { voiceType: zh_male_m191_uranus_bigtts, name: Yunzhou, gender: male, age: adult, categories: [Dubbing], languages: [{ language: zh-CN, text: 你好 }], resourceId: seed-tts-2.0 }',
  '  - { voiceType: zh_female_cancan_mars_bigtts, name: Cancan, gender: female, age: teenager, categories: [General, Advertisement], languages: [{ language: zh-CN, text: 你好 }], resourceId: seed-tts-1.0 }',
].join('\n');

interface Subtitle {
  text: string;
  sentences: Array<{
    text: string;
    startTime: number;
    endTime: number;
    words: Array<{ text: string; startTime: number; endTime: number }>;
  }>;
}

interface AudioJob {
  generationId: string;
  product: string;
  status: string;
  audioUrl?: string;
  durationSeconds?: number;
  originalDurationSeconds?: number;
  providerUrl?: string;
  subtitle?: Subtitle;
  error?: string;
}

/** The audio job, once it has ended. */
const waitForAudio = (gateway: TestGateway, key: string, id: string) =>
  pollUntil<AudioJob>(
    gateway,
    { key, url: `/api/v1/audio/generations/${id}` },
    (job) => job.status === 'succeeded' || job.status === 'failed',
  );

/** The archived file behind a job's signed link. */
async function download(gateway: TestGateway, job: AudioJob) {
  const url = new URL(job.audioUrl!);
  const response = await gateway.request({ method: 'GET', url: `${url.pathname}${url.search}` });
  expect(response.statusCode).toBe(200);
  return { bytes: response.rawPayload, contentType: String(response.headers['content-type']) };
}

describe('text-to-speech jobs and the voice catalog', () => {
  let gateway: TestGateway;
  let speech: FakeServer;

  beforeAll(async () => {
    speech = await startSpeechFake();
    gateway = await startTestGateway({
      upstreams: [speech],
      configText: [
        'providers:',
        `  speech: { protocol: speech, baseUrl: "${speech.url}", apiKey: ${fakeSpeechKey} }`,
        'models:',
        '  - { id: seed-tts-1.0, outputModalities: [audio], pricing: { perMCharacters: 60 }, providers: [{ provider: speech, model: seed-tts-1.0 }] }',
        '  - { id: seed-tts-2.0, outputModalities: [audio], pricing: { perMCharacters: 80 }, providers: [{ provider: speech, model: seed-tts-2.0 }] }',
        '  - { id: seed-audio-1.0-multilingual, inputModalities: [text, audio, image], outputModalities: [audio], pricing: { perAudioSecond: 0.01 }, providers: [{ provider: speech, model: seed-audio-1.0 }] }',
        voicesYaml,
        'jobs: { maxAttempts: 3, retryBaseMs: 20, idlePollMs: 50 }',
        'media: { maxDownloadBytes: 1048576 }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const speak = (key: string, body: Record<string, unknown>, estimate = false) =>
    gateway.request({
      method: 'POST',
      url: `/api/v1/audio/text-to-speech${estimate ? '/estimate' : ''}`,
      headers: keyHeaders(key),
      payload: body,
    });

  it('speaks through the speech protocol: 202, then the Audio job with a signed MP3 link; estimate = hold = charge per character', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const text = 'Hello there, this is a test of the speech path.';
    const body = {
      voiceType: 'en_female_anna_uranus_bigtts',
      text,
      contextTexts: ['warmly'],
      silenceDuration: 200,
      pitch: 3,
    };
    const estimate = await speak(key, body, true);
    const cost = (BigInt([...text].length) * usdToNanos(80)) / 1_000_000n;
    expect(estimate.json()).toEqual({
      data: { estimatedUserCost: Number(cost) / 1e9, currency: 'USD' },
      success: true,
      status: 200,
    });
    const submitted = await speak(key, body);
    expect(submitted.statusCode, submitted.body).toBe(202);
    const { generationId } = submitted.json<{ generationId: string }>();
    expect(Object.keys(submitted.json())).toEqual(['generationId']);
    const [row] = await jobRowsOf(gateway, accountId);
    expect(row?.holdNanos).toBe(cost);
    const job = await waitForAudio(gateway, key, generationId);
    expect(job, job.error).toMatchObject({ generationId, product: 'text-to-speech', status: 'succeeded' });
    const url = new URL(job.audioUrl!);
    const audio = await gateway.request({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(audio.headers['content-type']).toBe('audio/mpeg');
    expect(audio.rawPayload.subarray(0, 2).equals(Buffer.from([0xff, 0xfb]))).toBe(true);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - cost);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    const sent = speech.requests.find(
      (request) => (request.body as { req_params?: { text?: string } } | undefined)?.req_params?.text === text,
    )!;
    expect(sent.headers['x-api-resource-id']).toBe('seed-tts-2.0');
    expect(JSON.parse((sent.body as { req_params: { additions: string } }).req_params.additions)).toEqual({
      silence_duration: 200,
      context_texts: ['warmly'],
      post_process: { pitch: 3 },
    });
    const usage = await gateway.request({ method: 'GET', url: '/api/compat/v1/usage', headers: keyHeaders(key) });
    expect(usage.json<{ results: unknown[] }>().results[0]).toMatchObject({
      id: generationId,
      modality: 'audio',
      model: 'seed-tts-2.0',
      status: 'succeeded',
    });
  });

  it('gives the subtitle of the speech frames, timed in milliseconds, only when asked for', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const text = 'Good morning. How are you?';
    const timed = await waitForAudio(
      gateway,
      key,
      (await speak(key, { voiceType: 'zh_female_cancan_mars_bigtts', text, enableSubtitle: true })).json<{
        generationId: string;
      }>().generationId,
    );
    expect(timed.status, timed.error).toBe('succeeded');
    // The fake times every character 60 ms and sends the word times in seconds.
    expect(timed.subtitle).toEqual({
      text: 'Good morning. How are you?',
      sentences: [
        {
          text: 'Good morning.',
          startTime: 0,
          endTime: 720,
          words: [
            { text: 'Good', startTime: 0, endTime: 240 },
            { text: 'morning', startTime: 300, endTime: 720 },
          ],
        },
        {
          text: 'How are you?',
          startTime: 840,
          endTime: 1500,
          words: [
            { text: 'How', startTime: 840, endTime: 1020 },
            { text: 'are', startTime: 1080, endTime: 1260 },
            { text: 'you', startTime: 1320, endTime: 1500 },
          ],
        },
      ],
    });
    const asked = speech.requests.filter(
      (request) => (request.body as { req_params?: { text?: string } }).req_params?.text === text,
    );
    expect(
      (asked[0]!.body as { req_params: { audio_params: Record<string, unknown> } }).req_params.audio_params
        .enable_subtitle,
    ).toBe(true);

    const plain = await waitForAudio(
      gateway,
      key,
      (await speak(key, { voiceType: 'zh_female_cancan_mars_bigtts', text: 'No subtitle here.' })).json<{
        generationId: string;
      }>().generationId,
    );
    expect(plain.status).toBe('succeeded');
    expect(plain).not.toHaveProperty('subtitle');
    const sent = speech.requests.find(
      (request) => (request.body as { req_params?: { text?: string } }).req_params?.text === 'No subtitle here.',
    )!;
    expect(
      (sent.body as { req_params: { audio_params: Record<string, unknown> } }).req_params.audio_params,
    ).not.toHaveProperty('enable_subtitle');
  });

  it.each([
    ['ogg_opus', 'audio/ogg'],
    ['pcm', 'audio/L16'],
  ])('archives %s speech as %s, as long as the text takes to say', async (format, contentType) => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const text = 'Twenty characters!!!';
    const job = await waitForAudio(
      gateway,
      key,
      (await speak(key, { voiceType: 'en_female_anna_uranus_bigtts', text, format, sampleRate: 16000 })).json<{
        generationId: string;
      }>().generationId,
    );
    expect(job.status, job.error).toBe('succeeded');
    expect(job.audioUrl).toMatch(format === 'pcm' ? /speech\.pcm\?/ : /speech\.ogg\?/);
    const file = await download(gateway, job);
    expect(file.contentType).toBe(contentType);
    expect(await audioSeconds(file.bytes, contentType, 16000)).toBeCloseTo(1.2, 3);
  });

  it('a provider error fails the job, refunds the hold and charges nothing; a cut answer too', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    for (const text of ['refused fake-error-400', 'cut short fake-cut', 'broke fake-inband-error']) {
      const { generationId } = (await speak(key, { voiceType: 'zh_female_cancan_mars_bigtts', text })).json<{
        generationId: string;
      }>();
      const job = await waitForAudio(gateway, key, generationId);
      expect(job.status, text).toBe('failed');
      expect(job.error).toBeTruthy();
    }
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('fails a job whose provider streams more audio than media.maxDownloadBytes, reading no further and charging nothing', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const { generationId } = (
      await speak(key, { voiceType: 'zh_female_cancan_mars_bigtts', text: 'never ends fake-endless' })
    ).json<{ generationId: string }>();
    const job = await waitForAudio(gateway, key, generationId);
    expect(job.status).toBe('failed');
    expect(job.error).toContain('1048576 bytes');
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it.each(['mp3', 'ogg_opus', 'pcm'])(
    'a provider answer whose "audio" is an error page (%s asked) fails the job and charges nothing',
    async (format) => {
      const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
      const { generationId } = (
        await speak(key, { voiceType: 'zh_female_cancan_mars_bigtts', text: 'page fake-not-audio', format })
      ).json<{ generationId: string }>();
      const job = await waitForAudio(gateway, key, generationId);
      expect(job.status).toBe('failed');
      expect(job.error).toMatch(/^the provider output is not audio\/\S+ audio$/);
      expect(job.audioUrl).toBeUndefined();
      expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    },
  );

  it.each([
    ['no voiceType', { text: 'hi' }, 'GW_VALIDATION'],
    ['an unknown voice', { voiceType: 'nobody', text: 'hi' }, 'GW_VALIDATION'],
    ['empty text', { voiceType: 'zh_female_cancan_mars_bigtts', text: '' }, 'GW_VALIDATION'],
    ['1,001 characters', { voiceType: 'zh_female_cancan_mars_bigtts', text: '字'.repeat(1001) }, 'GW_VALIDATION'],
    ['wav', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', format: 'wav' }, 'GW_VALIDATION'],
    [
      'an unlisted sample rate',
      { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', sampleRate: 11025 },
      'GW_VALIDATION',
    ],
    ['speechRate 101', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', speechRate: 101 }, 'GW_VALIDATION'],
    ['loudnessRate -51', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', loudnessRate: -51 }, 'GW_VALIDATION'],
    ['pitch 13', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', pitch: 13 }, 'GW_VALIDATION'],
    [
      'silenceDuration 30001',
      { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', silenceDuration: 30_001 },
      'GW_VALIDATION',
    ],
    [
      'an unknown explicitLanguage',
      { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', explicitLanguage: 'xx' },
      'GW_VALIDATION',
    ],
    [
      'two contextTexts',
      { voiceType: 'en_female_anna_uranus_bigtts', text: 'hi', contextTexts: ['a', 'b'] },
      'GW_VALIDATION',
    ],
    [
      'contextTexts for a 1.0 voice',
      { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', contextTexts: ['a'] },
      'GW_PARAMETER_UNSUPPORTED',
    ],
  ])('refuses %s with 400, holding and storing nothing', async (_name, body, code) => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    expectEnvelope(await speak(key, body), { status: 400, code, path: '/api/v1/audio/text-to-speech' });
    expectEnvelope(await speak(key, body, true), {
      status: 400,
      code,
      path: '/api/v1/audio/text-to-speech/estimate',
    });
    expect(await jobRowsOf(gateway, accountId)).toEqual([]);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  // Nothing to say is refused as no text is, naming the field: white space of any kind, Unicode's included, and
  // the invisible characters that are not white space (default-ignorable code points, the blank braille pattern).
  it.each([
    ' ',
    '\n\t  \r\n',
    '\u3000\u00a0\u2003\ufeff',
    '\u200b\u200c\u200d\u2060 ',
    '\u00ad\u3164\u115f\u180e\u2800',
    '\ufe0f\u202e\u2061\uffa0',
  ])(
    'refuses text of white space only (%j) with 400 naming the field, holding, storing and sending nothing',
    async (text) => {
      const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
      const before = speech.requests.length;
      for (const estimate of [false, true]) {
        const envelope = expectEnvelope(
          await speak(key, { voiceType: 'zh_female_cancan_mars_bigtts', text }, estimate),
          {
            status: 400,
            code: 'GW_VALIDATION',
            path: `/api/v1/audio/text-to-speech${estimate ? '/estimate' : ''}`,
          },
        );
        expect(envelope.errors).toEqual([
          'body.text must contain a character other than white space or an invisible one',
        ]);
      }
      expect(await jobRowsOf(gateway, accountId)).toEqual([]);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
      expect(speech.requests.length).toBe(before);
    },
  );

  it('retries a busy provider (503) up to jobs.maxAttempts, then fails the job with its status', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const job = await waitForAudio(
      gateway,
      key,
      (await speak(key, { voiceType: 'zh_female_cancan_mars_bigtts', text: 'busy fake-error-503' })).json<{
        generationId: string;
      }>().generationId,
    );
    // A 503 each time: retried up to jobs.maxAttempts, then failed with the provider's status.
    expect(job).toMatchObject({ status: 'failed', error: expect.stringContaining('503') });
    expect(
      speech.requests.filter(
        (request) => (request.body as { req_params?: { text?: string } }).req_params?.text === 'busy fake-error-503',
      ),
    ).toHaveLength(3);
  });

  it("answers 404 for an unknown or another account's generation", async () => {
    const owner = await gateway.createFundedKey();
    const other = await gateway.createFundedKey();
    const { generationId } = (
      await speak(owner.key, { voiceType: 'zh_female_cancan_mars_bigtts', text: 'mine' })
    ).json<{ generationId: string }>();
    expectEnvelope(
      await gateway.request({
        method: 'GET',
        url: `/api/v1/audio/generations/${generationId}`,
        headers: keyHeaders(other.key),
      }),
      { status: 404, code: 'GW_NOT_FOUND', path: `/api/v1/audio/generations/${generationId}` },
    );
    await waitForAudio(gateway, owner.key, generationId);
  });

  it('lists voices with the filters, and contextTexts only for 2.0 voices', async () => {
    const { key } = await gateway.createFundedKey();
    const list = async (query: string) =>
      (await gateway.request({ method: 'GET', url: `/api/v1/audio/voices${query}`, headers: keyHeaders(key) })).json<{
        voices: Array<{ voiceType: string; capabilities: { contextTexts: boolean } }>;
        total: number;
      }>();
    const all = await list('');
    expect(all.total).toBe(3);
    expect(Object.fromEntries(all.voices.map((voice) => [voice.voiceType, voice.capabilities.contextTexts]))).toEqual({
      en_female_anna_uranus_bigtts: true,
      zh_male_m191_uranus_bigtts: true,
      zh_female_cancan_mars_bigtts: false,
    });
    expect((await list('?gender=male')).voices.map((voice) => voice.voiceType)).toEqual(['zh_male_m191_uranus_bigtts']);
    expect((await list('?age=teenager')).total).toBe(1);
    expect((await list('?category=Advertisement')).total).toBe(1);
    expect((await list('?language=zh')).total).toBe(2);
    expect((await list('?language=en-US&resourceId=seed-tts-2.0')).total).toBe(1);
    expect((await list('?resourceId=seed-tts-1.0')).voices.map((voice) => voice.voiceType)).toEqual([
      'zh_female_cancan_mars_bigtts',
    ]);
    const bad = await gateway.request({
      method: 'GET',
      url: '/api/v1/audio/voices?gender=robot',
      headers: keyHeaders(key),
    });
    expect(bad.statusCode).toBe(400);
  });
});

describe('generation with reference through the Seed Audio fake', () => {
  let gateway: TestGateway;
  let speech: FakeServer;
  const perSecond = usdToNanos(0.01);

  beforeAll(async () => {
    speech = await startSpeechFake();
    gateway = await startTestGateway({
      upstreams: [speech],
      configText: [
        'providers:',
        `  speech: { protocol: speech, baseUrl: "${speech.url}", apiKey: ${fakeSpeechKey} }`,
        'models:',
        '  - { id: seed-audio-1.0-multilingual, inputModalities: [text, audio, image], outputModalities: [audio], pricing: { perAudioSecond: 0.01 }, providers: [{ provider: speech, model: seed-audio-1.0 }] }',
        '  - { id: seed-tts-2.0, outputModalities: [audio], pricing: { perMCharacters: 80 }, providers: [{ provider: speech, model: seed-tts-2.0 }] }',
        '  - { id: unpriced-audio, inputModalities: [text, audio], outputModalities: [audio], providers: [{ provider: speech, model: seed-audio-1.0 }] }',
        'jobs: { maxAttempts: 3, retryBaseMs: 20, idlePollMs: 50 }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const path = '/api/v1/audio/generation-with-reference';
  const post = (key: string, body: Record<string, unknown>, estimate = false) =>
    gateway.request({
      method: 'POST',
      url: `${path}${estimate ? '/estimate' : ''}`,
      headers: keyHeaders(key),
      payload: body,
    });
  async function generate(key: string, body: Record<string, unknown>): Promise<AudioJob> {
    const submitted = await post(key, body);
    expect(submitted.statusCode, submitted.body).toBe(202);
    expect(Object.keys(submitted.json())).toEqual(['generationId']);
    return waitForAudio(gateway, key, submitted.json<{ generationId: string }>().generationId);
  }
  const sentFor = (prompt: string) =>
    speech.requests.filter((request) => (request.body as { text_prompt?: string }).text_prompt === prompt);
  const model = 'seed-audio-1.0-multilingual';

  it('makes a clip from a prompt: estimate = hold, then the Audio job with both durations, the provider URL and a signed link; charged the billed seconds', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const textPrompt = 'Say hello to the listeners, warmly and slowly.';
    const body = {
      model,
      textPrompt,
      format: 'wav',
      sampleRate: 16000,
      speechRate: 10,
      loudnessRate: -5,
      pitchRate: 2,
      unknown: 'stripped',
    };
    const held = durationCostNanos(perSecond, referenceSecondsEstimate(textPrompt, 10));
    const estimate = await post(key, body, true);
    expect(estimate.json()).toEqual({
      data: { estimatedUserCost: Number(held) / 1e9, currency: 'USD' },
      success: true,
      status: 200,
    });
    const submitted = await post(key, body);
    const [row] = await jobRowsOf(gateway, accountId);
    expect(row?.holdNanos).toBe(held);
    const job = await waitForAudio(gateway, key, submitted.json<{ generationId: string }>().generationId);
    expect(job.status, job.error).toBe('succeeded');
    expect(job).toMatchObject({
      product: 'generation-with-reference',
      providerUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/files\//),
    });
    expect(job).not.toHaveProperty('subtitle');
    const file = await download(gateway, job);
    expect(file.contentType).toBe('audio/wav');
    const playable = (await audioSeconds(file.bytes, 'audio/wav', 16000))!;
    expect(job.durationSeconds).toBeCloseTo(playable, 3);
    // The fake bills the playable length plus the 0.24 s tail it trims.
    expect(job.originalDurationSeconds).toBeCloseTo(playable + 0.24, 3);
    const charged = durationCostNanos(perSecond, job.originalDurationSeconds!);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - charged);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    const [record] = await usageRecords(gateway, key);
    expect(record).toMatchObject({
      id: job.generationId,
      modality: 'audio',
      model,
      status: 'succeeded',
      usdCost: Number(charged) / 1e9,
      usage: { durationSeconds: job.durationSeconds, originalDurationSeconds: job.originalDurationSeconds },
    });
    const [sent] = sentFor(textPrompt);
    expect(sent!.headers['x-api-key']).toBe(fakeSpeechKey);
    expect(sent!.body).toEqual({
      model: 'seed-audio-1.0',
      text_prompt: textPrompt,
      audio_config: { format: 'wav', sample_rate: 16000, speech_rate: 10, loudness_rate: -5, pitch_rate: 2 },
    });
  });

  it('sends the references in order under the protocol names, keeps their base64 short in the record, and gives the subtitle when asked', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const audioData = Buffer.alloc(3000, 7).toString('base64');
    const textPrompt = '@Audio1 greets @Audio2. Then @Audio3 answers!';
    const job = await generate(key, {
      model,
      textPrompt,
      enableSubtitle: true,
      references: [
        { speaker: 'zh_male_m191_uranus_bigtts' },
        { audioUrl: 'https://example.com/voice.mp3' },
        { audioData },
      ],
    });
    expect(job.status, job.error).toBe('succeeded');
    const [sent] = sentFor(textPrompt);
    expect((sent!.body as { references: unknown[] }).references).toEqual([
      { speaker: 'zh_male_m191_uranus_bigtts' },
      { audio_url: 'https://example.com/voice.mp3' },
      { audio_data: audioData },
    ]);
    expect((sent!.body as { audio_config: Record<string, unknown> }).audio_config.enable_subtitle).toBe(true);
    expect(job.subtitle).toEqual({
      text: 'greets. Then answers!',
      sentences: [
        { text: 'greets.', startTime: 0, endTime: 360, words: [{ text: 'greets', startTime: 0, endTime: 360 }] },
        {
          text: 'Then answers!',
          startTime: 480,
          endTime: 1200,
          words: [
            { text: 'Then', startTime: 480, endTime: 720 },
            { text: 'answers', startTime: 780, endTime: 1200 },
          ],
        },
      ],
    });
    const [record] = await usageRecords(gateway, key);
    const recorded = (record!.request as { references: Array<Record<string, string>> }).references;
    expect(recorded[0]).toEqual({ speaker: 'zh_male_m191_uranus_bigtts' });
    expect(recorded[2]!.audioData!.length).toBeLessThan(100);
    expect(JSON.stringify(record)).not.toContain(audioData);
  });

  it('archives a clip the provider answers by URL only', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const job = await generate(key, { model, textPrompt: 'Only a link fake-url-only', format: 'mp3' });
    expect(job.status, job.error).toBe('succeeded');
    const file = await download(gateway, job);
    expect(file.contentType).toBe('audio/mpeg');
    expect(job.durationSeconds).toBeCloseTo((await audioSeconds(file.bytes, 'audio/mpeg', 24000))!, 3);
    expect(speech.requests.some((request) => request.method === 'GET' && request.path.startsWith('/files/'))).toBe(
      true,
    );
  });

  it('charges billed seconds past the hold only up to the length measured in the file and 1.1 times the hold', async () => {
    // The provider says it billed 100,000 s (or 60 s) of a clip about a second long: the claim alone is never charged.
    for (const billed of [100_000, 60]) {
      const { key, accountId } = await gateway.createFundedKey({ credits: 5 });
      const job = await generate(key, { model, textPrompt: `Short prompt, long song fake-billed-${billed}` });
      expect(job).toMatchObject({ status: 'succeeded', originalDurationSeconds: billed });
      const [row] = await jobRowsOf(gateway, accountId);
      const held = row!.holdNanos;
      const file = await download(gateway, job);
      const measured = durationCostNanos(perSecond, (await audioSeconds(file.bytes, file.contentType, 24_000))!);
      const bound = (held * 11n) / 10n;
      const charged = measured > held ? (measured < bound ? measured : bound) : held;
      expect(charged).toBeLessThanOrEqual(bound);
      expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(5) - charged);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
      const cost = BigInt(billed) * perSecond;
      expect((await usageRecords(gateway, key))[0]).toMatchObject({
        usdCost: Number(charged) / 1e9,
        usage: { usdCost: Number(charged) / 1e9, unchargedUsdCost: Number(cost - charged) / 1e9 },
      });
    }
  });

  it.each([
    ['an error status', 'refused fake-error-400', '400'],
    ['an error code in a 200 answer', 'refused fake-inband-error', 'text_prompt is invalid'],
    ['a reference the provider cannot use', 'bad reference', 'exactly one source'],
    ['an answer that breaks the protocol', 'broken fake-garbage', 'does not follow its protocol'],
    ['a provider that stays busy', 'busy fake-error-503', '503'],
  ])('fails on %s, refunds the hold and charges nothing', async (_name, textPrompt, reason) => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const references =
      textPrompt === 'bad reference' ? [{ speaker: 'a', audioUrl: 'https://example.com/b.mp3' }] : undefined;
    const job = await generate(key, { model, textPrompt, ...(references ? { references } : {}) });
    expect(job.status).toBe('failed');
    expect(job.error).toContain(reason);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect((await usageRecords(gateway, key))[0]).toMatchObject({ modality: 'audio', status: 'failed', usdCost: 0 });
  });

  const refusals: Array<[string, Record<string, unknown>, string]> = [
    ['no model', { textPrompt: 'x' }, 'GW_VALIDATION'],
    ['an unknown model', { model: 'nope', textPrompt: 'x' }, 'GW_MODEL_NOT_AVAILABLE'],
    ['a text-to-speech model', { model: 'seed-tts-2.0', textPrompt: 'x' }, 'GW_MODEL_NOT_AVAILABLE'],
    ['an unpriced model', { model: 'unpriced-audio', textPrompt: 'x' }, 'GW_MODEL_NOT_PRICED'],
    ['no textPrompt', { model }, 'GW_VALIDATION'],
    ['an empty textPrompt', { model, textPrompt: '' }, 'GW_VALIDATION'],
    ['a textPrompt of white space only', { model, textPrompt: ' \n\u3000' }, 'GW_VALIDATION'],
    ['a textPrompt of 3,001 characters', { model, textPrompt: '字'.repeat(3001) }, 'GW_VALIDATION'],
    [
      'four references',
      { model, textPrompt: 'x', references: [{ speaker: 'a' }, { speaker: 'b' }, { speaker: 'c' }, { speaker: 'd' }] },
      'GW_VALIDATION',
    ],
    [
      'an image reference mixed with an audio one',
      {
        model,
        textPrompt: 'x',
        references: [{ imageUrl: 'https://example.com/a.png' }, { audioUrl: 'https://example.com/a.mp3' }],
      },
      'GW_VALIDATION',
    ],
    [
      'a reference that is not an object',
      { model, textPrompt: 'x', references: ['zh_male_m191_uranus_bigtts'] },
      'GW_VALIDATION',
    ],
    ['a reference field that is not text', { model, textPrompt: 'x', references: [{ speaker: 7 }] }, 'GW_VALIDATION'],

    ['an unknown format', { model, textPrompt: 'x', format: 'flac' }, 'GW_VALIDATION'],
    [
      'a sample rate text-to-speech takes but this product does not',
      { model, textPrompt: 'x', sampleRate: 22050 },
      'GW_VALIDATION',
    ],
    ['speechRate 101', { model, textPrompt: 'x', speechRate: 101 }, 'GW_VALIDATION'],
    ['loudnessRate -51', { model, textPrompt: 'x', loudnessRate: -51 }, 'GW_VALIDATION'],
    ['pitchRate 13', { model, textPrompt: 'x', pitchRate: 13 }, 'GW_VALIDATION'],
    ['a fractional speechRate', { model, textPrompt: 'x', speechRate: 1.5 }, 'GW_VALIDATION'],
    ['enableSubtitle that is not a boolean', { model, textPrompt: 'x', enableSubtitle: 'yes' }, 'GW_VALIDATION'],
  ];
  it.each(refusals)('refuses %s with 400, holding, storing and sending nothing', async (_name, body, code) => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const before = speech.requests.length;
    for (const estimate of [false, true]) {
      const envelope = expectEnvelope(await post(key, body, estimate), {
        status: 400,
        code,
        path: `${path}${estimate ? '/estimate' : ''}`,
      });
      if (code !== 'GW_VALIDATION') expect(envelope.errors[0]).toContain(`model "${String(body.model)}"`);
      if (_name === 'a textPrompt of white space only')
        expect(envelope.errors).toEqual([
          'body.textPrompt must contain a character other than white space or an invisible one',
        ]);
    }
    expect(await jobRowsOf(gateway, accountId)).toEqual([]);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(speech.requests.length).toBe(before);
  });

  // The provider fetches reference URLs: one at a private or loopback address is the gateway's to refuse, as an
  // image or video job's is (an estimate, which sends nothing, prices it all the same).
  it.each([
    ['an audio reference at a private address', { speaker: 'a' }, { audioUrl: 'http://169.254.169.254/latest' }],
    [
      'an image reference on the loopback',
      { imageUrl: 'https://example.com/a.png' },
      { imageUrl: 'http://[::1]:6379/' },
    ],
  ])('refuses %s with 400 naming it, holding, storing and sending nothing', async (_name, first, second) => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const before = speech.requests.length;
    const body = { model, textPrompt: '@Audio2 hi', references: [first, second] };
    const field = Object.keys(second)[0]!;
    const envelope = expectEnvelope(await post(key, body), { status: 400, code: 'GW_VALIDATION', path });
    expect(envelope.errors[0]).toContain(`references[1].${field}`);
    expect(await jobRowsOf(gateway, accountId)).toEqual([]);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(speech.requests.length).toBe(before);
  });
});

describe('audio through the sandbox of the shipped gateway.yaml', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('speaks any shipped voice without a provider account: silence as long as the text, billed per character', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const voices = (
      await gateway.request({ method: 'GET', url: '/api/v1/audio/voices', headers: keyHeaders(key) })
    ).json<{ total: number }>();
    expect(voices.total).toBeGreaterThanOrEqual(7);
    const submitted = await gateway.request({
      method: 'POST',
      url: '/api/v1/audio/text-to-speech',
      headers: keyHeaders(key),
      payload: { voiceType: 'zh_female_vv_uranus_bigtts', text: '你好，世界' },
    });
    const { generationId } = submitted.json<{ generationId: string }>();
    let job: AudioJob | undefined;
    for (let i = 0; i < 400 && job?.status !== 'succeeded'; i++) {
      job = (
        await gateway.request({
          method: 'GET',
          url: `/api/v1/audio/generations/${generationId}`,
          headers: keyHeaders(key),
        })
      ).json<AudioJob>();
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(job?.status, job?.error).toBe('succeeded');
    const url = new URL(job!.audioUrl!);
    const audio = await gateway.request({ method: 'GET', url: `${url.pathname}${url.search}` });
    // Five characters at 60 ms each, in frames of 1,152 samples at 44.1 kHz: 12 frames of 417 bytes.
    expect(audio.rawPayload.length).toBe(12 * 417);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - (5n * usdToNanos(80)) / 1_000_000n);
  });

  it('makes a reference clip without a provider account, in every format, with and without its subtitle', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const textPrompt = 'Welcome aboard. @Audio1 will guide you.';
    let charged = 0n;
    for (const [format, contentType] of [
      ['mp3', 'audio/mpeg'],
      ['wav', 'audio/wav'],
      ['ogg_opus', 'audio/ogg'],
      ['pcm', 'audio/L16'],
    ] as const) {
      const submitted = await gateway.request({
        method: 'POST',
        url: '/api/v1/audio/generation-with-reference',
        headers: keyHeaders(key),
        payload: {
          model: 'seed-audio-1.0-multilingual',
          textPrompt,
          references: [{ speaker: 'zh_female_vv_uranus_bigtts' }],
          format,
          enableSubtitle: format === 'wav',
        },
      });
      expect(submitted.statusCode, submitted.body).toBe(202);
      const { generationId } = submitted.json<{ generationId: string }>();
      let job: AudioJob | undefined;
      for (let i = 0; i < 400 && job?.status !== 'succeeded' && job?.status !== 'failed'; i++) {
        job = (
          await gateway.request({
            method: 'GET',
            url: `/api/v1/audio/generations/${generationId}`,
            headers: keyHeaders(key),
          })
        ).json<AudioJob>();
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(job?.status, job?.error).toBe('succeeded');
      const file = await download(gateway, job!);
      expect(file.contentType).toBe(contentType);
      // "Welcome aboard. will guide you." is 31 characters at 60 ms (MP3 in whole frames of 26 ms); 0.24 s more is billed.
      const playable = (await audioSeconds(file.bytes, contentType, 24000))!;
      expect(playable).toBeGreaterThanOrEqual(1.86);
      expect(playable).toBeLessThan(1.89);
      expect(job).toMatchObject({
        product: 'generation-with-reference',
        durationSeconds: playable,
        originalDurationSeconds: 2.1,
      });
      if (format === 'wav') expect(job!.subtitle?.text).toBe('Welcome aboard. will guide you.');
      else expect(job).not.toHaveProperty('subtitle');
      charged += durationCostNanos(usdToNanos(0.004), 2.1);
    }
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - charged);
  });
});
