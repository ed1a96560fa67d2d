/**
 * The tuning parameters of each speech product, described once: the native audio routes check requests with
 * these schemas, and the catalog shows them as the spec's parameter constraints.
 */

import Type, { type TObject, type TSchema } from 'typebox';
import type { ParamConstraint, ParamConstraints } from './capabilities.ts';
import { audioFormats, explicitLanguages, referenceSampleRates, speechFormats, speechSampleRates } from './speech.ts';

const literals = <T extends readonly (string | number)[]>(values: T) =>
  Type.Union(values.map((value) => Type.Literal(value)));
const rate = () => Type.Optional(Type.Integer({ minimum: -50, maximum: 100 }));

/** Text-to-speech (spec, Native: audio), beside its voice and text. */
export const TextToSpeechParameters = Type.Object({
  format: Type.Optional(literals(speechFormats)),
  sampleRate: Type.Optional(literals(speechSampleRates)),
  speechRate: rate(),
  loudnessRate: rate(),
  pitch: Type.Optional(Type.Integer({ minimum: -12, maximum: 12 })),
  silenceDuration: Type.Optional(Type.Integer({ minimum: 0, maximum: 30_000 })),
  enableLanguageDetector: Type.Optional(Type.Boolean()),
  explicitLanguage: Type.Optional(literals(explicitLanguages)),
  disableMarkdownFilter: Type.Optional(Type.Boolean()),
  disableEmojiFilter: Type.Optional(Type.Boolean()),
  /** Not in the spec's table for this product: the same `subtitle` as generation with reference. */
  enableSubtitle: Type.Optional(Type.Boolean()),
});

/** Generation with reference (spec, Native: audio), beside its model, prompt and references. */
export const ReferenceAudioParameters = Type.Object({
  format: Type.Optional(literals(audioFormats)),
  sampleRate: Type.Optional(literals(referenceSampleRates)),
  speechRate: rate(),
  loudnessRate: rate(),
  pitchRate: Type.Optional(Type.Integer({ minimum: -12, maximum: 12 })),
  enableSubtitle: Type.Optional(Type.Boolean()),
});

/** One parameter's schema as the spec's constraint: a list of literals, a whole-number range, or a flag. */
function constraintOf(schema: TSchema): ParamConstraint | undefined {
  if ('anyOf' in schema && Array.isArray(schema.anyOf)) {
    const values = schema.anyOf.flatMap((member: unknown) =>
      typeof member === 'object' && member !== null && 'const' in member
        ? typeof member.const === 'string' || typeof member.const === 'number'
          ? [member.const]
          : []
        : [],
    );
    return { type: 'enum', values };
  }
  if ('type' in schema && schema.type === 'boolean') return { type: 'bool' };
  if ('type' in schema && schema.type === 'integer' && 'minimum' in schema && 'maximum' in schema) {
    const { minimum, maximum } = schema;
    if (typeof minimum === 'number' && typeof maximum === 'number') return { type: 'int', min: minimum, max: maximum };
  }
  return undefined;
}

/** The parameters of an object schema as the spec's constraints (those that are not one of the three kinds are left out). */
export function parameterConstraints(parameters: TObject): ParamConstraints {
  const constraints: Record<string, ParamConstraint> = {};
  for (const [name, schema] of Object.entries(parameters.properties)) {
    const constraint = constraintOf(schema);
    if (constraint) constraints[name] = constraint;
  }
  return constraints;
}
