import type { Static } from '@fastify/type-provider-typebox';
import type {
  AudioJobSchema,
  CostEstimateSchema,
  ImageJobSchema,
  ModelSchema,
  QueuedJobSchema,
  TextChunkSchema,
  VideoTaskSchema,
  VoiceListSchema,
  WaitedImageSchema,
} from './answer-schemas.ts';
import type { TextCompletionBody } from './text-completion-codec.ts';

/**
 * Examples of the native API's bodies and answers, as the OpenAPI document shows them: typed by their schemas
 * where TypeBox types them (the OpenAPI lint checks every one against its schema).
 */

export const modelExample: Static<typeof ModelSchema> = {
  modelId: 'gpt-4o-mini',
  name: 'GPT-4o mini',
  providerIds: ['openai', 'openrouter'],
  inputModalities: ['text', 'image'],
  outputModalities: ['text'],
  isActive: true,
  revision: 3,
};

export const textCompletionExample: TextCompletionBody = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'Answer in one sentence.' },
    { role: 'user', content: 'Why is the sky blue?' },
  ],
  temperature: 0.2,
  maxTokens: 200,
};

const textChunks: Array<Static<typeof TextChunkSchema>> = [
  { delta: 'Sunlight scatters off air molecules, ' },
  { delta: 'and blue light scatters the most.', finishReason: 'stop' },
  { delta: '', usage: { promptTokens: 24, completionTokens: 13, totalTokens: 37 } },
];

/** The text stream as it goes over the wire: one `data:` line per chunk, then `[DONE]`. */
export const textStreamExample = `${textChunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')}data: [DONE]\n\n`;

export const costEstimateExample: Static<typeof CostEstimateSchema> = {
  data: { estimatedUserCost: 0.167, currency: 'USD' },
  success: true,
  status: 200,
};

export const imageRequestExample = {
  model: 'gpt-image-1',
  content: [{ type: 'text', text: 'A lighthouse at dawn, watercolour' }],
  size: '1024x1024',
  numberOfImages: 1,
  quality: 'medium',
};

const generationId = 'gen_9a1c3e5b7d2f4a6c8e0b1d3f5a7c9e2b';

export const queuedImageExample: Static<typeof QueuedJobSchema> = { generationId, status: 'queued' };

export const waitedImageExample: Static<typeof WaitedImageSchema> = {
  generationId,
  images: [
    {
      assetId: 'asset_4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c',
      downloadUrl: `https://gateway.example.com/api/v1/media/files/images/${generationId}/0.png?expires=1772456405&signature=3q2-7w`,
    },
  ],
  usage: { generatedImages: 1, usdCost: 0.042 },
};

export const imageJobExample: Static<typeof ImageJobSchema> = {
  generationId,
  status: 'succeeded',
  result: { images: waitedImageExample.images, usage: waitedImageExample.usage },
};

export const textToSpeechExample = {
  voiceType: 'zh_female_vv_uranus_bigtts',
  text: 'Hello, nice to meet you.',
  format: 'mp3',
  speechRate: 10,
};

export const referenceAudioExample = {
  model: 'seed-audio-1.0-multilingual',
  textPrompt: 'A calm narrator reads: the tide comes in at dusk.',
  format: 'mp3',
};

const audioGenerationId = 'gen_2c4e6a8b0d1f3a5c7e9b2d4f6a8c0e1d';

export const submittedAudioExample = { generationId: audioGenerationId };

export const audioJobExample: Static<typeof AudioJobSchema> = {
  generationId: audioGenerationId,
  product: 'text-to-speech',
  status: 'succeeded',
  audioUrl: `https://gateway.example.com/api/v1/media/files/audio/${audioGenerationId}/0.mp3?expires=1772456405&signature=9x-4Lk`,
  durationSeconds: 2.3,
};

export const voiceListExample: Static<typeof VoiceListSchema> = {
  voices: [
    {
      voiceType: 'zh_female_vv_uranus_bigtts',
      name: 'Vivi',
      gender: 'female',
      age: 'adult',
      categories: ['General', 'Conversational'],
      languages: [{ language: 'en-US', text: 'Hello, nice to meet you.' }],
      resourceId: 'seed-tts-2.0',
      capabilities: { contextTexts: true },
    },
  ],
  total: 1,
};

export const videoRequestExample = {
  model: 'seedance-1-0-lite',
  content: [{ type: 'text', text: 'A paper boat drifting down a rainy street' }],
  duration: 5,
  resolution: '720p',
  ratio: '16:9',
};

const videoGenerationId = 'gen_5e7a9c1b3d5f7a9c1e3b5d7f9a1c3e5b';

export const videoTaskExample: Static<typeof VideoTaskSchema> = {
  taskId: videoGenerationId,
  generationId: videoGenerationId,
  providerId: 'byteplus-ark',
  status: 'queued',
  model: 'seedance-1-0-lite',
  content: [{ type: 'text', text: 'A paper boat drifting down a rainy street' }],
  createdAt: '2026-03-02T12:00:00.000Z',
  updatedAt: '2026-03-02T12:00:00.000Z',
};
