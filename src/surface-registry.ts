import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from './gateway/services.ts';
import { accountRoutes } from './surfaces/account/account-routes.ts';
import { authRoutes } from './surfaces/account/auth-routes.ts';
import { adminRoutes } from './surfaces/admin/admin-routes.ts';
import { catalogRoutes } from './surfaces/admin/catalog-routes.ts';
import { providerKeyRoutes } from './surfaces/admin/provider-key-routes.ts';
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
import { operatorRoutes } from './surfaces/operator/operator-routes.ts';

/**
 * One line per surface plugin, registered under its route prefix: each is handed the services it uses, and
 * only those. A new surface is one folder under surfaces/ and one line here.
 */
export async function registerSurfaces(
  app: FastifyInstance,
  services: GatewayServices,
  options: { secureCookies: boolean },
): Promise<void> {
  const { accounts, apiKeys, authenticator, catalog, config, ledger, usage, text, embeddings, images, video } =
    services;
  const { secureCookies } = options;
  await app.register(authRoutes, {
    prefix: '/api/v1',
    services: { accounts, authenticator, config, limiterStore: services.limiterStore },
    secureCookies,
  });
  await app.register(accountRoutes, {
    prefix: '/api/v1',
    services: {
      accounts,
      apiKeys,
      audit: services.audit,
      authenticator,
      catalog,
      config,
      ledger,
      usage,
      mediaLibrary: services.mediaLibrary,
      webhooks: services.webhooks,
    },
    secureCookies,
  });
  await app.register(nativeModelsRoutes, { prefix: '/api/v1', services: { authenticator, catalog } });
  await app.register(nativeTextRoutes, { prefix: '/api/v1', services: { authenticator, text } });
  await app.register(nativeImageRoutes, { prefix: '/api/v1', services: { authenticator, config, images } });
  await app.register(mediaFilesRoutes, { prefix: '/api/v1', services: { mediaDownloads: services.mediaDownloads } });
  await app.register(nativeAudioRoutes, {
    prefix: '/api/v1',
    services: { authenticator, speech: services.speech, voices: services.voices },
  });
  await app.register(nativeVideoRoutes, { prefix: '/api/v1', services: { authenticator, video } });
  await app.register(alphaRoutes, {
    prefix: '/api/alpha',
    services: { authenticator, catalog, config, embeddings, imageRequests: services.imageRequests, images, text },
  });
  await app.register(alphaVideoRoutes, {
    prefix: '/api/alpha',
    services: { authenticator, config, mediaDownloads: services.mediaDownloads, video },
  });
  await app.register(betaRoutes, { prefix: '/api/beta', services: { authenticator, catalog, embeddings, text } });
  await app.register(gammaRoutes, { prefix: '/api/gamma', services: { authenticator, catalog, embeddings, text } });
  await app.register(compatRoutes, {
    prefix: '/api/compat',
    services: { accounts, apiKeys, authenticator, config, ledger, usage },
  });
  await app.register(operatorRoutes, {
    prefix: '/api/operator',
    services: {
      apiKeys,
      audit: services.audit,
      authenticator,
      config,
      ledger,
      operatorAccounts: services.operatorAccounts,
      providerRows: services.providerRows,
      runtimeCatalog: services.runtimeCatalog,
      usageSearch: services.usageSearch,
    },
    secureCookies,
  });
  await app.register(adminRoutes, {
    prefix: '/api/admin',
    services: {
      accounts,
      adminToken: services.adminToken,
      apiKeys,
      audit: services.audit,
      config,
      configReloader: services.configReloader,
      ledger,
      usage,
    },
  });
  await app.register(catalogRoutes, {
    prefix: '/api/admin',
    services: { adminToken: services.adminToken, config, runtimeCatalog: services.runtimeCatalog },
  });
  await app.register(providerKeyRoutes, {
    prefix: '/api/admin',
    services: { adminToken: services.adminToken, providerKeys: services.providerKeys },
  });
}
