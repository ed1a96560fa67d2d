import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, expectEnvelope, keyHeaders } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * The voice catalog follows the model catalog as it serves: a text-to-speech model the operator switches on or
 * off at runtime (admin API) brings its voices with it, at once, without a reload of gateway.yaml.
 */
describe('voices of a model switched on and off at runtime', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      configText: [
        'providers:',
        '  sandbox: { protocol: sandbox }',
        'models:',
        // Switched off in the file: the operator switches it on at runtime.
        '  - { id: seed-tts-2.0, isActive: false, outputModalities: [audio], pricing: { perMCharacters: 80 }, providers: [{ provider: sandbox, model: speech }] }',
        'voices:',
        '  - { voiceType: en_female_anna_uranus_bigtts, name: Anna, gender: female, age: adult, categories: [General], languages: [{ language: en-US, text: Hello }], resourceId: seed-tts-2.0 }',
        'jobs: { idlePollMs: 20 }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const voicesOf = async (key: string) =>
    (await gateway.request({ method: 'GET', url: '/api/v1/audio/voices', headers: keyHeaders(key) })).json<{
      voices: Array<{ voiceType: string }>;
    }>().voices;
  const speak = (key: string) =>
    gateway.request({
      method: 'POST',
      url: '/api/v1/audio/text-to-speech',
      headers: keyHeaders(key),
      payload: { voiceType: 'en_female_anna_uranus_bigtts', text: 'Hello there.' },
    });
  const switchModel = (onOrOff: 'enable' | 'disable') =>
    gateway.request({ method: 'POST', url: `/api/admin/v1/catalog/${onOrOff}/seed-tts-2.0`, headers: adminHeaders });

  it('lists and speaks its voices once it is switched on, and neither once it is switched off again', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    expect(await voicesOf(key)).toEqual([]);

    expect((await switchModel('enable')).statusCode).toBe(200);
    expect((await voicesOf(key)).map((voice) => voice.voiceType)).toEqual(['en_female_anna_uranus_bigtts']);
    const spoken = await speak(key);
    expect(spoken.statusCode, spoken.body).toBe(202);

    expect((await switchModel('disable')).statusCode).toBe(200);
    expect(await voicesOf(key)).toEqual([]);
    const refused = expectEnvelope(await speak(key), {
      status: 400,
      code: 'GW_VALIDATION',
      path: '/api/v1/audio/text-to-speech',
    });
    expect(refused.errors[0]).toContain('is not a voice of the catalog');
  });
});
