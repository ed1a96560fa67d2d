import { GatewayError } from '../../domain/errors.ts';
import type { VideoGenerationRequest } from '../../domain/video.ts';

/**
 * `maxTokens` passes the video request's validation (the spec lists it) but no video protocol has such a
 * field: every video adapter refuses it, before anything is held.
 */
export function refuseMaxTokens(request: Omit<VideoGenerationRequest, 'content'>, modelId: string): void {
  if (request.maxTokens !== undefined)
    throw new GatewayError(
      'GW_PARAMETER_UNSUPPORTED',
      `model "${modelId}" does not support parameter "maxTokens" (video generation takes no token limit)`,
    );
}
