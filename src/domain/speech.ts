/** Canonical speech: text-to-speech and generation with reference, what a speech adapter is asked and answers. */

import Type, { type Static } from 'typebox';

/** Audio files the speech products make; text-to-speech offers every one but `wav`. */
export const audioFormats = ['mp3', 'wav', 'ogg_opus', 'pcm'] as const;
export type AudioFormat = (typeof audioFormats)[number];

export const speechFormats = ['mp3', 'ogg_opus', 'pcm'] as const;
export type SpeechFormat = (typeof speechFormats)[number];

export const speechSampleRates = [8000, 16000, 22050, 24000, 32000, 44100, 48000] as const;

export const explicitLanguages = [
  'zh',
  'zh-cn',
  'en',
  'ja',
  'es',
  'es-mx',
  'id',
  'pt-br',
  'ko',
  'it',
  'de',
  'fr',
] as const;

/** Every field is already validated against the spec and the voice. */
export interface SpeechSynthesisRequest {
  /** The catalog model the voice belongs to, which is the provider's resource id (`seed-tts-1.0`, `seed-tts-2.0`). */
  resourceId: string;
  voiceType: string;
  text: string;
  format: SpeechFormat;
  sampleRate: number;
  speechRate?: number;
  loudnessRate?: number;
  pitch?: number;
  silenceDuration?: number;
  enableLanguageDetector?: boolean;
  explicitLanguage?: string;
  disableMarkdownFilter?: boolean;
  disableEmojiFilter?: boolean;
  contextTexts?: string[];
  enableSubtitle?: boolean;
}

export interface SpeechSynthesisResult {
  /** The whole audio file, base64. */
  audio: string;
  mediaType: string;
  /** Characters the provider says it billed, where it says. */
  billedCharacters?: number;
  /** When asked: the transcript timed in milliseconds from the start of the audio. */
  subtitle?: AudioSubtitle;
}

/** The spec's `subtitle`: the transcript, its sentences and their words, times in milliseconds from the audio's start. */
export interface AudioSubtitle {
  text: string;
  sentences: SubtitleSentence[];
}

export interface SubtitleSentence {
  text: string;
  startTime: number;
  endTime: number;
  words: SubtitleWord[];
}

export interface SubtitleWord {
  text: string;
  startTime: number;
  endTime: number;
}

/** The transcript of timed sentences: joined as written, with a space where two sentences of words would touch. */
export function subtitleOf(sentences: SubtitleSentence[]): AudioSubtitle {
  let text = '';
  for (const sentence of sentences) {
    const touching =
      /[\p{L}\p{N}.,!?;:]$/u.test(text) &&
      /^[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}\p{N}]/u.test(sentence.text);
    text += touching ? ` ${sentence.text}` : sentence.text;
  }
  return { text, sentences };
}

export const referenceSampleRates = [8000, 16000, 24000, 32000, 44100, 48000] as const;

/**
 * One reference of a generation with reference, as the client wrote it (`speaker`, `audioUrl`, `audioData`,
 * `imageUrl` or `imageData`): its shape is the provider's to judge (spec, Native: audio).
 */
export type AudioReference = Readonly<Record<string, string>>;

/** The reference fields that make an image reference (which cannot be mixed with audio ones). */
export const imageReferenceFields = ['imageUrl', 'imageData'] as const;

/** Generation with reference: every field already validated against the spec. */
export interface ReferenceAudioRequest {
  textPrompt: string;
  references?: AudioReference[];
  format: AudioFormat;
  sampleRate?: number;
  speechRate?: number;
  loudnessRate?: number;
  pitchRate?: number;
  enableSubtitle?: boolean;
}

export interface ReferenceAudioResult {
  /** The audio, as bytes or as the provider's (temporary) URL. */
  audio: { kind: 'inline'; data: string } | { kind: 'url'; url: string };
  mediaType: string;
  /** Playable seconds of the file, as the provider reports them. */
  durationSeconds?: number;
  /** Seconds the model made, which the provider bills (and so does the gateway). */
  originalDurationSeconds?: number;
  /** The provider's temporary link to the audio (about 2 hours). */
  providerUrl?: string;
  subtitle?: AudioSubtitle;
}

/** The media type of each format. */
export const audioMediaTypes: Record<AudioFormat, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg_opus: 'audio/ogg',
  pcm: 'audio/L16',
};

/** A text-to-speech job's request as stored. */
export const StoredTextToSpeechRequestSchema = Type.Object({
  product: Type.Literal('text-to-speech'),
  resourceId: Type.String(),
  voiceType: Type.String(),
  text: Type.String(),
  format: Type.Enum(speechFormats),
  sampleRate: Type.Number(),
  speechRate: Type.Optional(Type.Number()),
  loudnessRate: Type.Optional(Type.Number()),
  pitch: Type.Optional(Type.Number()),
  silenceDuration: Type.Optional(Type.Number()),
  enableLanguageDetector: Type.Optional(Type.Boolean()),
  explicitLanguage: Type.Optional(Type.String()),
  disableMarkdownFilter: Type.Optional(Type.Boolean()),
  disableEmojiFilter: Type.Optional(Type.Boolean()),
  contextTexts: Type.Optional(Type.Array(Type.String())),
  enableSubtitle: Type.Optional(Type.Boolean()),
});
export type StoredTextToSpeechRequest = Static<typeof StoredTextToSpeechRequestSchema>;

/** A generation with reference job's request as stored. */
export const StoredReferenceAudioRequestSchema = Type.Object({
  product: Type.Literal('generation-with-reference'),
  textPrompt: Type.String(),
  references: Type.Optional(Type.Array(Type.Record(Type.String(), Type.String()))),
  format: Type.Enum(audioFormats),
  sampleRate: Type.Optional(Type.Number()),
  speechRate: Type.Optional(Type.Number()),
  loudnessRate: Type.Optional(Type.Number()),
  pitchRate: Type.Optional(Type.Number()),
  enableSubtitle: Type.Optional(Type.Boolean()),
});
export type StoredReferenceAudioRequest = Static<typeof StoredReferenceAudioRequestSchema>;

/** An audio job's request as stored: which product, and that product's checked request. */
export type StoredSpeechRequest = StoredTextToSpeechRequest | StoredReferenceAudioRequest;
