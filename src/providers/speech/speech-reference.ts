import { randomUUID } from 'node:crypto';
import {
  audioMediaTypes,
  type AudioReference,
  type AudioSubtitle,
  type ReferenceAudioRequest,
  type ReferenceAudioResult,
} from '../../domain/speech.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import {
  isSeedAudioAnswer,
  seedAudioPath,
  seedAudioSucceededCodes,
  type SeedAudioRequest,
  type SeedAudioSubtitle,
} from '../../protocols/speech/seed-audio.ts';
import type { CallOptions } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { checked } from '../shared/wire-data.ts';

/** The client's reference fields and the protocol's names for them; any other field is forwarded as written. */
const referenceFields: Readonly<Record<string, string>> = {
  speaker: 'speaker',
  audioUrl: 'audio_url',
  audioData: 'audio_data',
  imageUrl: 'image_url',
  imageData: 'image_data',
};

function wireReference(reference: AudioReference): Record<string, string> {
  return Object.fromEntries(
    Object.entries(reference).map(([field, value]) => [referenceFields[field] ?? field, value]),
  );
}

export function seedAudioBody(request: ReferenceAudioRequest, upstreamModel: string): SeedAudioRequest {
  const body: SeedAudioRequest = {
    model: upstreamModel,
    text_prompt: request.textPrompt,
    audio_config: {
      format: request.format,
      ...(request.sampleRate !== undefined ? { sample_rate: request.sampleRate } : {}),
      ...(request.speechRate !== undefined ? { speech_rate: request.speechRate } : {}),
      ...(request.loudnessRate !== undefined ? { loudness_rate: request.loudnessRate } : {}),
      ...(request.pitchRate !== undefined ? { pitch_rate: request.pitchRate } : {}),
      ...(request.enableSubtitle ? { enable_subtitle: true } : {}),
    },
  };
  if (request.references && request.references.length > 0) body.references = request.references.map(wireReference);
  return body;
}

function subtitleOf(subtitle: SeedAudioSubtitle): AudioSubtitle {
  return {
    text: subtitle.text,
    sentences: subtitle.sentences.map((sentence) => ({
      text: sentence.text,
      startTime: sentence.start_time,
      endTime: sentence.end_time,
      words: (sentence.words ?? []).map((word) => ({
        text: word.text,
        startTime: word.start_time,
        endTime: word.end_time,
      })),
    })),
  };
}

/**
 * Seed Audio's generation with reference: one synchronous call. An error code inside a 200 answer is the
 * provider's error (4xxxxxxx codes are the request's: a reference it cannot use, say), relayed with its body;
 * an answer with neither audio nor a URL to it breaks the protocol.
 */
export async function seedAudio(
  http: UpstreamHttp,
  { request, upstreamModel }: { request: ReferenceAudioRequest; upstreamModel: string },
  options: CallOptions,
): Promise<ReferenceAudioResult> {
  const headers = { 'x-api-key': options.target.apiKey, 'x-api-request-id': randomUUID() };
  const answer = checked(
    await http.postForJson(options.target, {
      path: seedAudioPath,
      headers,
      body: seedAudioBody(request, upstreamModel),
      signal: options.signal,
    }),
    isSeedAudioAnswer,
    'a generation answer',
  );
  if (!seedAudioSucceededCodes.includes(answer.code)) {
    const status = answer.code >= 40_000_000 && answer.code < 50_000_000 ? 400 : 502;
    throw new UpstreamHttpError(status, JSON.stringify({ code: answer.code, message: answer.message ?? '' }), {
      contentType: 'application/json',
    });
  }
  let audio: ReferenceAudioResult['audio'];
  if (answer.audio) audio = { kind: 'inline', data: answer.audio };
  else if (answer.url) audio = { kind: 'url', url: answer.url };
  else throw new UpstreamUnreachableError('protocol', 'the upstream reported success without any audio');
  const result: ReferenceAudioResult = { audio, mediaType: audioMediaTypes[request.format] };
  if (answer.duration !== undefined) result.durationSeconds = answer.duration;
  if (answer.original_duration !== undefined) result.originalDurationSeconds = answer.original_duration;
  if (answer.url) result.providerUrl = answer.url;
  if (answer.subtitle && request.enableSubtitle) result.subtitle = subtitleOf(answer.subtitle);
  return result;
}
