import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { mediaKinds } from '../../domain/usage-modalities.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import { principalOf } from '../../http/authentication.ts';
import { requestBaseUrl } from '../../http/base-url.ts';
import { PageQueryFields } from '../../http/schemas.ts';
import { mediaPageExample } from './account-examples.ts';
import { MediaPageSchema } from './account-schemas.ts';

/** The services this surface uses, and only those. */
export type MediaServices = Pick<GatewayServices, 'config' | 'mediaLibrary'>;

/** The account's archived image, video and audio outputs with fresh download links. Registered behind the account API's authentication. */
export const mediaRoutes: FastifyPluginAsyncTypebox<{ services: MediaServices }> = async (app, { services }) => {
  const MediaQuery = Type.Object(
    { ...PageQueryFields(services.config.usage.maxPageSize), kind: Type.Optional(Type.Enum(mediaKinds)) },
    { additionalProperties: false },
  );

  const schema = {
    summary: "The account's archived media, newest first",
    description:
      'One page of the images, videos and audio the account generated (of one kind when asked), each output with a fresh signed download link.',
    querystring: MediaQuery,
    response: { 200: MediaPageSchema },
    documentedExample: { answer: mediaPageExample },
  };
  app.get('/media', { schema }, async (request) => {
    const { offset, limit, kind } = request.query;
    return services.mediaLibrary.page(principalOf(request).accountId, { offset, limit, kind }, requestBaseUrl(request));
  });
};
