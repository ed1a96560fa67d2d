import { randomUUID } from 'node:crypto';
import { audioMediaTypes, type SpeechSynthesisRequest, type SpeechSynthesisResult } from '../../domain/speech.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import {
  isSpeechFrame,
  speechFinishedCode,
  type SpeechAdditions,
  type SpeechRequest,
  type SpeechSentence,
} from '../../protocols/speech/tts.ts';
import { subtitleOf, type SubtitleSentence } from '../../domain/speech.ts';
import type { CallOptions } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { bodyBytes, unreachable } from '../shared/upstream-http.ts';
import { checkedEvent } from '../shared/wire-data.ts';

/** Longest line of the answer: one chunk of base64 audio. */
const maxFrameCharacters = 8 * 1024 * 1024;
/** The audio one answer may assemble when the call names no limit: the size of the largest JSON answer read whole. */
const defaultMaxAudioBytes = 128 * 1024 * 1024;

export function speechBody(request: SpeechSynthesisRequest): SpeechRequest {
  const additions: SpeechAdditions = {};
  if (request.silenceDuration !== undefined) additions.silence_duration = request.silenceDuration;
  if (request.enableLanguageDetector !== undefined) additions.enable_language_detector = request.enableLanguageDetector;
  if (request.explicitLanguage !== undefined) additions.explicit_language = request.explicitLanguage;
  if (request.disableMarkdownFilter !== undefined) additions.disable_markdown_filter = request.disableMarkdownFilter;
  if (request.disableEmojiFilter !== undefined) additions.disable_emoji_filter = request.disableEmojiFilter;
  if (request.contextTexts !== undefined) additions.context_texts = request.contextTexts;
  if (request.pitch !== undefined && request.pitch !== 0) additions.post_process = { pitch: request.pitch };
  return {
    user: { uid: 'gateway' },
    req_params: {
      text: request.text,
      speaker: request.voiceType,
      audio_params: {
        format: request.format,
        sample_rate: request.sampleRate,
        ...(request.speechRate !== undefined ? { speech_rate: request.speechRate } : {}),
        ...(request.loudnessRate !== undefined ? { loudness_rate: request.loudnessRate } : {}),
        ...(request.enableSubtitle ? { enable_subtitle: true } : {}),
      },
      ...(Object.keys(additions).length > 0 ? { additions: JSON.stringify(additions) } : {}),
    },
  };
}

/**
 * V3 HTTP text-to-speech: the answer is one JSON object per line, audio chunks (`code` 0, base64 `data`)
 * assembled into one file, ended by `code` 20000000 (with the billed characters, asked for by header). Any
 * other code is the provider's error, relayed with its body; an answer that ends without the final frame is
 * a protocol failure.
 */
export async function speechTts(
  http: UpstreamHttp,
  request: SpeechSynthesisRequest,
  options: CallOptions,
): Promise<SpeechSynthesisResult> {
  const response = await http.postJson(options.target, {
    path: '/api/v3/tts/unidirectional',
    headers: {
      'x-api-key': options.target.apiKey,
      'x-api-resource-id': request.resourceId,
      'x-api-request-id': randomUUID(),
      'x-control-require-usage-tokens-return': 'text_words',
    },
    body: speechBody(request),
    signal: options.signal,
  });
  const chunks: Buffer[] = [];
  const sentences: SubtitleSentence[] = [];
  let billed: number | undefined;
  let finished = false;
  let pending = '';
  // An answer that never ends (or ends too late) is cut once its audio passes what any output may be, rather than
  // held in memory until the job's deadline; its lines besides the audio are bounded the same way.
  const maxAudioBytes = options.maxOutputBytes ?? defaultMaxAudioBytes;
  let audioBytes = 0;
  let answerCharacters = 0;
  const decoder = new TextDecoder();
  const tooLarge = () =>
    new UpstreamUnreachableError('protocol', `the upstream sent more audio than the limit of ${maxAudioBytes} bytes`);
  const take = (line: string) => {
    if (line.trim() === '') return;
    const frame = checkedEvent(line, isSpeechFrame);
    if (frame.code === 0) {
      if (frame.data) {
        const audio = Buffer.from(frame.data, 'base64');
        audioBytes += audio.length;
        if (audioBytes > maxAudioBytes) throw tooLarge();
        chunks.push(audio);
      }
      if (frame.sentence && request.enableSubtitle) sentences.push(timedSentence(frame.sentence));
    } else if (frame.code === speechFinishedCode) {
      finished = true;
      billed = frame.usage?.text_words;
    } else {
      // An error inside a 200 answer: codes 4xxxxxxx are the request's (a voice not granted, text too long), others the provider's.
      const status = frame.code >= 40_000_000 && frame.code < 50_000_000 ? 400 : 502;
      throw new UpstreamHttpError(status, JSON.stringify({ code: frame.code, message: frame.message ?? '' }), {
        contentType: 'application/json',
      });
    }
  };
  try {
    for await (const chunk of response.body) {
      const text = decoder.decode(bodyBytes(chunk), { stream: true });
      answerCharacters += text.length;
      // Base64 is 4/3 of the audio; twice the limit leaves room for every frame's JSON and the subtitle.
      if (answerCharacters > 2 * maxAudioBytes + maxFrameCharacters) throw tooLarge();
      pending += text;
      if (pending.length > maxFrameCharacters)
        throw new UpstreamUnreachableError(
          'protocol',
          'the upstream sent a line of audio larger than the gateway reads',
        );
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) take(line);
    }
    take(pending);
  } catch (error) {
    if (error instanceof UpstreamHttpError || error instanceof UpstreamUnreachableError) throw error;
    throw unreachable(error);
  } finally {
    if (!response.body.destroyed) response.body.destroy();
  }
  if (!finished)
    throw new UpstreamUnreachableError('protocol', 'the upstream speech answer ended before its final frame');
  const result: SpeechSynthesisResult = {
    audio: Buffer.concat(chunks).toString('base64'),
    mediaType: audioMediaTypes[request.format],
  };
  if (billed !== undefined) result.billedCharacters = billed;
  if (request.enableSubtitle) result.subtitle = subtitleOf(sentences);
  return result;
}

const milliseconds = (seconds: number) => Math.round(seconds * 1000);

/** A sentence frame (times in seconds) as a subtitle sentence (milliseconds), spanning its first word to its last. */
function timedSentence(sentence: SpeechSentence): SubtitleSentence {
  const words = (sentence.words ?? []).map((word) => ({
    text: word.word,
    startTime: milliseconds(word.startTime),
    endTime: milliseconds(word.endTime),
  }));
  return { text: sentence.text, startTime: words[0]?.startTime ?? 0, endTime: words.at(-1)?.endTime ?? 0, words };
}
