import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { DatabaseClock, serverTime } from './storage/database-clock.ts';
import { CreditLedger } from './billing/credit-ledger.ts';
import { UsageHistory } from './billing/usage-history.ts';
import {
  accountOfSessionsCounter,
  counterOfGeneration,
  effectiveRateLimits,
  KeyRateLimiter,
  RateLimitStore,
  sessionsCounterOf,
} from './billing/rate-limits.ts';
import { Catalog } from './catalog/catalog.ts';
import { RuntimeCatalog } from './catalog/runtime-catalog.ts';
import type { Environment } from './config/environment.ts';
import { loadConfigFile, type GatewayConfig } from './config/load-config.ts';
import { ConfigReloader } from './config/config-reload.ts';
import { resolveSecret } from './config/secret.ts';
import { newId } from './domain/ids.ts';
import type { GatewayServices } from './gateway/services.ts';
import { EmbeddingGeneration } from './gateway/embedding-generation.ts';
import { TextGeneration } from './gateway/text-generation.ts';
import { GenerationPipeline } from './gateway/generation-pipeline.ts';
import type { Resilience } from './gateway/upstream-dispatch.ts';
import { RemoteMediaFetcher } from './media/remote-media.ts';
import { WorkTracker } from './gateway/work-tracker.ts';
import type { AdapterRegistry } from './providers/provider-adapter.ts';
import { createAnthropicAdapter } from './providers/anthropic/anthropic-adapter.ts';
import { createArkAdapter } from './providers/ark/ark-adapter.ts';
import { createGeminiAdapter } from './providers/gemini/gemini-adapter.ts';
import { createOpenAiAdapter } from './providers/openai/openai-adapter.ts';
import { sandboxAdapter } from './providers/sandbox/sandbox-adapter.ts';
import { createSpeechAdapter } from './providers/speech/speech-adapter.ts';
import { UpstreamHttp } from './providers/shared/upstream-http.ts';
import { AccountService } from './identity/account-service.ts';
import { ApiKeyService } from './identity/api-key-service.ts';
import { AuditTrail } from './identity/audit-trail.ts';
import { Authenticator } from './identity/authenticator.ts';
import { deriveSecretKeys } from './identity/secret-keys.ts';
import { GatewaySecret } from './identity/gateway-secret.ts';
import { AccountsRepository } from './storage/accounts-repository.ts';
import { AuditLogRepository } from './storage/audit-log-repository.ts';
import { ApiKeysRepository } from './storage/api-keys-repository.ts';
import { openStorage, type Storage, type StorageOptions } from './storage/database.ts';
import type { StorageEvent } from './storage/storage-events.ts';
import { LedgerRepository } from './storage/ledger-repository.ts';
import { SessionsRepository } from './storage/sessions-repository.ts';
import { SecretVerifierRepository } from './storage/secret-verifier-repository.ts';
import { UsageRepository } from './storage/usage-repository.ts';
import { RuntimeCatalogRepository } from './storage/runtime-catalog-repository.ts';
import { MediaJobsRepository } from './storage/media-jobs-repository.ts';
import { openObjectStore } from './storage/open-object-store.ts';
import { FsObjectStore } from './storage/fs-object-store.ts';
import { MediaDownloads } from './gateway/media-downloads.ts';
import { queuedJobRows } from './gateway/media-rows.ts';
import { ProviderBreakers } from './gateway/provider-breakers.ts';
import { ProviderRowConsole } from './gateway/provider-row-console.ts';
import { RowHealth } from './gateway/row-health.ts';
import { OperatorAccounts } from './identity/operator-accounts.ts';
import { UsageSearch } from './billing/usage-search.ts';
import { AccountSearchRepository } from './storage/account-search-repository.ts';
import { UsageSearchRepository } from './storage/usage-search-repository.ts';
import { RowLatencies } from './gateway/row-routing.ts';
import { UpstreamKeys } from './gateway/upstream-keys.ts';
import { ProviderKeyService } from './gateway/provider-key-service.ts';
import { ProviderKeysRepository } from './storage/provider-keys-repository.ts';
import { GatewayTelemetry } from './telemetry/gateway-telemetry.ts';
import { MediaLibrary } from './gateway/media-library.ts';
import { ImageRequests } from './gateway/image-requests.ts';
import type { ObjectStore } from './storage/object-store.ts';
import { ImageGeneration } from './gateway/image-generation.ts';
import { JobSubmission } from './gateway/job-submission.ts';
import { SpeechGeneration } from './gateway/speech-generation.ts';
import { SpeechJobRunner } from './jobs/speech-job-runner.ts';
import { VideoJobRunner } from './jobs/video-job-runner.ts';
import { VideoGeneration } from './gateway/video-generation.ts';
import { VoiceCatalog } from './catalog/voices.ts';
import { ImageJobRunner } from './jobs/image-job-runner.ts';
import { JobWaiters } from './jobs/job-waiters.ts';
import { JobWorker } from './jobs/job-worker.ts';
import { MediaLinks } from './jobs/media-links.ts';
import { MediaRetention } from './jobs/media-retention.ts';
import { withSafeErrorLogging } from './storage/logged-errors.ts';
import { WebhookService } from './gateway/webhook-endpoints.ts';
import { WebhookDeliveryWorker } from './jobs/webhook-deliveries.ts';
import { WebhookSender } from './jobs/webhook-sender.ts';
import { WebhooksRepository } from './storage/webhooks-repository.ts';

/** One line per provider family: the adapters this build knows, sharing one upstream HTTP client. */
function providerAdapters(http: UpstreamHttp): AdapterRegistry {
  return new Map(
    [
      sandboxAdapter,
      createOpenAiAdapter(http),
      createAnthropicAdapter(http),
      createGeminiAdapter(http),
      createArkAdapter(http),
      createSpeechAdapter(http),
    ].map((adapter) => [adapter.protocol, adapter]),
  );
}

export interface CoreOptions {
  environment: Environment;
  /** Defaults to the file named by GATEWAY_CONFIG. */
  config?: GatewayConfig;
  /** Defaults to DATABASE_URL, or the embedded PostgreSQL server under DATA_DIR. */
  storage?: StorageOptions;
  logger: Logger;
  /**
   * `gateway secret adopt` only: the start does not compare GATEWAY_SECRET with the database's (the command then
   * makes it the database's). Every other start refuses a secret that is not the database's.
   */
  adoptingSecret?: boolean;
}

export interface Core {
  services: GatewayServices;
  /** Generations whose holds are not settled yet. */
  work: WorkTracker;
  /** The repositories the server's background upkeep (hold reconciliation, session expiry, readiness) works on. */
  upkeep: { ledger: LedgerRepository; sessions: SessionsRepository; mediaJobs: MediaJobsRepository };
  storage: Storage;
  /** Runs media jobs once started (the server starts it; the CLI does not). */
  worker: JobWorker;
  /** Sends webhook deliveries once started (the server starts it; the CLI does not). */
  webhookWorker: WebhookDeliveryWorker;
  /** Deletes archived media past its retention once started. */
  retention: MediaRetention;
  store: ObjectStore;
  instanceId: string;
  /** Ends every upstream exchange under way (a stop past its grace): each generation settles what it delivered. */
  cutUpstreams(): Promise<void>;
  /** The database's record of GATEWAY_SECRET, compared at the start (and replaced by `gateway secret adopt`). */
  gatewaySecret: GatewaySecret;
  close(): Promise<void>;
}

export function storageOptionsFor(environment: Environment, logger: Logger): StorageOptions {
  if (environment.databaseUrl) {
    return {
      kind: 'postgres',
      url: environment.databaseUrl,
      onError: (error) => logger.error({ err: error }, 'database connection error'),
    };
  }
  return {
    kind: 'embedded',
    dataDir: environment.dataDir,
    onError: (error) => logger.error({ err: error }, 'embedded database error'),
    onLog: (message, level) => logger[level](message),
  };
}

/** How often archived media past its retention is looked for. */
const retentionSweepMs = 10 * 60 * 1000;

/** How long the start waits for the rate limits' Redis connection. */
const redisConnectWaitMs = 2_000;

/** How long a request refused for credit that other processes lease waits for them to give it back, once. */
const peerGiveBackWaitMs = 100;

/** Configuration, storage and every service, without HTTP: what both the server and the CLI stand on. */
export async function openCore(options: CoreOptions): Promise<Core> {
  const { environment } = options;
  // Storage errors are logged without the values they carry, whoever built the logger.
  const logger = withSafeErrorLogging(options.logger);
  const loaded = options.config ?? loadConfigFile(environment.configPath, environment.variables);
  // One map of providers for every service, refilled in place by a reload and when runtime keys change (they make
  // a provider gateway.yaml gives no key active): rows already picked keep their settings.
  let fileProviders = loaded.providers;
  const providers = new Map(loaded.providers);
  const config: GatewayConfig = { ...loaded, providers };
  const secretKeys = deriveSecretKeys(resolveSecret(environment));
  const storage = await openStorage(options.storage ?? storageOptionsFor(environment, logger));
  // Before anything is read or written with the secret: a process with another one refuses to start.
  const gatewaySecret = new GatewaySecret({ repository: new SecretVerifierRepository(storage.db), secretKeys });
  if (!options.adoptingSecret) {
    try {
      await gatewaySecret.check();
    } catch (error) {
      await storage.close().catch(() => undefined);
      throw error;
    }
  }
  const instanceId = newId('inst');
  const accountsRepository = new AccountsRepository(storage.db);
  const apiKeysRepository = new ApiKeysRepository(storage.db);
  const sessionsRepository = new SessionsRepository(storage.db);
  const ledgerRepository = new LedgerRepository(storage);
  const authenticator = new Authenticator({
    secretKeys,
    apiKeys: apiKeysRepository,
    sessions: sessionsRepository,
    eventsArrive: () => storage.listening(),
  });
  const catalog = new Catalog(config);
  // gateway.yaml's models with the operator's runtime overrides, each price with its version, before serving.
  const runtimeCatalog = new RuntimeCatalog({
    repository: new RuntimeCatalogRepository(storage.db),
    catalog,
    fileModels: config.models,
    providers,
    announce: () => storage.publish({ type: 'catalog-changed' }),
    logger,
  });
  await runtimeCatalog.refresh();
  const voices = new VoiceCatalog(config.voices, (modelId) => catalog.find(modelId) !== undefined);
  const telemetry = new GatewayTelemetry(logger);
  const limiterStore = new RateLimitStore({
    redisUrl: environment.redisUrl,
    redisFailure: config.rateLimits.redisFailure,
    keyPrefix: config.rateLimits.redisKeyPrefix,
    onOutage: (error) =>
      logger.warn(
        { err: error, redisFailure: config.rateLimits.redisFailure },
        `Redis for rate limits unreachable: requests are ${config.rateLimits.redisFailure === 'open' ? 'admitted without rate limits' : 'refused with 503'} until it answers`,
      ),
    onRecovery: () => logger.info('Redis for rate limits answers again'),
  });
  // Settlements count tokens whichever process admitted their request: a key's limits are read where unknown.
  const rateLimits = new KeyRateLimiter(limiterStore, async (counterId) => {
    const sessionsOf = accountOfSessionsCounter(counterId);
    if (sessionsOf !== undefined) return (await accountsRepository.findById(sessionsOf)) ?? null;
    const row = await apiKeysRepository.findCredentialById(counterId);
    return row ? effectiveRateLimits(row, row.accountRateLimits) : null;
  });
  // A Redis that does not answer within this is an outage from the start (rateLimits.redisFailure applies).
  await limiterStore.ready(redisConnectWaitMs);
  const breakers = new ProviderBreakers(
    {
      failures: config.upstream.breakerFailures,
      minAccounts: config.upstream.breakerMinAccounts,
      cooldownMs: config.upstream.breakerCooldownMs,
    },
    (row, state) => telemetry.breakerChanged(row, state),
  );
  const rowHealth = new RowHealth();
  const upstreamKeys = new UpstreamKeys(providers);
  /** The map of providers as requests use them: gateway.yaml's, each with what its runtime keys make of it. */
  const refillProviders = () => {
    providers.clear();
    for (const [id, provider] of fileProviders) providers.set(id, upstreamKeys.served(provider));
    upstreamKeys.replaceProviders(providers);
  };
  const providerKeysRepository = new ProviderKeysRepository(storage.db);
  const providerKeys = new ProviderKeyService({
    repository: providerKeysRepository,
    keys: upstreamKeys,
    breakers,
    secretKeys,
    providers,
    publish: (event) => storage.publish(event),
    onUnreadable: (keyId, error) =>
      logger.error({ err: error, keyId }, 'a stored provider key cannot be opened with this GATEWAY_SECRET: left out'),
    onRead: () => {
      refillProviders();
      runtimeCatalog.providersChanged();
    },
  });
  const readProviderKeys = () =>
    providerKeys
      .reload()
      .catch((error: Error) => logger.error({ err: error }, "could not read the providers' runtime keys"));
  await readProviderKeys();
  const latencies = new RowLatencies();
  const resilience: Resilience = {
    breakers,
    keys: upstreamKeys,
    latencies,
    health: rowHealth,
    events: telemetry,
    retryBudgetMs: config.upstream.retryBudgetMs,
    maxRetries: config.upstream.maxRetries,
    traced: config.telemetry.otlpEndpoint !== undefined,
  };
  // Processes sharing the database date holds, records, jobs and deliveries by the database's clock
  // (database-clock.ts): spend windows and the claims' `now()` then agree across processes.
  const sharedClock = storage.soleOwner ? undefined : new DatabaseClock(() => serverTime(storage.db));
  const clocked = sharedClock ? { clock: () => sharedClock.now() } : {};
  await sharedClock?.sync();
  const clockSync =
    sharedClock &&
    setInterval(
      () =>
        void sharedClock
          .sync()
          .catch((error: unknown) => logger.warn({ err: error }, 'could not read the database clock')),
      config.ledger.heartbeatSeconds * 1000,
    );
  clockSync?.unref();
  const ledger = new CreditLedger(ledgerRepository, instanceId, {
    ...clocked,
    leases: {
      maxLeaseNanos: config.ledger.leaseMaxNanos,
      idleMs: config.ledger.leaseIdleMs,
      // Processes sharing the database hear the request through LISTEN/NOTIFY and give back within milliseconds.
      ...(!storage.soleOwner
        ? {
            askPeers: (accountId: string) =>
              storage.publish({ type: 'give-back-credit', accountId }).then(() => sleep(peerGiveBackWaitMs)),
          }
        : {}),
    },
    settlementWaitMs: config.ledger.settlementWaitMs,
    reportFailure: (error, reservation) =>
      logger.error(
        { err: error, holdId: reservation.id },
        'storage refused to settle or release a hold for good: its credit was given back uncharged (a lease gives it back when it closes)',
      ),
    reportRefusedWrite: (error, next) =>
      logger.error(
        { err: error, next },
        'storage refused to settle or release a hold for now: its hold is kept, and the write is sent again',
      ),
    reportLeaseFailure: (error) =>
      logger.error(
        { err: error },
        'storage refused to give back leased credit; it stays held until this process stops',
      ),
    // A request's record is announced here for the process's figures; the request's line carries its fields.
    onRecorded: (generation) => {
      telemetry.generationCounted(generation);
      rateLimits.chargeUsage(counterOfGeneration(generation), generation.usage);
    },
  });
  const waiters = new JobWaiters();
  let worker: JobWorker | undefined;
  const forget = (event: StorageEvent) => {
    authenticator.handleEvent(event);
    ledger.handleEvent(event);
    if (event.type === 'key-changed') rateLimits.forgetKey(event.keyId);
    else if (event.type === 'account-changed') rateLimits.forgetKey(sessionsCounterOf(event.accountId));
    // After a lost LISTEN connection (`*`) too: changes announced meanwhile were missed.
    if (event.type === 'provider-keys-changed' || (event.type === 'key-changed' && event.keyId === '*'))
      void readProviderKeys();
    if (event.type === 'job-finished') waiters.finished(event.jobId);
    else if (event.type === 'jobs-queued') worker?.wake();
    // After events may have been lost (the listener reconnected, `*`), the catalog is read again too.
    if (event.type === 'catalog-changed' || (event.type === 'key-changed' && event.keyId === '*'))
      runtimeCatalog.refreshSoon();
  };
  const unsubscribe = storage.subscribe(forget);
  // This process forgets at once; the storage event then reaches the others (and echoes back here, harmlessly).
  const events: Pick<Storage, 'publish'> = {
    publish: async (event) => {
      forget(event);
      await storage.publish(event);
    },
  };
  const work = new WorkTracker();
  const upstreamHttp = new UpstreamHttp(config.upstream.maxConnectionsPerOrigin);
  const remoteMedia = new RemoteMediaFetcher(config.remoteMedia);
  // Jobs' reference URLs meet the rules of the URLs embeddings fetch, before anything is held.
  const checkReferenceUrl = (url: string) => remoteMedia.check(url);
  // Provider outputs come from the providers the operator configured, so their addresses are not filtered.
  const outputDownloads = new RemoteMediaFetcher({
    timeoutMs: config.media.downloadTimeoutMs,
    maxBytes: config.media.maxDownloadBytes,
    allowPrivateAddresses: true,
  });
  const adapters = providerAdapters(upstreamHttp);
  const retentionMs = config.media.retentionDays > 0 ? config.media.retentionDays * 86_400_000 : undefined;
  const store = await openObjectStore({
    media: config.media,
    dataDir: environment.dataDir,
    linkKey: secretKeys.mediaLinks,
  });
  const mediaDownloads = new MediaDownloads(store instanceof FsObjectStore ? store : undefined, secretKeys.mediaLinks);
  const mediaJobs = new MediaJobsRepository(storage.db);
  const announceFinished = (jobId: string) => {
    events
      .publish({ type: 'job-finished', jobId })
      .catch((error: Error) => logger.error({ err: error, jobId }, 'could not announce a finished job'));
  };
  worker = new JobWorker({
    ...clocked,
    jobs: mediaJobs,
    store,
    maxDurationOverrun: config.limits.maxDurationOverrun,
    runners: {
      image: new ImageJobRunner({
        adapters,
        providers: config.providers,
        store,
        downloadOutput: (url, signal) => outputDownloads.fetch(url, { abort: signal }),
        fetchInput: (url, signal) => remoteMedia.fetch(url, { abort: signal }),
        retentionMs,
      }),
      audio: new SpeechJobRunner({
        adapters,
        providers: config.providers,
        store,
        downloadOutput: (url, signal) => outputDownloads.fetch(url, { abort: signal }),
        retentionMs,
        maxOutputBytes: config.media.maxDownloadBytes,
      }),
      video: new VideoJobRunner({
        adapters,
        providers: config.providers,
        store,
        downloadOutput: (url, credentials, signal) => outputDownloads.fetch(url, { credentials, abort: signal }),
        retentionMs,
        pollMs: config.jobs.taskPollMs,
      }),
    },
    providers: config.providers,
    resilience,
    rowsOf: (job) => queuedJobRows({ adapters, providers: config.providers }, catalog, job),
    owner: instanceId,
    config: config.jobs,
    onFinished: announceFinished,
    onRecorded: (generation) => {
      telemetry.generationRecorded(generation);
      rateLimits.chargeUsage(counterOfGeneration(generation), generation.usage);
    },
    onError: (error, jobId) =>
      logger.error({ err: error, jobId }, 'media job failed inside the gateway; its claim runs out and it is resumed'),
    onDiscardFailed: (error, jobId) =>
      logger.warn(
        { err: error, jobId },
        'the stored outputs of a media job that did not succeed could not be deleted; they stay in the object store',
      ),
  });
  const submission = new JobSubmission({
    ...clocked,
    jobs: mediaJobs,
    ledger,
    waiters,
    config: config.jobs,
    announce: () => {
      events
        .publish({ type: 'jobs-queued' })
        .catch((error: Error) => logger.error({ err: error }, 'could not announce queued jobs'));
    },
  });
  const pipeline = new GenerationPipeline({
    work,
    catalog,
    ledger,
    adapters,
    providers: config.providers,
    routing: { latencies, random: Math.random },
    resilience,
    submission,
    checkReferenceUrl,
  });
  const links = new MediaLinks(store, config.media.linkTtlSeconds, environment.configuredPublicBaseUrl);
  const retention = new MediaRetention({
    ...clocked,
    jobs: mediaJobs,
    store,
    intervalMs: retentionSweepMs,
    onError: (error) => logger.error({ err: error }, 'media retention sweep failed'),
    onDeleted: (count) => logger.info({ count }, 'deleted archived media past its retention'),
  });
  const images = new ImageGeneration({ pipeline, submission, links, store });
  const webhookSender = new WebhookSender({
    timeoutMs: config.webhooks.timeoutMs,
    allowPrivateAddresses: config.remoteMedia.allowPrivateAddresses,
  });
  const webhooksRepository = new WebhooksRepository(storage.db);
  let webhookWorker: WebhookDeliveryWorker | undefined;
  const webhooks = new WebhookService({
    repository: webhooksRepository,
    secretKeys,
    allowPrivateAddresses: config.remoteMedia.allowPrivateAddresses,
    checkAddress: checkReferenceUrl,
    wake: () => webhookWorker?.wake(),
  });
  webhookWorker = new WebhookDeliveryWorker({
    ...clocked,
    deliveries: webhooksRepository,
    send: (message) => webhookSender.send(message),
    secretOf: (sealed) => webhooks.secretOf(sealed),
    config: config.webhooks,
    owner: instanceId,
    // The error is logged without the delivery's content; a secret never reaches it.
    onError: (error, deliveryId) =>
      logger.error(
        { err: error, deliveryId },
        'webhook delivery failed inside the gateway; its claim runs out and it is sent again',
      ),
  });
  const configReloader = new ConfigReloader({
    // gateway.yaml's providers, not as runtime keys made them: a reload names what changed in the file.
    running: { ...config, providers: loaded.providers },
    read: () => loadConfigFile(environment.configPath, environment.variables),
    // The reloaded prices get their versions first: the first request charged at one names it.
    prepare: (reloaded) => runtimeCatalog.versionReloaded(reloaded.models),
    apply: (reloaded) => {
      fileProviders = reloaded.providers;
      refillProviders();
      runtimeCatalog.fileReloaded(reloaded.models);
      voices.replace(reloaded.voices);
      breakers.reconfigure({
        failures: reloaded.upstream.breakerFailures,
        minAccounts: reloaded.upstream.breakerMinAccounts,
        cooldownMs: reloaded.upstream.breakerCooldownMs,
      });
      resilience.retryBudgetMs = reloaded.upstream.retryBudgetMs;
      resilience.maxRetries = reloaded.upstream.maxRetries;
      services.config = { ...reloaded, providers };
    },
    logger,
  });
  const accountService = new AccountService({
    accounts: accountsRepository,
    sessions: sessionsRepository,
    storage: events,
    secretKeys,
    signupCreditsUsd: config.accounts.signupCreditsUsd,
    sessionTtlSeconds: config.accounts.sessionTtlSeconds,
  });
  const services: GatewayServices = {
    config,
    configReloader,
    catalog,
    runtimeCatalog,
    authenticator,
    accounts: accountService,
    operatorAccounts: new OperatorAccounts({
      search: new AccountSearchRepository(storage.db),
      accounts: accountService,
    }),
    usageSearch: new UsageSearch(new UsageSearchRepository(storage.db)),
    providerRows: new ProviderRowConsole({
      catalog,
      breakers,
      health: rowHealth,
      adapters,
      providers: config.providers,
      keys: upstreamKeys,
    }),
    apiKeys: new ApiKeyService({
      apiKeys: apiKeysRepository,
      accounts: accountsRepository,
      storage: events,
      secretKeys,
      maxKeysPerAccount: config.accounts.maxApiKeys,
    }),
    audit: new AuditTrail({
      log: new AuditLogRepository(storage.db),
      accounts: accountsRepository,
      apiKeys: apiKeysRepository,
      mediaJobs,
      models: runtimeCatalog,
      providerKeys: providerKeysRepository,
    }),
    providerKeys,
    ledger,
    usage: new UsageHistory(new UsageRepository(storage.db)),
    text: new TextGeneration(pipeline),
    embeddings: new EmbeddingGeneration(
      pipeline,
      (url, budget) => remoteMedia.fetch(url, { budget }),
      config.remoteMedia.maxRequestBytes,
    ),
    mediaDownloads,
    images,
    imageRequests: new ImageRequests({
      catalog,
      pipeline,
      jobs: images,
      sources: { downloadOutput: (url) => outputDownloads.fetch(url), checkReferenceUrl },
    }),
    mediaLibrary: new MediaLibrary({ jobs: mediaJobs, links }),
    speech: new SpeechGeneration({ pipeline, voices, submission, links }),
    video: new VideoGeneration({
      catalog,
      pipeline,
      submission,
      jobs: mediaJobs,
      links,
    }),
    voices,
    adminToken: environment.adminToken,
    rateLimits,
    limiterStore,
    telemetry,
    webhooks,
  };
  telemetry.observe({
    // Every reservation is counted by the work tracker from its start to its settlement.
    ledger: () => ({ reservations: work.size, ...ledger.leaseHoldings() }),
    holds: () => ledgerRepository.holdsByKind(),
    jobs: () => mediaJobs.queueDepth(),
    breakers: () => breakers.states(),
  });
  return {
    services,
    work,
    upkeep: { ledger: ledgerRepository, sessions: sessionsRepository, mediaJobs },
    storage,
    worker,
    webhookWorker,
    retention,
    store,
    instanceId,
    cutUpstreams: () => upstreamHttp.cut(),
    gatewaySecret,
    close: async () => {
      clearInterval(clockSync);
      unsubscribe();
      await retention.stop();
      await ledger.close().catch((error: Error) => logger.error({ err: error }, 'could not give back leased credit'));
      await upstreamHttp.close();
      await remoteMedia.close();
      await webhookSender.close();
      await outputDownloads.close();
      await store.close();
      await limiterStore.close();
      await storage.close();
    },
  };
}
