import { Type, type Static } from 'typebox';
import { wireCheck } from '../wire-check.ts';

/**
 * ByteDance speech V3 HTTP text-to-speech, `POST /api/v3/tts/unidirectional` (the chunked variant): the voice
 * and the resource (`X-Api-Resource-Id`, `seed-tts-1.0` or `seed-tts-2.0`) in headers and body, the answer a
 * stream of JSON objects, one per line (see the wire notes of `src/protocols/speech/`).
 */
export const SpeechRequest = Type.Object({
  user: Type.Object({ uid: Type.String() }),
  req_params: Type.Object({
    text: Type.String({ minLength: 1 }),
    speaker: Type.String({ minLength: 1 }),
    audio_params: Type.Object({
      format: Type.Union([Type.Literal('mp3'), Type.Literal('ogg_opus'), Type.Literal('pcm')]),
      sample_rate: Type.Integer(),
      speech_rate: Type.Optional(Type.Integer({ minimum: -50, maximum: 100 })),
      loudness_rate: Type.Optional(Type.Integer({ minimum: -50, maximum: 100 })),
      /** Sentence frames with word timings in the answer. */
      enable_subtitle: Type.Optional(Type.Boolean()),
    }),
    /** A JSON-encoded string of further options (silence, language, filters, context texts, pitch). */
    additions: Type.Optional(Type.String()),
  }),
});
export type SpeechRequest = Static<typeof SpeechRequest>;
export const isSpeechRequest = wireCheck(SpeechRequest);

/** The `additions` object, before it is written as a string. */
export interface SpeechAdditions {
  silence_duration?: number;
  enable_language_detector?: boolean;
  explicit_language?: string;
  disable_markdown_filter?: boolean;
  disable_emoji_filter?: boolean;
  context_texts?: string[];
  post_process?: { pitch: number };
}

/** Times of a sentence frame are in seconds from the start of the audio. */
const Seconds = Type.Number({ minimum: 0 });

/** A sentence of the text with the timing of each of its words, when subtitles were asked for. */
export const SpeechSentence = Type.Object({
  text: Type.String(),
  words: Type.Optional(
    Type.Array(
      Type.Object({
        word: Type.String(),
        startTime: Seconds,
        endTime: Seconds,
        confidence: Type.Optional(Type.Number()),
      }),
    ),
  ),
});
export type SpeechSentence = Static<typeof SpeechSentence>;

/**
 * One line of the answer: audio (`code` 0 with base64 `data`), a timed sentence (`code` 0 with `sentence`), the
 * end (`code` 20000000, with usage when asked), or an error (any other code).
 */
export const SpeechFrame = Type.Object({
  code: Type.Integer(),
  message: Type.Optional(Type.String()),
  data: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  sentence: Type.Optional(SpeechSentence),
  usage: Type.Optional(Type.Object({ text_words: Type.Optional(Type.Number({ minimum: 0 })) })),
});
export type SpeechFrame = Static<typeof SpeechFrame>;
export const isSpeechFrame = wireCheck(SpeechFrame);

/** The code of the frame that ends a synthesis that succeeded. */
export const speechFinishedCode = 20_000_000;

/** An error answered with a non-200 status: the same `code` and `message`. */
export const SpeechError = Type.Object({ code: Type.Integer(), message: Type.String() });
export type SpeechError = Static<typeof SpeechError>;
