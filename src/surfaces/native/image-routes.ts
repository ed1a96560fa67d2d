import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { costEstimate } from './cost-estimate.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { callerOf, requestContextOf, requireCredential } from '../../http/authentication.ts';
import { requestBaseUrl } from '../../http/base-url.ts';
import { relaysUpstreamErrors } from '../../http/openapi/route-documentation.ts';
import { reportDroppedParameters } from '../../http/dropped-parameters.ts';
import { CostEstimateSchema, ImageJobSchema, QueuedJobSchema, WaitedImageSchema } from './answer-schemas.ts';
import { decodeImageBody, GenerationIdParams, ImageGenerationBody } from './image-request-codec.ts';
import {
  costEstimateExample,
  imageJobExample,
  imageRequestExample,
  queuedImageExample,
  waitedImageExample,
} from './native-examples.ts';

/** The services this surface uses, and only those. */
export type NativeImageServices = Pick<GatewayServices, 'authenticator' | 'config' | 'images'>;

/** The native image routes (spec, Native: image): estimate, async submit and poll, and the waiting form. */
export const nativeImageRoutes: FastifyPluginAsyncTypebox<{ services: NativeImageServices }> = async (
  app,
  { services },
) => {
  app.addHook('onRequest', requireCredential(services.authenticator));
  const images = services.images;

  app.post(
    '/image/estimate',
    {
      schema: {
        summary: 'Cost estimate of an image request',
        description:
          'What submitting the same body would hold from the balance, in USD, checked as a submission is; nothing is stored or charged.',
        documentedExample: { request: imageRequestExample, answer: costEstimateExample },
        body: ImageGenerationBody,
        response: { 200: CostEstimateSchema },
      },
    },
    async (request) => {
      const nanos = await images.estimate(callerOf(request), decodeImageBody(request.body));
      return costEstimate(nanos);
    },
  );

  app.post(
    '/image/generations/async',
    {
      schema: {
        summary: 'Submit an image job',
        description:
          'Holds the cost and queues the job; poll it by its generation id. The images are archived and linked once it succeeds.',
        documentedExample: { request: imageRequestExample, answer: queuedImageExample },
        body: ImageGenerationBody,
        response: { 202: QueuedJobSchema },
      },
    },
    async (request, reply) => {
      const { generationId, status, droppedParameters } = await images.submit(
        requestContextOf(request, 'native', 'image/generations/async'),
        decodeImageBody(request.body),
      );
      reportDroppedParameters(reply, droppedParameters);
      return reply.code(202).send({ generationId, status });
    },
  );

  app.get(
    '/image/generations/async/:generationId',
    {
      schema: {
        summary: 'Poll an image job',
        description:
          "The job's state, with its images and what it was charged once it succeeded, or why it failed. Polling changes nothing.",
        documentedExample: { answer: imageJobExample },
        params: GenerationIdParams,
        response: { 200: ImageJobSchema },
      },
    },
    async (request) => {
      const job = await images.find(callerOf(request), request.params.generationId);
      return images.view(job, requestBaseUrl(request));
    },
  );

  // The waiting form: the same body; answers the ImageResult when the job ends within `jobs.syncWaitMs`,
  // else 202 with the generationId to poll.
  app.post(
    '/image/generations',
    {
      schema: {
        summary: 'Generate images, waiting up to jobs.syncWaitMs',
        description:
          'Submits the job and waits for it: 200 with the images when it succeeds in time, else 202 with the generation id to poll.',
        documentedExample: { request: imageRequestExample, answer: waitedImageExample },
        body: ImageGenerationBody,
        response: { 200: WaitedImageSchema, 202: QueuedJobSchema },
        ...relaysUpstreamErrors,
      },
    },
    async (request, reply) => {
      const context = requestContextOf(request, 'native', 'image/generations');
      const { generationId, droppedParameters } = await images.submit(context, decodeImageBody(request.body));
      // Named whatever the wait comes to: the job went without them either way.
      reportDroppedParameters(reply, droppedParameters);
      const gone = new AbortController();
      request.raw.socket?.once('close', () => gone.abort());
      const job = await images.waitFor(context, generationId, {
        waitMs: services.config.jobs.syncWaitMs,
        signal: gone.signal,
      });
      const view = await images.view(job, requestBaseUrl(request));
      if (view.status === 'succeeded' && view.result) return { generationId, ...view.result };
      // A provider's refusal is relayed with its own status and body; other failures are 502 GW_GENERATION_FAILED.
      if (view.status === 'failed')
        throw images.failureOf(job, `image generation ${generationId} failed: ${view.error}`);
      return reply.code(202).send({ generationId, status: view.status });
    },
  );
};
