import type { ProviderAdapter } from '../provider-adapter.ts';
import { sandboxCarries, sandboxChat } from './sandbox-chat.ts';
import { sandboxEmbeddings } from './sandbox-embeddings.ts';
import { actOutTrigger, jobTrigger } from './job-triggers.ts';
import { sandboxVideo } from './sandbox-video.ts';
import { sandboxImages } from './sandbox-images.ts';
import { sandboxReferenceAudio, sandboxSpeech } from './sandbox-speech.ts';

/**
 * The built-in offline provider: every modality answered in process, deterministically, so a newcomer or a CI
 * can exercise every surface and the whole billing path without an upstream account (docs/sandbox.md).
 */
export const sandboxAdapter: ProviderAdapter = {
  protocol: 'sandbox',
  text: { streamChat: (request) => sandboxChat(request), carries: sandboxCarries },
  embeddings: sandboxEmbeddings,
  images: sandboxImages,
  speech: {
    synthesize: async (request, options) => {
      await actOutTrigger(jobTrigger(request.text), options.signal);
      return sandboxSpeech(request);
    },
    generateWithReference: async (request, upstreamModel, options) => {
      await actOutTrigger(jobTrigger(request.textPrompt), options.signal);
      return sandboxReferenceAudio(request, upstreamModel);
    },
  },
  video: sandboxVideo,
};
