import type { ServerResponse } from 'node:http';
import { sandboxSpeech } from '../../src/providers/sandbox/sandbox-speech.ts';
import { isSpeechRequest, speechFinishedCode, type SpeechError, type SpeechFrame } from '../../src/protocols/speech/tts.ts';
import { sleep, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';
import { writeJson } from './wire.ts';

export const fakeSpeechKey = 'fake-speech-key';

function sendError(response: ServerResponse, status: number, code: number, message: string): void {
  writeJson<SpeechError>(response, status, { code, message }, { 'x-tt-logid': 'fake-speech-log' });
}

/**
 * A fake ByteDance speech upstream speaking the V3 HTTP chunked protocol (`POST /api/v3/tts/unidirectional`):
 * the audio in three base64 chunks, one JSON object per line, then `code` 20000000 with `usage.text_words`
 * when the usage header asks for it. A 2.0 voice (`*_uranus_bigtts`) needs the resource `seed-tts-2.0`, any
 * other `seed-tts-1.0`, or the answer is the provider's permission error inside the stream. Scenarios by text:
 * `fake-error-<status>` (a JSON error with that status), `fake-inband-error` (an error frame after audio),
 * `fake-cut` (the answer ends without its final frame), `fake-slow-<ms>`.
 */
async function unidirectional(request: RecordedRequest, response: ServerResponse): Promise<void> {
  if (request.headers['x-api-key'] !== fakeSpeechKey) return sendError(response, 401, 45000010, 'load grant: requested grant not found');
  if (!isSpeechRequest(request.body)) return sendError(response, 400, 40000001, 'invalid request body');
  const { text, speaker, audio_params: audio } = request.body.req_params;
  const failure = /fake-error-(\d{3})/.exec(text);
  if (failure) return sendError(response, Number(failure[1]), 55000000, `The fake failed with ${failure[1]}`);
  const delay = /fake-slow-(\d+)/.exec(text);
  if (delay) await sleep(Number(delay[1]));
  const resource = request.headers['x-api-resource-id'];
  const wanted = speaker.endsWith('_uranus_bigtts') ? 'seed-tts-2.0' : 'seed-tts-1.0';
  response.writeHead(200, { 'content-type': 'application/json', 'x-tt-logid': 'fake-speech-log' });
  const line = (frame: SpeechFrame) => response.write(`${JSON.stringify(frame)}\n`);
  if (resource !== wanted) {
    line({ code: 45000000, message: 'speaker permission denied: get resource id: access denied', data: null });
    return void response.end();
  }
  const format = audio.format === 'pcm' ? 'pcm' : 'mp3';
  const bytes = Buffer.from((await sandboxSpeech({ resourceId: wanted, voiceType: speaker, text, format, sampleRate: audio.sample_rate })).audio, 'base64');
  const third = Math.ceil(bytes.length / 3);
  for (let start = 0; start < bytes.length; start += third) line({ code: 0, message: '', data: bytes.subarray(start, start + third).toString('base64') });
  if (text.includes('fake-inband-error')) line({ code: 55000000, message: 'server error', data: null });
  else if (!text.includes('fake-cut')) {
    const usage = request.headers['x-control-require-usage-tokens-return'] ? { usage: { text_words: [...text].length } } : {};
    line({ code: speechFinishedCode, message: 'ok', data: null, ...usage });
  }
  response.end();
}

export function startSpeechFake(): Promise<FakeServer> {
  return startFakeServer(async (request, response) => {
    if (request.method === 'POST' && request.path === '/api/v3/tts/unidirectional') return unidirectional(request, response);
    sendError(response, 404, 40400000, `Not found: ${request.method} ${request.path}`);
  });
}
