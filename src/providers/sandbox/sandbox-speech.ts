import type { SpeechSynthesisRequest, SpeechSynthesisResult } from '../../domain/speech.ts';
import { speechMediaTypes } from '../../domain/speech.ts';
import { UpstreamHttpError } from '../../domain/upstream-failure.ts';

/** Spoken length the sandbox gives each character: about a normal speaking pace. */
const msPerCharacter = 60;

/**
 * One silent MPEG-1 Layer III frame (128 kbit/s, 44.1 kHz, mono): the header, then zeros, which decode as
 * silence. 1,152 samples, about 26 ms.
 */
const silentFrame = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0xc0]), Buffer.alloc(413)]);
const frameMs = (1152 / 44_100) * 1000;

/**
 * Deterministic speech made in process: silence as long as the text takes to say (60 ms a character, and
 * the asked silence after it), as MP3 or raw 16-bit PCM at the asked rate. Billed per character of the text.
 */
export function sandboxSpeech(request: SpeechSynthesisRequest): Promise<SpeechSynthesisResult> {
  const ms = [...request.text].length * msPerCharacter + (request.silenceDuration ?? 0);
  let audio: Buffer;
  if (request.format === 'mp3') audio = Buffer.concat(Array.from({ length: Math.max(1, Math.ceil(ms / frameMs)) }, () => silentFrame));
  else if (request.format === 'pcm') audio = Buffer.alloc(2 * Math.ceil((request.sampleRate * ms) / 1000));
  else {
    const body = JSON.stringify({ code: 40000001, message: `The sandbox does not make ${request.format} audio; ask for mp3 or pcm` });
    return Promise.reject(new UpstreamHttpError(400, body, 'application/json'));
  }
  return Promise.resolve({ audio: audio.toString('base64'), mediaType: speechMediaTypes[request.format], billedCharacters: [...request.text].length });
}
