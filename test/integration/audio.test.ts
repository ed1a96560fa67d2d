import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeSpeechKey, startSpeechFake } from '../fakes/speech-fake.ts';
import { expectEnvelope, heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import { balanceNanosOf, jobRowsOf } from '../support/image-jobs.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const voicesYaml = [
  'voices:',
  '  - { voiceType: en_female_anna_uranus_bigtts, name: Anna, gender: female, age: adult, categories: [General], languages: [{ language: en-US, text: Hello }], resourceId: seed-tts-2.0 }',
  '  - { voiceType: zh_male_m191_uranus_bigtts, name: Yunzhou, gender: male, age: adult, categories: [Dubbing], languages: [{ language: zh-CN, text: 你好 }], resourceId: seed-tts-2.0 }',
  '  - { voiceType: zh_female_cancan_mars_bigtts, name: Cancan, gender: female, age: teenager, categories: [General, Advertisement], languages: [{ language: zh-CN, text: 你好 }], resourceId: seed-tts-1.0 }',
].join('\n');

interface AudioJob {
  generationId: string;
  product: string;
  status: string;
  audioUrl?: string;
  error?: string;
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
        voicesYaml,
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function waitForAudio(key: string, id: string): Promise<AudioJob> {
    for (let i = 0; i < 400; i++) {
      const job = (await gateway.request({ method: 'GET', url: `/api/v1/audio/generations/${id}`, headers: keyHeaders(key) })).json<AudioJob>();
      if (job.status === 'succeeded' || job.status === 'failed') return job;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`audio job ${id} did not end`);
  }

  const speak = (key: string, body: Record<string, unknown>, estimate = false) =>
    gateway.request({ method: 'POST', url: `/api/v1/audio/text-to-speech${estimate ? '/estimate' : ''}`, headers: keyHeaders(key), payload: body });

  it('speaks through the speech protocol: 202, then the Audio job with a signed MP3 link; estimate = hold = charge per character', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const text = 'Hello there, this is a test of the speech path.';
    const body = { voiceType: 'en_female_anna_uranus_bigtts', text, contextTexts: ['warmly'], silenceDuration: 200, pitch: 3 };
    const estimate = await speak(key, body, true);
    const cost = (BigInt([...text].length) * usdToNanos(80)) / 1_000_000n;
    expect(estimate.json()).toEqual({ data: { estimatedUserCost: Number(cost) / 1e9, currency: 'USD' }, success: true, status: 200 });
    const submitted = await speak(key, body);
    expect(submitted.statusCode, submitted.body).toBe(202);
    const { generationId } = submitted.json<{ generationId: string }>();
    expect(Object.keys(submitted.json())).toEqual(['generationId']);
    const [row] = await jobRowsOf(gateway, accountId);
    expect(row?.holdNanos).toBe(cost);
    const job = await waitForAudio(key, generationId);
    expect(job, job.error).toMatchObject({ generationId, product: 'text-to-speech', status: 'succeeded' });
    const url = new URL(job.audioUrl!);
    const audio = await gateway.request({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(audio.headers['content-type']).toBe('audio/mpeg');
    expect(audio.rawPayload.subarray(0, 2).equals(Buffer.from([0xff, 0xfb]))).toBe(true);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - cost);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    const sent = speech.requests.find((request) => (request.body as { req_params?: { text?: string } } | undefined)?.req_params?.text === text)!;
    expect(sent.headers['x-api-resource-id']).toBe('seed-tts-2.0');
    expect(JSON.parse((sent.body as { req_params: { additions: string } }).req_params.additions)).toEqual({ silence_duration: 200, context_texts: ['warmly'], post_process: { pitch: 3 } });
    const usage = await gateway.request({ method: 'GET', url: '/api/compat/v1/usage', headers: keyHeaders(key) });
    expect(usage.json<{ results: unknown[] }>().results[0]).toMatchObject({ id: generationId, modality: 'audio', model: 'seed-tts-2.0', status: 'succeeded' });
  });

  it('a provider error fails the job, refunds the hold and charges nothing; a cut answer too', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    for (const text of ['refused fake-error-400', 'cut short fake-cut', 'broke fake-inband-error']) {
      const { generationId } = (await speak(key, { voiceType: 'zh_female_cancan_mars_bigtts', text })).json<{ generationId: string }>();
      const job = await waitForAudio(key, generationId);
      expect(job.status, text).toBe('failed');
      expect(job.error).toBeTruthy();
    }
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it.each([
    ['no voiceType', { text: 'hi' }, 'GW_VALIDATION'],
    ['an unknown voice', { voiceType: 'nobody', text: 'hi' }, 'GW_VALIDATION'],
    ['empty text', { voiceType: 'zh_female_cancan_mars_bigtts', text: '' }, 'GW_VALIDATION'],
    ['1,001 characters', { voiceType: 'zh_female_cancan_mars_bigtts', text: '字'.repeat(1001) }, 'GW_VALIDATION'],
    ['wav', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', format: 'wav' }, 'GW_VALIDATION'],
    ['an unlisted sample rate', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', sampleRate: 11025 }, 'GW_VALIDATION'],
    ['speechRate 101', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', speechRate: 101 }, 'GW_VALIDATION'],
    ['loudnessRate -51', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', loudnessRate: -51 }, 'GW_VALIDATION'],
    ['pitch 13', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', pitch: 13 }, 'GW_VALIDATION'],
    ['silenceDuration 30001', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', silenceDuration: 30_001 }, 'GW_VALIDATION'],
    ['an unknown explicitLanguage', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', explicitLanguage: 'xx' }, 'GW_VALIDATION'],
    ['two contextTexts', { voiceType: 'en_female_anna_uranus_bigtts', text: 'hi', contextTexts: ['a', 'b'] }, 'GW_VALIDATION'],
    ['contextTexts for a 1.0 voice', { voiceType: 'zh_female_cancan_mars_bigtts', text: 'hi', contextTexts: ['a'] }, 'GW_PARAMETER_UNSUPPORTED'],
  ])('refuses %s with 400, holding and storing nothing', async (_name, body, code) => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    expectEnvelope(await speak(key, body), 400, code, '/api/v1/audio/text-to-speech');
    expectEnvelope(await speak(key, body, true), 400, code, '/api/v1/audio/text-to-speech/estimate');
    expect(await jobRowsOf(gateway, accountId)).toEqual([]);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('answers 404 for an unknown or another account\'s generation', async () => {
    const owner = await gateway.createFundedKey();
    const other = await gateway.createFundedKey();
    const { generationId } = (await speak(owner.key, { voiceType: 'zh_female_cancan_mars_bigtts', text: 'mine' })).json<{ generationId: string }>();
    expectEnvelope(await gateway.request({ method: 'GET', url: `/api/v1/audio/generations/${generationId}`, headers: keyHeaders(other.key) }), 404, 'GW_NOT_FOUND', `/api/v1/audio/generations/${generationId}`);
    await waitForAudio(owner.key, generationId);
  });

  it('lists voices with the filters, and contextTexts only for 2.0 voices', async () => {
    const { key } = await gateway.createFundedKey();
    const list = async (query: string) => (await gateway.request({ method: 'GET', url: `/api/v1/audio/voices${query}`, headers: keyHeaders(key) })).json<{ voices: Array<{ voiceType: string; capabilities: { contextTexts: boolean } }>; total: number }>();
    const all = await list('');
    expect(all.total).toBe(3);
    expect(Object.fromEntries(all.voices.map((voice) => [voice.voiceType, voice.capabilities.contextTexts]))).toEqual({ en_female_anna_uranus_bigtts: true, zh_male_m191_uranus_bigtts: true, zh_female_cancan_mars_bigtts: false });
    expect((await list('?gender=male')).voices.map((voice) => voice.voiceType)).toEqual(['zh_male_m191_uranus_bigtts']);
    expect((await list('?age=teenager')).total).toBe(1);
    expect((await list('?category=Advertisement')).total).toBe(1);
    expect((await list('?language=zh')).total).toBe(2);
    expect((await list('?language=en-US&resourceId=seed-tts-2.0')).total).toBe(1);
    expect((await list('?resourceId=seed-tts-1.0')).voices.map((voice) => voice.voiceType)).toEqual(['zh_female_cancan_mars_bigtts']);
    const bad = await gateway.request({ method: 'GET', url: '/api/v1/audio/voices?gender=robot', headers: keyHeaders(key) });
    expect(bad.statusCode).toBe(400);
  });
});

describe('text-to-speech through the sandbox of the shipped gateway.yaml', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('speaks any shipped voice without a provider account: silence as long as the text, billed per character', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const voices = (await gateway.request({ method: 'GET', url: '/api/v1/audio/voices', headers: keyHeaders(key) })).json<{ total: number }>();
    expect(voices.total).toBeGreaterThanOrEqual(7);
    const submitted = await gateway.request({ method: 'POST', url: '/api/v1/audio/text-to-speech', headers: keyHeaders(key), payload: { voiceType: 'zh_female_vv_uranus_bigtts', text: '你好，世界' } });
    const { generationId } = submitted.json<{ generationId: string }>();
    let job: AudioJob | undefined;
    for (let i = 0; i < 400 && job?.status !== 'succeeded'; i++) {
      job = (await gateway.request({ method: 'GET', url: `/api/v1/audio/generations/${generationId}`, headers: keyHeaders(key) })).json<AudioJob>();
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(job?.status, job?.error).toBe('succeeded');
    const url = new URL(job!.audioUrl!);
    const audio = await gateway.request({ method: 'GET', url: `${url.pathname}${url.search}` });
    // Five characters at 60 ms each, in frames of 1,152 samples at 44.1 kHz: 12 frames of 417 bytes.
    expect(audio.rawPayload.length).toBe(12 * 417);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - (5n * usdToNanos(80)) / 1_000_000n);
  });
});
