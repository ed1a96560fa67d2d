import { Type, type Static } from 'typebox';
import { wireCheck } from '../wire-check.ts';

/**
 * Seed Audio (BytePlus speech), `POST /api/v3/tts/create`: one synchronous call that makes a clip from a text
 * prompt and up to three references (voices, audio clips or an image), answered as one JSON object with the
 * audio in base64 and a temporary URL to it. Authenticated by `X-Api-Key`; errors carry the speech protocol's
 * numeric `code` and `message`, inside a 200 answer or with an error status (see the wire notes of
 * `src/protocols/speech/`).
 */
export const seedAudioPath = '/api/v3/tts/create';

export const SeedAudioReference = Type.Record(Type.String(), Type.String());

export const SeedAudioRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  text_prompt: Type.String({ minLength: 1 }),
  references: Type.Optional(Type.Array(SeedAudioReference, { maxItems: 3 })),
  audio_config: Type.Object({
    format: Type.Union([Type.Literal('mp3'), Type.Literal('wav'), Type.Literal('ogg_opus'), Type.Literal('pcm')]),
    sample_rate: Type.Optional(Type.Integer()),
    speech_rate: Type.Optional(Type.Integer({ minimum: -50, maximum: 100 })),
    loudness_rate: Type.Optional(Type.Integer({ minimum: -50, maximum: 100 })),
    pitch_rate: Type.Optional(Type.Integer({ minimum: -12, maximum: 12 })),
    enable_subtitle: Type.Optional(Type.Boolean()),
  }),
});
export type SeedAudioRequest = Static<typeof SeedAudioRequest>;
export const isSeedAudioRequest = wireCheck(SeedAudioRequest);

/** Times of the subtitle are milliseconds from the start of the audio. */
const Milliseconds = Type.Number({ minimum: 0 });

export const SeedAudioSubtitle = Type.Object({
  text: Type.String(),
  sentences: Type.Array(
    Type.Object({
      text: Type.String(),
      start_time: Milliseconds,
      end_time: Milliseconds,
      words: Type.Optional(
        Type.Array(Type.Object({ text: Type.String(), start_time: Milliseconds, end_time: Milliseconds })),
      ),
    }),
  ),
});
export type SeedAudioSubtitle = Static<typeof SeedAudioSubtitle>;

/**
 * The answer: `code` 0 (or the speech protocol's 20000000) with the clip; any other code is an error with its
 * `message`. `duration` is the playable length and `original_duration` the length the model made (the billed
 * one), both in seconds; `url` is valid about two hours.
 */
export const SeedAudioAnswer = Type.Object({
  code: Type.Integer(),
  message: Type.Optional(Type.String()),
  audio: Type.Optional(Type.String()),
  duration: Type.Optional(Type.Number({ minimum: 0 })),
  original_duration: Type.Optional(Type.Number({ minimum: 0 })),
  url: Type.Optional(Type.String()),
  subtitle: Type.Optional(SeedAudioSubtitle),
});
export type SeedAudioAnswer = Static<typeof SeedAudioAnswer>;
export const isSeedAudioAnswer = wireCheck(SeedAudioAnswer);

/** The codes of an answer that succeeded. */
export const seedAudioSucceededCodes: readonly number[] = [0, 20_000_000];
