import type { ProviderAdapter } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { geminiCarries, streamGeminiContent } from './gemini-content.ts';
import { geminiEmbeddings } from './gemini-embeddings.ts';
import { geminiRelayMeter, relayGemini } from './gemini-relay.ts';

export function createGeminiAdapter(http: UpstreamHttp): ProviderAdapter {
  return {
    protocol: 'gemini',
    text: {
      streamChat: (request, options) => streamGeminiContent(http, request, options),
      carries: geminiCarries,
      // functionResponse.name is required: a result is matched to its call by the function's name.
      answersCallsByName: true,
      relay: (request, options) => relayGemini(http, request, options),
      relayMeter: geminiRelayMeter,
    },
    embeddings: {
      parts: ['text', 'imageBase64', 'audioBase64', 'fileBase64', 'videoBase64'],
      embed: (request, options) => geminiEmbeddings(http, request, options),
    },
  };
}
