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
import {
  audioJobExample,
  costEstimateExample,
  referenceAudioExample,
  submittedAudioExample,
  textToSpeechExample,
  voiceListExample,
} from './native-examples.ts';

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
        description:
          'What submitting the same body would hold, in USD (priced per character); nothing is stored or charged.',
        documentedExample: { request: textToSpeechExample, answer: costEstimateExample },
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
        description:
          'Speaks the text in a voice of the catalog: holds the cost and queues the job, to poll by its generation id.',
        documentedExample: { request: textToSpeechExample, answer: submittedAudioExample },
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
        description:
          'What submitting the same body would hold, in USD, for the seconds the prompt should take; the job is billed by the seconds delivered.',
        documentedExample: { request: referenceAudioExample, answer: costEstimateExample },
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
        description:
          'Generates speech from a prompt, in the manner of up to three references: holds the cost and queues the job, to poll by its generation id.',
        documentedExample: { request: referenceAudioExample, answer: submittedAudioExample },
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
        description:
          "The job's state, with a signed link to the audio, its duration and subtitles once it succeeded, or why it failed.",
        documentedExample: { answer: audioJobExample },
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
        description:
          'The voices of gateway.yaml, filtered when asked, each with its languages and whether it takes context texts.',
        documentedExample: { answer: voiceListExample },
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
