/**
 * Examples of the gamma surface's bodies and answers, in the shapes Google's Gemini clients send and read, as
 * the OpenAPI document shows them (the OpenAPI lint checks each against its schema).
 */
import type { GenerateContentRequest, GenerateContentResponse } from '../../protocols/gemini/generate-content.ts';

export const modelListExample = {
  data: [
    {
      id: 'gemini/gemini-2.5-flash',
      name: 'Gemini 2.5 Flash',
      inputModalities: ['text', 'image'],
      outputModalities: ['text'],
    },
  ],
  models: [
    {
      name: 'models/gemini-2.5-flash',
      displayName: 'Gemini 2.5 Flash',
      version: '1',
      supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
    },
  ],
};

export const modelExample = {
  name: 'models/gemini-2.5-flash',
  version: '1',
  displayName: 'Gemini 2.5 Flash',
  outputTokenLimit: 65536,
  supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
};

export const generateContentRequestExample = {
  systemInstruction: { parts: [{ text: 'Answer in one sentence.' }] },
  contents: [{ role: 'user', parts: [{ text: 'Why is the sky blue?' }] }],
  generationConfig: { maxOutputTokens: 200 },
} satisfies GenerateContentRequest;

export const generateContentResponseExample = {
  candidates: [
    {
      content: {
        role: 'model',
        parts: [{ text: 'Sunlight scatters off air molecules, and blue light scatters the most.' }],
      },
      finishReason: 'STOP',
    },
  ],
  usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 14, totalTokenCount: 26 },
  modelVersion: 'gemini-2.5-flash',
} satisfies GenerateContentResponse;
