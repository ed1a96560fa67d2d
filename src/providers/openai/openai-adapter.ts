import { routerVideoAdapter } from './router-videos.ts';
import type { ProviderAdapter } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { openAiCarries, streamOpenAiChat } from './openai-chat.ts';
import { openAiEmbeddings } from './openai-embeddings.ts';
import { openAiImageAdapter } from './openai-images.ts';
import { openAiRelayMeter, relayOpenAi } from './openai-relay.ts';

/** OpenAI and every OpenAI-compatible upstream (routing providers, self-hosted servers). */
export function createOpenAiAdapter(http: UpstreamHttp): ProviderAdapter {
  return {
    protocol: 'openai',
    text: {
      streamChat: (request, options) => streamOpenAiChat(http, request, options),
      carries: openAiCarries,
      relay: (request, options) => relayOpenAi(http, request, options),
      relayMeter: openAiRelayMeter,
    },
    embeddings: { parts: ['text'], embed: (request, options) => openAiEmbeddings(http, request, options) },
    images: openAiImageAdapter(http),
    video: routerVideoAdapter(http),
  };
}
