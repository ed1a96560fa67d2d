import type { Readable } from 'node:stream';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { unsupportedMediaTypeMessage } from '../../http/error-envelope.ts';
import { callerOf, requestContextOf, requireCredential } from '../../http/authentication.ts';
import { requestBaseUrl } from '../../http/base-url.ts';
import { Identifier } from '../../http/schemas.ts';
import { readMultipartForm } from '../../http/multipart-form.ts';
import { binaryDownload, jsonBody, redirect } from '../../http/openapi/route-documentation.ts';
import { VideosCreateRequest } from '../../protocols/openai/videos.ts';
import { RouterVideoJob } from '../../protocols/router-video/videos.ts';
import { alphaVideoJob, decodeAlphaVideo, formBody, refuseUpload } from './videos-codec.ts';
import { videoJobExample, videoRequestExample } from './alpha-examples.ts';

/** The services this surface uses, and only those. */
export type AlphaVideoServices = Pick<GatewayServices, 'authenticator' | 'config' | 'mediaDownloads' | 'video'>;

/** The body types `POST /v1/videos` takes: JSON, and the multipart form the official SDKs send. */
const takenBodyTypes = ['application/json', 'multipart/form-data'];

/** A video id as the gateway issues them: anything else answers 404 before any lookup. */
const VideoIdParams = Type.Object({ id: Identifier });
const ContentQuery = Type.Object(
  { index: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000 })) },
  { additionalProperties: false },
);
const VideoJob = Type.Object(
  { ...RouterVideoJob.properties, model: Type.String() },
  { description: "The task in the routing provider's job shape, with links back to this surface" },
);

/**
 * The alpha surface's videos (spec, Alpha surface): the routing provider's video API over the gateway's
 * video tasks. The body is JSON, or the multipart form the official SDKs send.
 */
export const alphaVideoRoutes: FastifyPluginAsyncTypebox<{ services: AlphaVideoServices }> = async (
  app,
  { services },
) => {
  app.addHook('onRequest', requireCredential(services.authenticator));
  // Streamed through the form parser within `server.multipart`, after the admission hook below has passed.
  // A promise Fastify settles the parse with: a refusal of the form's fields (a field given twice) is the parse's
  // 400, not an exception escaping a callback (which ended the process).
  app.addContentTypeParser('multipart/form-data', async (request: FastifyRequest, payload: Readable) => {
    const { headers } = request;
    const contentLength = headers['content-length'];
    const form = await readMultipartForm(
      payload,
      { 'content-type': headers['content-type'], 'content-length': contentLength },
      {
        limits: services.config.server.multipart,
        maxBodyBytes: services.config.server.bodyLimitBytes,
        onField: ({ name, value }) => {
          if (name === 'model') services.video.checkModel(value);
        },
        refuseFile: refuseUpload,
      },
    );
    return formBody(form.fields);
  });
  // Any other body type answers 415 naming both that the route takes (the gateway's default names JSON alone).
  app.addContentTypeParser('*', (_request, _payload, done) =>
    done(new GatewayError('GW_UNSUPPORTED_MEDIA_TYPE', unsupportedMediaTypeMessage(takenBodyTypes))),
  );
  const video = services.video;
  const surfaceBase = (request: Parameters<typeof requestBaseUrl>[0]) => `${requestBaseUrl(request)}/api/alpha/v1`;

  app.post(
    '/v1/videos',
    {
      schema: {
        summary: 'Submit a video job',
        description:
          "Holds the cost and queues a video of the prompt (with a reference image when given), as JSON or the SDKs' multipart form; poll the job by its id.",
        documentedExample: { request: videoRequestExample, answer: videoJobExample },
        // Checked in code: the same fields come as JSON or as the SDKs' multipart form.
        documentedBody: jsonBody(
          VideosCreateRequest,
          'JSON, or a multipart form of the same fields (`input_reference[image_url]`); any other field is refused',
          { alsoMultipart: true },
        ),
        response: { 202: VideoJob },
      },
    },
    async (request, reply) => {
      const job = await video.submit(requestContextOf(request, 'alpha', 'videos'), decodeAlphaVideo(request.body));
      return reply.code(202).send(alphaVideoJob(await video.view(job, requestBaseUrl(request)), surfaceBase(request)));
    },
  );

  app.get(
    '/v1/videos/:id',
    {
      schema: {
        summary: 'Poll a video job',
        description:
          "The job's state in the routing provider's shape; once completed, the link to its content and what it cost.",
        documentedExample: {
          answer: {
            ...videoJobExample,
            status: 'completed',
            unsigned_urls: [`${videoJobExample.polling_url}/content?index=0`],
            usage: { cost: 2.4, is_byok: false },
          },
        },
        params: VideoIdParams,
        response: { 200: VideoJob },
      },
    },
    async (request) => {
      const job = await video.find(callerOf(request), request.params.id);
      return alphaVideoJob(await video.view(job, requestBaseUrl(request)), surfaceBase(request));
    },
  );

  app.route({
    method: ['GET', 'HEAD'],
    url: '/v1/videos/:id/content',
    schema: {
      summary: 'Download the video',
      description:
        'The MP4 of a completed job (the `index`-th when it made several), or a redirect to where it is stored.',
      params: VideoIdParams,
      querystring: ContentQuery,
      response: {
        200: binaryDownload('The MP4 (filesystem store)', ['video/mp4']),
        206: binaryDownload('The part a Range header asked for', ['video/mp4']),
        302: redirect('An S3 store: its presigned link'),
      },
    },
    handler: async (request, reply) => {
      const job = await video.find(callerOf(request), request.params.id);
      const output = await video.output(job, request.query.index ?? 0, requestBaseUrl(request));
      // The filesystem store is served here, ranges included; a bucket serves its own presigned link.
      if (!services.mediaDownloads.servesFiles) return reply.redirect(output.link, 302);
      const range = request.headers.range;
      const download = await services.mediaDownloads.serve(output.objectKey, {
        range: typeof range === 'string' ? range : undefined,
        head: request.method === 'HEAD',
        maxAgeSeconds: 0,
      });
      reply.code(download.status).headers(download.headers);
      return download.body ? reply.send(download.body) : reply.send();
    },
  });
};
