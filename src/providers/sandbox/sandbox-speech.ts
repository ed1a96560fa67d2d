import { UpstreamHttpError } from '../../domain/upstream-failure.ts';
import {
  audioMediaTypes,
  subtitleOf,
  type AudioSubtitle,
  type ReferenceAudioRequest,
  type ReferenceAudioResult,
  type SpeechSynthesisRequest,
  type SpeechSynthesisResult,
  type SubtitleSentence,
} from '../../domain/speech.ts';
import { silentAudio } from './audio-files.ts';

/** Spoken length the sandbox gives each character: about a normal speaking pace. */
const msPerCharacter = 60;
/** Silence the sandbox's reference model makes after the prompt and trims from the file: its billed length is that much longer. */
const trimmedTailMs = 240;
const referenceFields = ['speaker', 'audioUrl', 'audioData', 'imageUrl', 'imageData'];

/** Sentences end at these marks (Latin and CJK); every character of the text falls in one. */
const sentencePattern = /[^.!?。！？]*[.!?。！？]+\s*|[^.!?。！？]+/gu;
const cjk = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}';
/** A word: one CJK character, or a run of letters, digits and apostrophes of another script (punctuation is not said). */
const wordPattern = new RegExp(`[${cjk}]|(?:(?![${cjk}])[\\p{L}\\p{N}\\p{M}'’])+`, 'gu');

/** The sandbox's timing of `text`: every character `characterMs` long, words and sentences spanning theirs. */
export function sandboxSubtitle(text: string, characterMs = msPerCharacter): AudioSubtitle {
  const sentences: SubtitleSentence[] = [];
  let offset = 0;
  for (const match of text.matchAll(sentencePattern)) {
    const sentenceStart = offset;
    // Characters before each word, counted as the words go by (code points: a CJK character or an emoji is one).
    let before = 0;
    let counted = 0;
    const words = [...match[0].matchAll(wordPattern)].map((word) => {
      before += [...match[0].slice(counted, word.index)].length;
      const length = [...word[0]].length;
      const timed = {
        text: word[0],
        startTime: Math.round((sentenceStart + before) * characterMs),
        endTime: Math.round((sentenceStart + before + length) * characterMs),
      };
      before += length;
      counted = word.index + word[0].length;
      return timed;
    });
    offset += [...match[0]].length;
    if (words.length > 0)
      sentences.push({ text: match[0].trim(), startTime: words[0]!.startTime, endTime: words.at(-1)!.endTime, words });
  }
  return subtitleOf(sentences);
}

/**
 * Deterministic speech made in process: silence as long as the text takes to say (60 ms a character, and
 * the asked silence after it), in the asked format and rate, with its timing when subtitles are asked for.
 * Billed per character of the text.
 */
export function sandboxSpeech(request: SpeechSynthesisRequest): Promise<SpeechSynthesisResult> {
  const ms = [...request.text].length * msPerCharacter + (request.silenceDuration ?? 0);
  const audio = silentAudio(request.format, ms, request.sampleRate);
  const result: SpeechSynthesisResult = {
    audio: audio.toString('base64'),
    mediaType: audioMediaTypes[request.format],
    billedCharacters: [...request.text].length,
  };
  if (request.enableSubtitle) result.subtitle = sandboxSubtitle(request.text);
  return Promise.resolve(result);
}

function refuse(message: string): Promise<never> {
  return Promise.reject(
    new UpstreamHttpError(400, JSON.stringify({ code: 45000001, message }), { contentType: 'application/json' }),
  );
}

/**
 * The sandbox's generation with reference: the prompt (its `@AudioN` tags unsaid) spoken as silence at the
 * asked speech rate, in the asked format. Like the provider it judges each reference: exactly one of the
 * five fields. It reports the playable length of the file and, as the billed one, that length plus the
 * tail it trimmed.
 */
export function sandboxReferenceAudio(
  request: ReferenceAudioRequest,
  upstreamModel: string,
): Promise<ReferenceAudioResult> {
  if (upstreamModel !== 'audio-reference') return refuse(`The sandbox has no reference audio model "${upstreamModel}"`);
  for (const [index, reference] of (request.references ?? []).entries()) {
    const fields = Object.keys(reference);
    if (fields.length !== 1 || !referenceFields.includes(fields[0]!) || reference[fields[0]!] === '') {
      return refuse(`references[${index}] must set exactly one of ${referenceFields.join(', ')}`);
    }
  }
  const spoken = request.textPrompt
    .replace(/@Audio[123]/g, '')
    .replace(/\s+(?=[.,!?;:。！？，])/gu, '')
    .replace(/\s{2,}/g, ' ')
    .trim();
  const characterMs = msPerCharacter / (1 + (request.speechRate ?? 0) / 100);
  const ms = Math.max(msPerCharacter, Math.round([...spoken].length * characterMs));
  const audio = silentAudio(request.format, ms, request.sampleRate ?? 24_000);
  const result: ReferenceAudioResult = {
    audio: { kind: 'inline', data: audio.toString('base64') },
    mediaType: audioMediaTypes[request.format],
    durationSeconds: ms / 1000,
    originalDurationSeconds: (ms + trimmedTailMs) / 1000,
  };
  if (request.enableSubtitle) result.subtitle = sandboxSubtitle(spoken, characterMs);
  return Promise.resolve(result);
}
