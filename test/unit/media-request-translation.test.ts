import { describe, expect, it } from 'vitest';
import type { SpeechSynthesisRequest } from '../../src/domain/speech.ts';
import { seedreamBody } from '../../src/providers/ark/ark-images.ts';
import { imageUsageOf } from '../../src/providers/openai/openai-images.ts';
import { seedAudioBody } from '../../src/providers/speech/speech-reference.ts';
import { speechBody } from '../../src/providers/speech/speech-tts.ts';

/** Canonical media requests written as their upstream protocol's body, and an upstream's usage read back, without HTTP. */
describe('a text-to-speech request as the V3 speech body', () => {
  const request: SpeechSynthesisRequest = {
    resourceId: 'seed-tts-2.0',
    voiceType: 'zh_female_vv_uranus_bigtts',
    text: 'Hello there.',
    format: 'ogg_opus',
    sampleRate: 48_000,
  };

  it('puts the text, the voice and the audio parameters under req_params, with the gateway as the user', () => {
    expect(speechBody({ ...request, speechRate: 20, loudnessRate: -10, enableSubtitle: true })).toEqual({
      user: { uid: 'gateway' },
      req_params: {
        text: 'Hello there.',
        speaker: 'zh_female_vv_uranus_bigtts',
        audio_params: {
          format: 'ogg_opus',
          sample_rate: 48_000,
          speech_rate: 20,
          loudness_rate: -10,
          enable_subtitle: true,
        },
      },
    });
  });

  it('writes the additions as one JSON-encoded string, pitch under post_process', () => {
    const body = speechBody({
      ...request,
      pitch: -3,
      silenceDuration: 500,
      enableLanguageDetector: true,
      explicitLanguage: 'en',
      disableMarkdownFilter: true,
      disableEmojiFilter: false,
      contextTexts: ['calmly'],
    });
    const { additions } = body.req_params;
    if (typeof additions !== 'string') throw new Error('no additions string');
    expect(JSON.parse(additions)).toEqual({
      silence_duration: 500,
      enable_language_detector: true,
      explicit_language: 'en',
      disable_markdown_filter: true,
      disable_emoji_filter: false,
      context_texts: ['calmly'],
      post_process: { pitch: -3 },
    });
  });

  it('sends no additions, and no subtitle flag, when none are asked; a pitch of 0 is no change', () => {
    const body = speechBody({ ...request, pitch: 0, enableSubtitle: false });
    expect(body.req_params).not.toHaveProperty('additions');
    expect(body.req_params.audio_params).toEqual({ format: 'ogg_opus', sample_rate: 48_000 });
  });
});

describe('a generation with reference as the Seed Audio body', () => {
  it('names each reference field as the protocol does and keeps an unknown one as written', () => {
    expect(
      seedAudioBody(
        {
          textPrompt: '@Audio1 and @Audio2 talk.',
          references: [
            { speaker: 'zh_female_vv_uranus_bigtts' },
            { audioUrl: 'https://example.com/a.mp3' },
            { audioData: 'UklGRg==' },
            { custom_field: 'kept' },
          ],
          format: 'wav',
          sampleRate: 16_000,
          speechRate: 10,
          loudnessRate: 5,
          pitchRate: -2,
          enableSubtitle: true,
        },
        'seed-audio-1.0',
      ),
    ).toEqual({
      model: 'seed-audio-1.0',
      text_prompt: '@Audio1 and @Audio2 talk.',
      references: [
        { speaker: 'zh_female_vv_uranus_bigtts' },
        { audio_url: 'https://example.com/a.mp3' },
        { audio_data: 'UklGRg==' },
        { custom_field: 'kept' },
      ],
      audio_config: {
        format: 'wav',
        sample_rate: 16_000,
        speech_rate: 10,
        loudness_rate: 5,
        pitch_rate: -2,
        enable_subtitle: true,
      },
    });
  });

  it('sends no references when there are none, and only the format when nothing else is asked', () => {
    expect(seedAudioBody({ textPrompt: 'Rain.', references: [], format: 'mp3', enableSubtitle: false }, 'm')).toEqual({
      model: 'm',
      text_prompt: 'Rain.',
      audio_config: { format: 'mp3' },
    });
  });
});

describe('an image request as the Seedream body', () => {
  it('asks several images as a sequential group, the reference images as URLs or data URLs', () => {
    expect(
      seedreamBody({
        upstreamModel: 'seedream-4-0',
        prompt: 'a red kite',
        images: [
          { kind: 'url', url: 'https://example.com/kite.png' },
          { kind: 'inline', mediaType: 'image/jpeg', data: '/9j/4AAQ' },
        ],
        numberOfImages: 3,
        size: '2048x2048',
        outputFormat: 'jpeg',
        guidanceScale: 5.5,
        watermark: false,
        optimizePromptMode: 'fast',
      }),
    ).toEqual({
      model: 'seedream-4-0',
      prompt: 'a red kite',
      response_format: 'url',
      image: ['https://example.com/kite.png', 'data:image/jpeg;base64,/9j/4AAQ'],
      size: '2048x2048',
      sequential_image_generation: 'auto',
      sequential_image_generation_options: { max_images: 3 },
      output_format: 'jpeg',
      guidance_scale: 5.5,
      watermark: false,
      optimize_prompt_options: { mode: 'fast' },
    });
  });

  it('sends one image as a string, disables the group for one output, and leaves out a format it has not', () => {
    expect(
      seedreamBody({
        upstreamModel: 'm',
        prompt: 'p',
        images: [{ kind: 'url', url: 'https://example.com/one.png' }],
        numberOfImages: 1,
        outputFormat: 'webp',
      }),
    ).toEqual({
      model: 'm',
      prompt: 'p',
      response_format: 'url',
      image: 'https://example.com/one.png',
      sequential_image_generation: 'disabled',
    });
  });

  it('asks a layer decomposition by flag with its resolution, with no size or group, and an empty prompt when none', () => {
    expect(
      seedreamBody({
        upstreamModel: 'm',
        images: [{ kind: 'url', url: 'https://example.com/poster.png' }],
        numberOfImages: 1,
        size: '1024x1024',
        layers: { resolution: '2K' },
      }),
    ).toEqual({
      model: 'm',
      prompt: '',
      response_format: 'url',
      image: 'https://example.com/poster.png',
      layer_decomposition: true,
      resolution: '2K',
    });
  });
});

describe("OpenAI's image usage read back", () => {
  it('takes the token counts and the image tokens of the input, and nothing the answer leaves out', () => {
    expect(
      imageUsageOf({
        input_tokens: 50,
        output_tokens: 4160,
        total_tokens: 4210,
        input_tokens_details: { image_tokens: 40, text_tokens: 10 },
      }),
    ).toEqual({ inputTokens: 50, outputTokens: 4160, totalTokens: 4210, inputImageTokens: 40 });
    expect(imageUsageOf({ output_tokens: 272 })).toEqual({ outputTokens: 272 });
    expect(imageUsageOf(undefined)).toEqual({});
  });
});
