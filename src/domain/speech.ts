/** Canonical text-to-speech: what a speech adapter is asked, and what it answers. */

export const speechFormats = ['mp3', 'ogg_opus', 'pcm'] as const;
export type SpeechFormat = (typeof speechFormats)[number];

export const speechSampleRates = [8000, 16000, 22050, 24000, 32000, 44100, 48000] as const;

export const explicitLanguages = ['zh', 'zh-cn', 'en', 'ja', 'es', 'es-mx', 'id', 'pt-br', 'ko', 'it', 'de', 'fr'] as const;

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
}

export interface SpeechSynthesisResult {
  /** The whole audio file, base64. */
  audio: string;
  mediaType: string;
  /** Characters the provider says it billed, where it says. */
  billedCharacters?: number;
}

/** The media type of each format. */
export const speechMediaTypes: Record<SpeechFormat, string> = { mp3: 'audio/mpeg', ogg_opus: 'audio/ogg', pcm: 'audio/L16' };
