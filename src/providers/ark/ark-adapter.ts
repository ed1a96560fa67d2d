import { arkVideoAdapter } from './ark-video.ts';
import type { ProviderAdapter } from '../provider-adapter.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { arkEmbeddings } from './ark-embeddings.ts';
import { arkImageAdapter } from './ark-images.ts';

/** BytePlus ModelArk's own endpoints (its chat API is OpenAI-compatible and served by the openai protocol). */
export function createArkAdapter(http: UpstreamHttp): ProviderAdapter {
  return {
    protocol: 'ark',
    embeddings: {
      parts: ['text', 'imageBase64', 'imageUrl', 'videoBase64'],
      embed: (request, options) => arkEmbeddings(http, request, options),
    },
    images: arkImageAdapter(http),
    video: arkVideoAdapter(http),
  };
}
