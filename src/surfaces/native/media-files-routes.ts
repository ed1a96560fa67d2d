import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../../gateway/services.ts';
import { binaryDownload } from '../../http/openapi/route-documentation.ts';
import { noCredential } from '../../http/openapi/security-schemes.ts';
import { archivedMediaTypes } from './answer-schemas.ts';

/** The services this surface uses, and only those. */
export type MediaFilesServices = Pick<GatewayServices, 'mediaDownloads'>;

const LinkQuery = Type.Object({
  expires: Type.Optional(Type.String({ maxLength: 20 })),
  signature: Type.Optional(Type.String({ maxLength: 100 })),
});

/** `GET|HEAD /api/v1/media/files/<key>?expires&signature`: archived media by signed link, no credential. */
export const mediaFilesRoutes: FastifyPluginAsyncTypebox<{ services: MediaFilesServices }> = async (
  app,
  { services },
) => {
  app.route({
    method: ['GET', 'HEAD'],
    url: '/media/files/*',
    schema: {
      summary: 'Download archived media by its signed link',
      description:
        'The bytes of an archived image, video or audio output, by the expiring signed link an answer gave; no credential, and Range requests are served.',
      security: noCredential,
      params: Type.Object({ '*': Type.String({ description: 'The object key, as the signed link names it' }) }),
      wildcardName: 'objectKey',
      querystring: LinkQuery,
      response: {
        200: binaryDownload('The file (a changed or expired link answers 403)', archivedMediaTypes),
        206: binaryDownload('The part of the file a Range header asked for', archivedMediaTypes),
      },
    },
    handler: async (request, reply) => {
      const objectKey = request.params['*'];
      const range = request.headers.range;
      const download = await services.mediaDownloads.open(objectKey, request.query, {
        range: typeof range === 'string' ? range : undefined,
        head: request.method === 'HEAD',
      });
      reply.code(download.status).headers(download.headers);
      return download.body ? reply.send(download.body) : reply.send();
    },
  });
};
