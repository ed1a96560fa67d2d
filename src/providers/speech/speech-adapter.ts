import type { ProviderAdapter } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { speechTts } from './speech-tts.ts';

/** ByteDance speech (Seed-TTS over the V3 HTTP API). */
export function createSpeechAdapter(http: UpstreamHttp): ProviderAdapter {
  return { protocol: 'speech', speech: { synthesize: (request, options) => speechTts(http, request, options) } };
}
