import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceAudioRequest, SpeechSynthesisRequest } from '../../src/domain/speech.ts';
import { UpstreamHttpError } from '../../src/domain/upstream-failure.ts';
import { isSpeechRequest } from '../../src/protocols/speech/tts.ts';
import { createSpeechAdapter } from '../../src/providers/speech/speech-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeSpeechKey, startSpeechFake } from '../fakes/speech-fake.ts';
import {
  askFake,
  replayed,
  requestBody,
  shapeDifferences,
  streamDifferences,
  type VendorFixture,
  vendorFixture,
  type WrittenEvent,
} from '../support/vendor-fixtures.ts';

/**
 * ByteDance speech's V3 HTTP text-to-speech as its documentation shows it (test/fixtures/vendor/speech, built
 * from the documented request and frames of volcengine.com/docs/6561/1598757; each note says how) replayed
 * from a loopback upstream against the speech adapter, and the speech fake held to the same frames. Seed
 * Audio's generation with reference has no published example: its fixtures (seed-audio-*) are built from the
 * wire doc's fields, as their source says, and replayed and held to the fake the same way.
 */
const fixture = (name: string) => vendorFixture('speech', name);
const http = new UpstreamHttp();
const speech = createSpeechAdapter(http).speech!;
afterAll(() => http.close());

/** The documented single-voice request (section 2.2), as the gateway asks for it. */
const documentedRequest: SpeechSynthesisRequest = {
  resourceId: 'seed-tts-1.0',
  voiceType: 'zh_female_shuangkuaisisi_moon_bigtts',
  text: '明朝开国皇帝朱元璋也称这本书为,万物之根',
  format: 'mp3',
  sampleRate: 24000,
};

const synthesized = (recorded: VendorFixture, request: SpeechSynthesisRequest = documentedRequest) =>
  replayed(recorded, '', (target) => speech.synthesize(request, { target }));

/** The documented audio chunk (a placeholder, not audio) as the adapter assembles it: its base64, decoded. */
const assembled = (...chunks: string[]) =>
  Buffer.concat(chunks.map((chunk) => Buffer.from(chunk, 'base64'))).toString('base64');

/** The documented error of a voice the key is not granted (section 4 of the V3 page). */
const speakerDenied = { code: 45000000, message: 'speaker permission denied: get resource id: access denied' };

/** The upstream's error a call failed with; any other outcome fails the test. */
async function upstreamError(call: Promise<unknown>): Promise<UpstreamHttpError> {
  const failure = await call.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(failure instanceof UpstreamHttpError)) throw new Error(`expected the upstream's error, got ${failure}`);
  return failure;
}

describe('speech answers replayed from the documentation against the speech adapter', () => {
  it('sends the documented request to the documented path, with the resource and usage headers', async () => {
    const recorded = fixture('tts-chunked');
    const { sent } = await synthesized(recorded);
    expect(sent).toHaveLength(1);
    const [request] = sent;
    expect(request).toMatchObject({ method: 'POST', path: recorded.request.path });
    // The documented body but for the user id, which is the caller's own (the gateway's).
    expect(request!.body).toEqual({ ...requestBody(recorded), user: { uid: expect.any(String) } });
    expect(request!.headers).toMatchObject({
      'x-api-resource-id': 'seed-tts-1.0',
      'x-control-require-usage-tokens-return': 'text_words',
    });
    expect(request!.headers['x-api-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('assembles the audio of the documented frames and takes the billed characters of the end frame', async () => {
    const { result } = await synthesized(fixture('tts-chunked'));
    expect(result).toEqual({ audio: assembled('{{STRING}}'), mediaType: 'audio/mpeg', billedCharacters: 10 });
  });

  it('reads the documented sentence frame as a subtitle timed in milliseconds, when subtitles were asked', async () => {
    const { result } = await synthesized(fixture('tts-chunked'), { ...documentedRequest, enableSubtitle: true });
    expect(result.subtitle).toEqual({
      text: '其他人。',
      sentences: [
        {
          text: '其他人。',
          startTime: 205,
          endTime: 815,
          words: [
            { text: '其', startTime: 205, endTime: 315 },
            { text: '他', startTime: 315, endTime: 515 },
            { text: '人。', startTime: 515, endTime: 815 },
          ],
        },
      ],
    });
  });

  it('reads the whole-answer example, whose sentence has no words and whose end says "OK"', async () => {
    const { result } = await synthesized(fixture('tts-sse-example'), { ...documentedRequest, enableSubtitle: true });
    expect(result).toEqual({
      audio: assembled('二进制音频流xxxx'),
      mediaType: 'audio/mpeg',
      billedCharacters: 11,
      subtitle: {
        text: '音频文件能够正常播放。',
        sentences: [{ text: '音频文件能够正常播放。', startTime: 0, endTime: 0, words: [] }],
      },
    });
  });

  it("relays the documented voice permission error as the request's 400, with its code and message", async () => {
    const failure = await upstreamError(synthesized(fixture('tts-error-speaker-permission')));
    expect(failure.status).toBe(400);
    expect(JSON.parse(failure.body)).toEqual(speakerDenied);
  });
});

/** The answer's frames, one JSON object per line. */
const frames = (text: string): WrittenEvent[] =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((data) => ({ name: undefined, data }));

/** What a frame carries: audio, a timed sentence, the end, or an error. */
function frameKind({ data }: WrittenEvent): string {
  const frame: unknown = JSON.parse(data);
  if (typeof frame !== 'object' || frame === null || !('code' in frame)) return 'not a frame';
  if (frame.code === 20000000) return 'end';
  if (frame.code !== 0) return 'error';
  return 'sentence' in frame ? 'sentence' : 'audio';
}

describe('the speech fake answers as the documentation does', () => {
  let fake: FakeServer;
  beforeAll(async () => {
    fake = await startSpeechFake();
  });
  afterAll(() => fake.close());
  const headers = {
    'x-api-key': fakeSpeechKey,
    'x-api-resource-id': 'seed-tts-1.0',
    'x-control-require-usage-tokens-return': 'text_words',
  };

  it('answers the documented request with audio frames, a timed sentence and the end, each of the documented shape', async () => {
    const recorded = fixture('tts-chunked');
    const documented = requestBody(recorded);
    if (!isSpeechRequest(documented)) throw new Error('the documented request is not a speech request');
    // Sentence frames are sent when timings are asked for: the fake reads the field the gateway sends.
    const { req_params: params } = documented;
    const body = {
      ...documented,
      req_params: { ...params, audio_params: { ...params.audio_params, enable_subtitle: true } },
    };
    const answer = await askFake(fake, recorded, { headers, body });
    expect(answer.status).toBe(200);
    const vendor = `${recorded.response.transcript!.join('\n')}\n`;
    expect(streamDifferences(vendor, answer.text, { events: frames, kindOf: frameKind })).toEqual([]);
  });

  it("answers a voice the resource does not grant with the documented error frame's shape", async () => {
    const recorded = fixture('tts-error-speaker-permission');
    const answer = await askFake(fake, recorded, { headers: { ...headers, 'x-api-resource-id': 'seed-tts-2.0' } });
    expect(answer.status).toBe(recorded.response.status);
    const vendor = `${recorded.response.transcript!.join('\n')}\n`;
    expect(
      streamDifferences(vendor, answer.text, {
        events: frames,
        kindOf: frameKind,
        rules: { extra: { '$.data': 'the fake writes data: null on every frame, as the documented frames do' } },
      }),
    ).toEqual([]);
    expect(frames(answer.text).map((frame) => JSON.parse(frame.data).message)).toEqual([
      'speaker permission denied: get resource id: access denied',
    ]);
  });
});

/** The generation the Seed Audio fixture shows, as the gateway asks for it. */
const documentedGeneration: ReferenceAudioRequest = {
  textPrompt: '@Audio1 greets the listener, then @Audio2 answers: good morning.',
  references: [{ speaker: 'zh_female_vv_uranus_bigtts' }, { audioUrl: 'https://example.com/reference.mp3' }],
  format: 'mp3',
  sampleRate: 24000,
  enableSubtitle: true,
};

const generated = (recorded: VendorFixture, request: ReferenceAudioRequest = documentedGeneration) =>
  replayed(recorded, '', (target) => speech.generateWithReference!(request, 'seed-audio-1.0', { target }));

describe('Seed Audio answers built from the wire doc, replayed against the speech adapter', () => {
  it('sends the documented body to the documented path, with the key and a request id', async () => {
    const recorded = fixture('seed-audio-create');
    const { sent } = await generated(recorded);
    expect(sent).toHaveLength(1);
    const [request] = sent;
    expect(request).toMatchObject({ method: 'POST', path: recorded.request.path });
    expect(request!.body).toEqual(requestBody(recorded));
    expect(request!.headers['x-api-key']).toBe('vendor-fixture-key');
    expect(request!.headers['x-api-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('takes the inline audio, both durations (the original one billed), the URL and the subtitle in milliseconds', async () => {
    const { result } = await generated(fixture('seed-audio-create'));
    expect(result).toEqual({
      audio: { kind: 'inline', data: 'SUQzBAAAAAAAI1RTU0UAAAAP' },
      mediaType: 'audio/mpeg',
      durationSeconds: 2.1,
      originalDurationSeconds: 2.4,
      providerUrl: 'https://example.com/seed-audio/clip.mp3',
      subtitle: {
        text: 'Good morning.',
        sentences: [
          {
            text: 'Good morning.',
            startTime: 300,
            endTime: 1650,
            words: [
              { text: 'Good', startTime: 300, endTime: 820 },
              { text: 'morning.', startTime: 820, endTime: 1650 },
            ],
          },
        ],
      },
    });
  });

  it('leaves the subtitle out when none was asked, though the answer has one', async () => {
    const { result } = await generated(fixture('seed-audio-create'), {
      ...documentedGeneration,
      enableSubtitle: false,
    });
    expect(result.subtitle).toBeUndefined();
    expect(result.originalDurationSeconds).toBe(2.4);
  });

  it("relays an error code inside a 200 answer as the request's 400, with its code and message", async () => {
    const failure = await upstreamError(
      generated(fixture('seed-audio-error'), {
        textPrompt: '@Audio1 reads the weather for tomorrow.',
        references: [{ speaker: 'zh_female_vv_uranus_bigtts' }],
        format: 'mp3',
      }),
    );
    expect(failure.status).toBe(400);
    expect(JSON.parse(failure.body)).toEqual(speakerDenied);
  });
});

describe('the speech fake answers Seed Audio with the fields of the wire doc', () => {
  let fake: FakeServer;
  beforeAll(async () => {
    fake = await startSpeechFake();
  });
  afterAll(() => fake.close());
  const headers = { 'x-api-key': fakeSpeechKey };

  it('answers the documented generation with the audio, both durations, the URL and the timed subtitle', async () => {
    const recorded = fixture('seed-audio-create');
    const answer = await askFake(fake, recorded, { headers });
    expect(answer.status).toBe(recorded.response.status);
    expect(answer.contentType).toContain('application/json');
    expect(shapeDifferences([recorded.response.body], [JSON.parse(answer.text)])).toEqual([]);
  });

  it('answers a refused generation inside a 200 answer with only the code and message', async () => {
    const recorded = fixture('seed-audio-error');
    // The fake refuses by prompt: fake-inband-error.
    const body = { ...requestBody(recorded), text_prompt: 'fake-inband-error' };
    const answer = await askFake(fake, recorded, { headers, body });
    expect(answer.status).toBe(recorded.response.status);
    const refused: unknown = JSON.parse(answer.text);
    expect(shapeDifferences([recorded.response.body], [refused])).toEqual([]);
    expect(refused).not.toMatchObject({ code: 0 });
  });
});
