import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { costEstimate } from './cost-estimate.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { callerOf, requestContextOf, requireCredential } from '../../http/authentication.ts';
import { requestBaseUrl } from '../../http/base-url.ts';
import { AudioJobSchema, CostEstimateSchema, SubmittedAudioSchema, VoiceListSchema } from './answer-schemas.ts';
import {
  AudioGenerationParams,
  decodeReferenceAudio,
  decodeTextToSpeech,
  ReferenceAudioBody,
  TextToSpeechBody,
  VoicesQuery,
} from './audio-codec.ts';

/** The services this surface uses, and only those. */
export type NativeAudioServices = Pick<GatewayServices, 'authenticator' | 'speech' | 'voices'>;

/** The native audio routes (spec, Native: audio): both products as jobs with their estimates, the shared poll, and the voice catalog. */
export const nativeAudioRoutes: FastifyPluginAsyncTypebox<{ services: NativeAudioServices }> = async (
  app,
  { services },
) => {
  app.addHook('onRequest', requireCredential(services.authenticator));
  const speech = services.speech;

  app.post(
    '/audio/text-to-speech/estimate',
    {
      schema: {
        summary: 'Cost estimate of a text-to-speech request',
        body: TextToSpeechBody,
        response: { 200: CostEstimateSchema },
      },
    },
    async (request) => {
      const nanos = await speech.estimate(callerOf(request), decodeTextToSpeech(request.body));
      return costEstimate(nanos);
    },
  );

  app.post(
    '/audio/text-to-speech',
    {
      schema: {
        summary: 'Submit a text-to-speech job',
        body: TextToSpeechBody,
        response: { 202: SubmittedAudioSchema },
      },
    },
    async (request, reply) => {
      const generationId = await speech.submit(
        requestContextOf(request, 'native', 'audio/text-to-speech'),
        decodeTextToSpeech(request.body),
      );
      return reply.code(202).send({ generationId });
    },
  );

  app.post(
    '/audio/generation-with-reference/estimate',
    {
      schema: {
        summary: 'Cost estimate of audio generation with reference (indicative: billed by delivered seconds)',
        body: ReferenceAudioBody,
        response: { 200: CostEstimateSchema },
      },
    },
    async (request) => {
      const nanos = await speech.estimateReference(callerOf(request), decodeReferenceAudio(request.body));
      return costEstimate(nanos);
    },
  );

  app.post(
    '/audio/generation-with-reference',
    {
      schema: {
        summary: 'Submit an audio generation with reference',
        body: ReferenceAudioBody,
        response: { 202: SubmittedAudioSchema },
      },
    },
    async (request, reply) => {
      const generationId = await speech.submitReference(
        requestContextOf(request, 'native', 'audio/generation-with-reference'),
        decodeReferenceAudio(request.body),
      );
      return reply.code(202).send({ generationId });
    },
  );

  app.get(
    '/audio/generations/:generationId',
    {
      schema: {
        summary: 'Poll an audio job (either product)',
        params: AudioGenerationParams,
        response: { 200: AudioJobSchema },
      },
    },
    async (request) => {
      const job = await speech.find(callerOf(request), request.params.generationId);
      return speech.view(job, requestBaseUrl(request));
    },
  );

  app.get(
    '/audio/voices',
    {
      schema: {
        summary: 'The text-to-speech voice catalog',
        querystring: VoicesQuery,
        response: { 200: VoiceListSchema },
      },
    },
    async (request) => {
      const voices = services.voices.list(request.query);
      return { voices, total: voices.length };
    },
  );
};
