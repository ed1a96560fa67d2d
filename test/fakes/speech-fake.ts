import type { ServerResponse } from 'node:http';
import type { ReferenceAudioResult } from '../../src/domain/speech.ts';
import { sandboxReferenceAudio, sandboxSpeech, sandboxSubtitle } from '../../src/providers/sandbox/sandbox-speech.ts';
import {
  isSeedAudioRequest,
  seedAudioPath,
  type SeedAudioAnswer,
  type SeedAudioRequest,
} from '../../src/protocols/speech/seed-audio.ts';
import {
  isSpeechRequest,
  speechFinishedCode,
  type SpeechError,
  type SpeechFrame,
} from '../../src/protocols/speech/tts.ts';
import { FakeFiles } from './fake-images.ts';
import { sleep, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';
import { writeJson } from './wire.ts';

export const fakeSpeechKey = 'fake-speech-key';

function sendError(response: ServerResponse, status: number, { code, message }: SpeechError): void {
  writeJson<SpeechError>(response, { status, body: { code, message }, headers: { 'x-tt-logid': 'fake-speech-log' } });
}

/** Waits as `fake-slow-<ms>` says; false for `fake-hang` (never answered). */
async function delayFor(text: string): Promise<boolean> {
  if (text.includes('fake-hang')) return false;
  const delay = /fake-slow-(\d+)/.exec(text);
  if (delay) await sleep(Number(delay[1]));
  return true;
}

/**
 * V3 HTTP chunked text-to-speech (`POST /api/v3/tts/unidirectional`): the audio in three base64 chunks, one
 * JSON object per line, with `audio_params.enable_subtitle` a `sentence` frame (word times in seconds) after
 * the chunks, then `code` 20000000 with `usage.text_words` when the usage header asks for it. A 2.0 voice
 * (`*_uranus_bigtts`) needs the resource `seed-tts-2.0`, any other `seed-tts-1.0`, or the answer is the
 * provider's permission error inside the stream. Scenarios by text: `fake-error-<status>` (a JSON error with
 * that status), `fake-inband-error` (an error frame after audio), `fake-cut` (the answer ends without its
 * final frame), `fake-not-audio` (an error page in place of the audio, the answer otherwise whole),
 * `fake-endless` (audio chunks while the client reads them, 16 MiB at most, never a final frame),
 * `fake-slow-<ms>`, `fake-hang`.
 */
async function unidirectional(request: RecordedRequest, response: ServerResponse): Promise<void> {
  if (request.headers['x-api-key'] !== fakeSpeechKey)
    return sendError(response, 401, { code: 45000010, message: 'load grant: requested grant not found' });
  if (!isSpeechRequest(request.body))
    return sendError(response, 400, { code: 40000001, message: 'invalid request body' });
  const { text, speaker, audio_params: audio } = request.body.req_params;
  const failure = /fake-error-(\d{3})/.exec(text);
  if (failure)
    return sendError(response, Number(failure[1]), { code: 55000000, message: `The fake failed with ${failure[1]}` });
  if (!(await delayFor(text))) return;
  const resource = request.headers['x-api-resource-id'];
  const wanted = speaker.endsWith('_uranus_bigtts') ? 'seed-tts-2.0' : 'seed-tts-1.0';
  response.writeHead(200, { 'content-type': 'application/json', 'x-tt-logid': 'fake-speech-log' });
  const line = (frame: SpeechFrame) => response.write(`${JSON.stringify(frame)}\n`);
  if (resource !== wanted) {
    line({ code: 45000000, message: 'speaker permission denied: get resource id: access denied', data: null });
    return void response.end();
  }
  if (text.includes('fake-endless')) return endlessAudio(response);
  const spoken = await sandboxSpeech({
    resourceId: wanted,
    voiceType: speaker,
    text,
    format: audio.format,
    sampleRate: audio.sample_rate,
  });
  const bytes = text.includes('fake-not-audio')
    ? Buffer.from('<html><body>503 maintenance</body></html>')
    : Buffer.from(spoken.audio, 'base64');
  const third = Math.ceil(bytes.length / 3);
  for (let start = 0; start < bytes.length; start += third)
    line({ code: 0, message: '', data: bytes.subarray(start, start + third).toString('base64') });
  if (audio.enable_subtitle) {
    for (const sentence of sandboxSubtitle(text).sentences) {
      line({
        code: 0,
        message: '',
        data: null,
        sentence: {
          text: sentence.text,
          words: sentence.words.map((word) => ({
            word: word.text,
            startTime: word.startTime / 1000,
            endTime: word.endTime / 1000,
            confidence: 0.9,
          })),
        },
      });
    }
  }
  if (text.includes('fake-inband-error')) line({ code: 55000000, message: 'server error', data: null });
  else if (!text.includes('fake-cut')) {
    const usage = request.headers['x-control-require-usage-tokens-return']
      ? { usage: { text_words: [...text].length } }
      : {};
    line({ code: speechFinishedCode, message: 'ok', data: null, ...usage });
  }
  response.end();
}

/**
 * Audio frames of 64 KiB of silence, written as fast as the client reads them, until it closes the answer; past
 * 16 MiB (more than any limit a test sets, and a bound on what a test run holds) the answer stalls, unended.
 */
async function endlessAudio(response: ServerResponse): Promise<void> {
  const frame = `${JSON.stringify({ code: 0, message: '', data: Buffer.alloc(64 * 1024).toString('base64') })}\n`;
  let closed = false;
  response.once('close', () => (closed = true));
  for (let written = 0; !closed && written < 16 * 1024 * 1024; written += 64 * 1024) {
    if (!response.write(frame))
      await new Promise((resolve) => {
        response.once('drain', resolve);
        response.once('close', resolve);
      });
  }
}

const referenceFields: Record<string, string> = {
  speaker: 'speaker',
  audio_url: 'audioUrl',
  audio_data: 'audioData',
  image_url: 'imageUrl',
  image_data: 'imageData',
};

/**
 * Seed Audio's generation with reference (`POST /api/v3/tts/create`): one JSON answer with the clip in base64
 * and a temporary URL to it, `duration` (playable) and `original_duration` (billed) in seconds, and with
 * `enable_subtitle` a subtitle timed in milliseconds. A reference that is not exactly one of the five fields
 * is refused inside a 200 answer, as the provider does. Scenarios by prompt: `fake-error-<status>`,
 * `fake-inband-error` (code 45000001 in a 200 answer), `fake-url-only` (no base64, only the URL),
 * `fake-billed-<s>` (that many seconds billed), `fake-garbage`, `fake-slow-<ms>`, `fake-hang`.
 */
async function createAudio(request: RecordedRequest, response: ServerResponse, files: FakeFiles): Promise<void> {
  if (request.headers['x-api-key'] !== fakeSpeechKey)
    return sendError(response, 401, { code: 45000010, message: 'Invalid X-Api-Key' });
  if (!isSeedAudioRequest(request.body))
    return sendError(response, 400, { code: 45000001, message: 'invalid request body' });
  const body: SeedAudioRequest = request.body;
  const prompt = body.text_prompt;
  const failure = /fake-error-(\d{3})/.exec(prompt);
  if (failure)
    return sendError(response, Number(failure[1]), { code: 55000000, message: `The fake failed with ${failure[1]}` });
  if (!(await delayFor(prompt))) return;
  if (prompt.includes('fake-inband-error'))
    return writeJson<SeedAudioAnswer>(response, {
      status: 200,
      body: { code: 45000001, message: 'text_prompt is invalid' },
    });
  if (prompt.includes('fake-garbage'))
    return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"clip": "not one"}');
  const references = (body.references ?? []).map((reference) =>
    Object.fromEntries(Object.entries(reference).map(([field, value]) => [referenceFields[field] ?? field, value])),
  );
  let made: ReferenceAudioResult;
  try {
    made = await sandboxReferenceAudio(
      {
        textPrompt: prompt,
        references,
        format: body.audio_config.format,
        ...(body.audio_config.sample_rate !== undefined ? { sampleRate: body.audio_config.sample_rate } : {}),
        ...(body.audio_config.speech_rate !== undefined ? { speechRate: body.audio_config.speech_rate } : {}),
        ...(body.audio_config.enable_subtitle !== undefined
          ? { enableSubtitle: body.audio_config.enable_subtitle }
          : {}),
      },
      'audio-reference',
    );
  } catch {
    return writeJson<SeedAudioAnswer>(response, {
      status: 200,
      body: {
        code: 45000001,
        message: 'references: each reference must set exactly one source',
      },
    });
  }
  const bytes = Buffer.from(made.audio.kind === 'inline' ? made.audio.data : '', 'base64');
  const url = files.add(bytes, {
    expired: false,
    delayMs: 0,
    contentType: made.mediaType,
    extension: body.audio_config.format,
  });
  const billed = /fake-billed-(\d+(?:\.\d+)?)/.exec(prompt);
  const answer: SeedAudioAnswer = {
    code: 0,
    message: '',
    duration: made.durationSeconds!,
    original_duration: billed ? Number(billed[1]) : made.originalDurationSeconds!,
    url,
  };
  if (!prompt.includes('fake-url-only')) answer.audio = bytes.toString('base64');
  if (made.subtitle) {
    answer.subtitle = {
      text: made.subtitle.text,
      sentences: made.subtitle.sentences.map((sentence) => ({
        text: sentence.text,
        start_time: sentence.startTime,
        end_time: sentence.endTime,
        words: sentence.words.map((word) => ({ text: word.text, start_time: word.startTime, end_time: word.endTime })),
      })),
    };
  }
  writeJson<SeedAudioAnswer>(response, { status: 200, body: answer, headers: { 'x-tt-logid': 'fake-speech-log' } });
}

/** A fake ByteDance speech upstream: V3 HTTP text-to-speech, Seed Audio, and the files its URLs name. */
export async function startSpeechFake(): Promise<FakeServer> {
  let baseUrl = '';
  const files = new FakeFiles(() => baseUrl);
  const server = await startFakeServer(async (request, response) => {
    if (await files.serve(request, response)) return;
    if (request.method === 'POST' && request.path === '/api/v3/tts/unidirectional')
      return unidirectional(request, response);
    if (request.method === 'POST' && request.path === seedAudioPath) return createAudio(request, response, files);
    sendError(response, 404, { code: 40400000, message: `Not found: ${request.method} ${request.path}` });
  });
  baseUrl = server.url;
  return server;
}
