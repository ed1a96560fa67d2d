import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { costEstimate } from './cost-estimate.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { callerOf, requireCredential } from '../../http/authentication.ts';
import { requestBaseUrl } from '../../http/base-url.ts';
import { AudioGenerationParams, decodeReferenceAudio, decodeTextToSpeech, ReferenceAudioBody, TextToSpeechBody, VoicesQuery } from './audio-codec.ts';

/** The native audio routes (spec, Native: audio): both products as jobs with their estimates, the shared poll, and the voice catalog. */
export const nativeAudioRoutes: FastifyPluginAsyncTypebox<{ services: GatewayServices }> = async (app, { services }) => {
  app.addHook('onRequest', requireCredential(services.authenticator));
  const speech = services.speech;

  app.post('/api/v1/audio/text-to-speech/estimate', { schema: { body: TextToSpeechBody } }, async (request) => {
    const nanos = await speech.estimate(decodeTextToSpeech(request.body));
    return costEstimate(nanos);
  });

  app.post('/api/v1/audio/text-to-speech', { schema: { body: TextToSpeechBody } }, async (request, reply) => {
    const generationId = await speech.submit(callerOf(request), decodeTextToSpeech(request.body));
    return reply.code(202).send({ generationId });
  });

  app.post('/api/v1/audio/generation-with-reference/estimate', { schema: { body: ReferenceAudioBody } }, async (request) => {
    const nanos = await speech.estimateReference(decodeReferenceAudio(request.body));
    return costEstimate(nanos);
  });

  app.post('/api/v1/audio/generation-with-reference', { schema: { body: ReferenceAudioBody } }, async (request, reply) => {
    const generationId = await speech.submitReference(callerOf(request), decodeReferenceAudio(request.body));
    return reply.code(202).send({ generationId });
  });

  app.get('/api/v1/audio/generations/:generationId', { schema: { params: AudioGenerationParams } }, async (request) => {
    const job = await speech.find(callerOf(request), request.params.generationId);
    return speech.view(job, requestBaseUrl(request));
  });

  app.get('/api/v1/audio/voices', { schema: { querystring: VoicesQuery } }, async (request) => {
    const voices = services.voices.list(request.query);
    return { voices, total: voices.length };
  });
};
