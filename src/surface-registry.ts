import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from './gateway/services.ts';
import { accountRoutes } from './surfaces/account/account-routes.ts';
import { authRoutes } from './surfaces/account/auth-routes.ts';
import { adminRoutes } from './surfaces/admin/admin-routes.ts';
import { alphaRoutes } from './surfaces/alpha/alpha-routes.ts';
import { alphaVideoRoutes } from './surfaces/alpha/video-routes.ts';
import { betaRoutes } from './surfaces/beta/beta-routes.ts';
import { compatRoutes } from './surfaces/compat/compat-routes.ts';
import { gammaRoutes } from './surfaces/gamma/gamma-routes.ts';
import { nativeAudioRoutes } from './surfaces/native/audio-routes.ts';
import { nativeImageRoutes } from './surfaces/native/image-routes.ts';
import { mediaFilesRoutes } from './surfaces/native/media-files-routes.ts';
import { nativeModelsRoutes } from './surfaces/native/models-routes.ts';
import { nativeTextRoutes } from './surfaces/native/text-completions-routes.ts';
import { nativeVideoRoutes } from './surfaces/native/video-routes.ts';

/**
 * One line per surface plugin: each is handed the services it uses, and only those. A new surface is one
 * folder under surfaces/ and one line here.
 */
export async function registerSurfaces(
  app: FastifyInstance,
  services: GatewayServices,
  options: { secureCookies: boolean },
): Promise<void> {
  const { accounts, apiKeys, authenticator, catalog, config, usage, text, embeddings, images, video } = services;
  const { secureCookies } = options;
  await app.register(authRoutes, {
    services: { accounts, authenticator, config, limiterStore: services.limiterStore },
    secureCookies,
  });
  await app.register(accountRoutes, {
    services: { accounts, apiKeys, authenticator, catalog, config, usage, mediaLibrary: services.mediaLibrary },
    secureCookies,
  });
  await app.register(nativeModelsRoutes, { services: { authenticator, catalog } });
  await app.register(nativeTextRoutes, { services: { authenticator, text } });
  await app.register(nativeImageRoutes, { services: { authenticator, config, images } });
  await app.register(mediaFilesRoutes, { services: { mediaDownloads: services.mediaDownloads } });
  await app.register(nativeAudioRoutes, {
    services: { authenticator, speech: services.speech, voices: services.voices },
  });
  await app.register(nativeVideoRoutes, { services: { authenticator, video } });
  await app.register(alphaRoutes, {
    services: { authenticator, catalog, config, embeddings, imageRequests: services.imageRequests, images, text },
  });
  await app.register(alphaVideoRoutes, {
    services: { authenticator, config, mediaDownloads: services.mediaDownloads, video },
  });
  await app.register(betaRoutes, { services: { authenticator, catalog, embeddings, text } });
  await app.register(gammaRoutes, { services: { authenticator, catalog, embeddings, text } });
  await app.register(compatRoutes, { services: { accounts, apiKeys, authenticator, config, usage } });
  await app.register(adminRoutes, {
    services: { accounts, adminToken: services.adminToken, apiKeys, config, usage },
  });
}
