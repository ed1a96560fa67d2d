import { Type, type Static } from '@fastify/type-provider-typebox';
import { ReferenceAudioParameters, TextToSpeechParameters } from '../../domain/speech-parameters.ts';
import type { ReferenceAudioInput, TextToSpeechInput } from '../../gateway/speech-generation.ts';
import { Identifier, NonBlankText } from '../../http/schemas.ts';

const literals = <T extends readonly (string | number)[]>(values: T) =>
  Type.Union(values.map((value) => Type.Literal(value)));

/** The text-to-speech body (spec, Native: audio); unknown fields are stripped. */
export const TextToSpeechBody = Type.Object(
  {
    voiceType: Type.String({ minLength: 1, maxLength: 200 }),
    text: NonBlankText({ minLength: 1, maxLength: 1000 }),
    ...TextToSpeechParameters.properties,
    contextTexts: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { maxItems: 1 })),
  },
  { additionalProperties: false },
);
export type TextToSpeechBody = Static<typeof TextToSpeechBody>;

export function decodeTextToSpeech(body: TextToSpeechBody): TextToSpeechInput {
  return { ...body };
}

/**
 * The generation-with-reference body (spec, Native: audio); unknown fields are stripped. Each reference is
 * an object of text fields whose shape the provider judges; at most three.
 */
export const ReferenceAudioBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200 }),
    textPrompt: NonBlankText({ minLength: 1, maxLength: 3000 }),
    references: Type.Optional(
      Type.Array(Type.Record(Type.String({ maxLength: 100 }), Type.String(), { maxProperties: 8 }), { maxItems: 3 }),
    ),
    ...ReferenceAudioParameters.properties,
  },
  { additionalProperties: false },
);
export type ReferenceAudioBody = Static<typeof ReferenceAudioBody>;

export function decodeReferenceAudio(body: ReferenceAudioBody): ReferenceAudioInput {
  const { model, ...fields } = body;
  return { modelId: model, ...fields };
}

export const VoicesQuery = Type.Object(
  {
    gender: Type.Optional(literals(['male', 'female'] as const)),
    age: Type.Optional(literals(['child', 'teenager', 'adult', 'middle-age'] as const)),
    category: Type.Optional(
      literals([
        'General',
        'Dubbing',
        'Advertisement',
        'AudioBook',
        'Conversational',
        'Entertainment',
        'SocialMedia',
      ] as const),
    ),
    language: Type.Optional(
      Type.String({ minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$' }),
    ),
    resourceId: Type.Optional(literals(['seed-tts-1.0', 'seed-tts-2.0'] as const)),
  },
  { additionalProperties: false },
);

/** A generation id as the gateway issues them: anything else answers 404 before any lookup. */
export const AudioGenerationParams = Type.Object({ generationId: Identifier });
