import type { ProviderAdapter } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { seedAudio } from './speech-reference.ts';
import { speechTts } from './speech-tts.ts';

/** ByteDance speech: Seed-TTS over the V3 HTTP API, and Seed Audio's generation with reference. */
export function createSpeechAdapter(http: UpstreamHttp): ProviderAdapter {
  return {
    protocol: 'speech',
    speech: {
      synthesize: (request, options) => speechTts(http, request, options),
      generateWithReference: (request, upstreamModel, options) => seedAudio(http, { request, upstreamModel }, options),
    },
  };
}
