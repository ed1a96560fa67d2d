import { expect } from 'vitest';
import type { ChatRequest, DecodedChat } from '../../src/domain/chat.ts';

/** The surface and family pairs the gateway translates: every tool surface with each family of another protocol. */
export const translatedPairs = [
  ['alphaChat', 'anthropic'],
  ['alphaChat', 'gemini'],
  ['alphaResponses', 'anthropic'],
  ['alphaResponses', 'gemini'],
  ['beta', 'openai'],
  ['beta', 'gemini'],
  ['gamma', 'openai'],
  ['gamma', 'anthropic'],
] as const;

export type TranslatedSurface = (typeof translatedPairs)[number][0];
export type TranslatedFamily = (typeof translatedPairs)[number][1];

/** The canonical request of a decoded surface request, which must hold nothing the canonical model cannot carry. */
export function canonical(decoded: DecodedChat): ChatRequest {
  const { untranslatable, ...request } = decoded;
  expect(untranslatable).toEqual([]);
  return { upstreamModel: 'upstream-model', ...request };
}

/** The lookup tool of the function calling tests, as a gamma client declares it (the OpenAPI schema dialect). */
export const gammaLookupTools = [
  {
    functionDeclarations: [
      {
        name: 'lookup',
        description: 'Looks things up',
        parameters: { type: 'OBJECT', properties: { query: { type: 'STRING' } }, required: ['query'] },
      },
    ],
  },
];
