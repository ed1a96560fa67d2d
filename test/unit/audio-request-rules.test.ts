import { afterAll, describe, expect, it } from 'vitest';
import { audioSecondPriceSnapshot } from '../../src/billing/duration-pricing.ts';
import { Catalog } from '../../src/catalog/catalog.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { referenceRows } from '../../src/gateway/media-rows.ts';
import { refuseMixedReferences } from '../../src/gateway/speech-generation.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { createSpeechAdapter } from '../../src/providers/speech/speech-adapter.ts';
import { ReferenceAudioBody, TextToSpeechBody } from '../../src/surfaces/native/audio-codec.ts';
import { bodyErrors } from '../support/body-check.ts';
import { refusal } from '../support/refusal.ts';

/**
 * The native audio routes' requests that break a rule of the spec's audio table, refused naming the field by
 * the routes' body schemas, and a generation with reference refused by its model's rows, prices and the rule on
 * references. That both routes and their estimates answer these as a 400 envelope holding, storing and sending
 * nothing is claimed over HTTP (on both databases) in audio.test.ts, with the refusals that need the voice
 * catalog.
 */
const voiceType = 'zh_female_cancan_mars_bigtts';

describe('a text-to-speech body that breaks a rule is refused naming the field', () => {
  it('lets one within every rule through', () => {
    expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', format: 'pcm', sampleRate: 8000 })).toEqual([]);
  });

  it('no voiceType', () => {
    expect(bodyErrors(TextToSpeechBody, { text: 'hi' })).toEqual(["body must have required property 'voiceType'"]);
  });

  it('empty text', () => {
    expect(bodyErrors(TextToSpeechBody, { voiceType, text: '' })).toEqual([
      'body.text must NOT have fewer than 1 characters',
    ]);
  });

  it('1,001 characters', () => {
    expect(bodyErrors(TextToSpeechBody, { voiceType, text: '字'.repeat(1001) })).toEqual([
      'body.text must NOT have more than 1000 characters',
    ]);
  });

  it('wav', () => {
    expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', format: 'wav' })).toEqual([
      'body.format must be one of: mp3, ogg_opus, pcm',
    ]);
  });

  it('an unlisted sample rate', () => {
    expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', sampleRate: 11025 })).toEqual([
      'body.sampleRate must be one of: 8000, 16000, 22050, 24000, 32000, 44100, 48000',
    ]);
  });

  it('speechRate 101', () => {
    expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', speechRate: 101 })).toEqual([
      'body.speechRate must be <= 100',
    ]);
  });

  it('loudnessRate -51', () => {
    expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', loudnessRate: -51 })).toEqual([
      'body.loudnessRate must be >= -50',
    ]);
  });

  it('pitch 13', () => {
    expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', pitch: 13 })).toEqual(['body.pitch must be <= 12']);
  });

  it('silenceDuration 30001', () => {
    expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', silenceDuration: 30_001 })).toEqual([
      'body.silenceDuration must be <= 30000',
    ]);
  });

  it('an unknown explicitLanguage', () => {
    expect(bodyErrors(TextToSpeechBody, { voiceType, text: 'hi', explicitLanguage: 'xx' })).toEqual([
      'body.explicitLanguage must be one of: zh, zh-cn, en, ja, es, es-mx, id, pt-br, ko, it, de, fr',
    ]);
  });

  it('two contextTexts', () => {
    expect(
      bodyErrors(TextToSpeechBody, { voiceType: 'en_female_anna_uranus_bigtts', text: 'hi', contextTexts: ['a', 'b'] }),
    ).toEqual(['body.contextTexts must NOT have more than 1 items']);
  });
});

const config = parseConfig(
  [
    'providers:',
    '  speech: { protocol: speech, baseUrl: https://speech.example, apiKey: k }',
    'models:',
    '  - { id: seed-audio-1.0-multilingual, inputModalities: [text, audio, image], outputModalities: [audio], pricing: { perAudioSecond: 0.01 }, providers: [{ provider: speech, model: seed-audio-1.0 }] }',
    '  - { id: seed-tts-2.0, outputModalities: [audio], pricing: { perMCharacters: 80 }, providers: [{ provider: speech, model: seed-tts-2.0 }] }',
    '  - { id: unpriced-audio, inputModalities: [text, audio], outputModalities: [audio], providers: [{ provider: speech, model: seed-audio-1.0 }] }',
  ].join('\n'),
  'audio-rules.yaml',
  {},
);
const catalog = new Catalog(config);
const http = new UpstreamHttp();
afterAll(() => http.close());
const sources = { adapters: new Map([['speech' as const, createSpeechAdapter(http)]]), providers: config.providers };
const model = 'seed-audio-1.0-multilingual';

/** The model's refusal of a generation with reference: resolved, its reference rows, its per-second prices. */
const modelRefusal = (modelId: string) =>
  refusal(() => {
    const resolved = catalog.resolve(modelId);
    referenceRows(sources, resolved);
    audioSecondPriceSnapshot(resolved);
  });

describe('a generation with reference that breaks a rule is refused', () => {
  it('lets one within every rule through', () => {
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', references: [{ speaker: 'a' }] })).toEqual([]);
    expect(() => modelRefusal(model)).toThrow('expected a refusal');
  });

  it('an unknown model', () => {
    expect(modelRefusal('nope')).toMatchObject({ code: 'GW_MODEL_NOT_AVAILABLE', status: 400 });
    expect(modelRefusal('nope').message).toContain('model "nope"');
  });

  it('a text-to-speech model', () => {
    expect(modelRefusal('seed-tts-2.0')).toMatchObject({ code: 'GW_MODEL_NOT_AVAILABLE', status: 400 });
    expect(modelRefusal('seed-tts-2.0').message).toContain('model "seed-tts-2.0"');
  });

  it('an unpriced model', () => {
    expect(modelRefusal('unpriced-audio')).toMatchObject({ code: 'GW_MODEL_NOT_PRICED', status: 400 });
    expect(modelRefusal('unpriced-audio').message).toContain('model "unpriced-audio"');
  });

  it('an image reference mixed with an audio one', () => {
    const references: Array<Record<string, string>> = [
      { imageUrl: 'https://example.com/a.png' },
      { audioUrl: 'https://example.com/a.mp3' },
    ];
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', references })).toEqual([]);
    const error = refusal(() => refuseMixedReferences(references));
    expect(error).toMatchObject({ code: 'GW_VALIDATION', status: 400 });
    expect(error.message).toContain('"references"');
  });

  it('no model', () => {
    expect(bodyErrors(ReferenceAudioBody, { textPrompt: 'x' })).toEqual(["body must have required property 'model'"]);
  });

  it('no textPrompt', () => {
    expect(bodyErrors(ReferenceAudioBody, { model })).toEqual(["body must have required property 'textPrompt'"]);
  });

  it('an empty textPrompt', () => {
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: '' })).toEqual([
      'body.textPrompt must NOT have fewer than 1 characters',
    ]);
  });

  it('a textPrompt of 3,001 characters', () => {
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: '字'.repeat(3001) })).toEqual([
      'body.textPrompt must NOT have more than 3000 characters',
    ]);
  });

  it('four references', () => {
    expect(
      bodyErrors(ReferenceAudioBody, {
        model,
        textPrompt: 'x',
        references: [{ speaker: 'a' }, { speaker: 'b' }, { speaker: 'c' }, { speaker: 'd' }],
      }),
    ).toEqual(['body.references must NOT have more than 3 items']);
  });

  it('a reference that is not an object', () => {
    expect(
      bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', references: ['zh_male_m191_uranus_bigtts'] }),
    ).toEqual(['body.references.0 must be object']);
  });

  it('a reference field that is not text', () => {
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', references: [{ speaker: 7 }] })).toEqual([
      'body.references.0.speaker must be string',
    ]);
  });

  it('an unknown format', () => {
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', format: 'flac' })).toEqual([
      'body.format must be one of: mp3, wav, ogg_opus, pcm',
    ]);
  });

  it('a sample rate text-to-speech takes but this product does not', () => {
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', sampleRate: 22050 })).toEqual([
      'body.sampleRate must be one of: 8000, 16000, 24000, 32000, 44100, 48000',
    ]);
  });

  it('speechRate 101', () => {
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', speechRate: 101 })).toEqual([
      'body.speechRate must be <= 100',
    ]);
  });

  it('loudnessRate -51', () => {
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', loudnessRate: -51 })).toEqual([
      'body.loudnessRate must be >= -50',
    ]);
  });

  it('pitchRate 13', () => {
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', pitchRate: 13 })).toEqual([
      'body.pitchRate must be <= 12',
    ]);
  });

  it('a fractional speechRate', () => {
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', speechRate: 1.5 })).toEqual([
      'body.speechRate must be integer',
    ]);
  });

  it('enableSubtitle that is not a boolean', () => {
    expect(bodyErrors(ReferenceAudioBody, { model, textPrompt: 'x', enableSubtitle: 'yes' })).toEqual([
      'body.enableSubtitle must be boolean',
    ]);
  });
});
