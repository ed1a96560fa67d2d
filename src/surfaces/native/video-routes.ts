import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { costEstimate } from './cost-estimate.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { callerOf, requestContextOf, requireCredential } from '../../http/authentication.ts';
import { requestBaseUrl } from '../../http/base-url.ts';
import { CostEstimateSchema, VideoTaskSchema } from './answer-schemas.ts';
import { decodeVideoBody, TaskIdParams, VideoGenerationBody } from './video-request-codec.ts';
import { costEstimateExample, videoRequestExample, videoTaskExample } from './native-examples.ts';

/** The services this surface uses, and only those. */
export type NativeVideoServices = Pick<GatewayServices, 'authenticator' | 'video'>;

/** The native video routes (spec, Native: video): estimate, create (the persisted task), poll, and cancel of a queued task. */
export const nativeVideoRoutes: FastifyPluginAsyncTypebox<{ services: NativeVideoServices }> = async (
  app,
  { services },
) => {
  app.addHook('onRequest', requireCredential(services.authenticator));
  const video = services.video;

  app.post(
    '/video/estimate',
    {
      schema: {
        summary: 'Cost estimate of a video request (indicative: billed by delivered seconds)',
        description:
          'What submitting the same body would hold, in USD, for the seconds and resolution asked; the task is billed by the seconds delivered.',
        documentedExample: { request: videoRequestExample, answer: costEstimateExample },
        body: VideoGenerationBody,
        response: { 200: CostEstimateSchema },
      },
    },
    async (request) => {
      const nanos = await video.estimate(callerOf(request), decodeVideoBody(request.body));
      return costEstimate(nanos);
    },
  );

  app.post(
    '/video/generations',
    {
      schema: {
        summary: 'Create a video task',
        description:
          'Holds the cost and queues the task; poll it by its task id. The video is archived and linked once it succeeds.',
        documentedExample: { request: videoRequestExample, answer: videoTaskExample },
        body: VideoGenerationBody,
        response: { 200: VideoTaskSchema },
      },
    },
    async (request) => {
      const job = await video.submit(
        requestContextOf(request, 'native', 'video/generations'),
        decodeVideoBody(request.body),
      );
      return video.view(job, requestBaseUrl(request));
    },
  );

  app.get(
    '/video/tasks/:taskId',
    {
      schema: {
        summary: 'Poll a video task',
        description:
          "The task's state, with a signed link to the video and what it was charged once it succeeded, or why it failed.",
        documentedExample: { answer: { ...videoTaskExample, status: 'running' } },
        params: TaskIdParams,
        response: { 200: VideoTaskSchema },
      },
    },
    async (request) => {
      const job = await video.find(callerOf(request), request.params.taskId);
      return video.view(job, requestBaseUrl(request));
    },
  );

  // Not in the spec's table: cancels a task nothing was sent upstream for yet (409 once it runs).
  app.post(
    '/video/tasks/:taskId/cancel',
    {
      config: { audit: { action: 'media-job.cancel', subject: { type: 'media-job', from: 'path' } } },
      schema: {
        summary: 'Cancel a task still queued (409 once sent upstream)',
        description:
          'Cancels a task nothing was sent upstream for yet and releases its hold; a task already sent answers 409.',
        documentedExample: { answer: { ...videoTaskExample, status: 'cancelled' } },
        params: TaskIdParams,
        response: { 200: VideoTaskSchema },
      },
    },
    async (request) => {
      const job = await video.cancel(callerOf(request), request.params.taskId);
      return video.view(job, requestBaseUrl(request));
    },
  );
};
