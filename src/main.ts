import { openSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, onRouteHookHandler } from 'fastify';
import pino, { type Logger } from 'pino';
import { CreditLedger } from './billing/credit-ledger.ts';
import { HoldReconciler } from './billing/hold-reconciler.ts';
import { UsageHistory } from './billing/usage-history.ts';
import { effectiveRateLimits, KeyRateLimiter, RateLimitStore } from './billing/rate-limits.ts';
import { Catalog } from './catalog/catalog.ts';
import type { Environment } from './config/environment.ts';
import { loadConfigFile, type GatewayConfig } from './config/load-config.ts';
import { resolveSecret } from './config/secret.ts';
import { newId } from './domain/ids.ts';
import type { GatewayServices } from './gateway/services.ts';
import { EmbeddingGeneration } from './gateway/embedding-generation.ts';
import { TextGeneration, type GenerationDependencies } from './gateway/text-generation.ts';
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
import { buildApp } from './http/app.ts';
import { listensBeyondLoopback } from './http/base-url.ts';
import { AccountService } from './identity/account-service.ts';
import { ApiKeyService } from './identity/api-key-service.ts';
import { Authenticator } from './identity/authenticator.ts';
import { deriveSecretKeys } from './identity/secret-keys.ts';
import { AccountsRepository } from './storage/accounts-repository.ts';
import { ApiKeysRepository } from './storage/api-keys-repository.ts';
import { openStorage, type Storage, type StorageEvent, type StorageOptions } from './storage/database.ts';
import { LedgerRepository } from './storage/ledger-repository.ts';
import { SessionsRepository } from './storage/sessions-repository.ts';
import { UsageRepository } from './storage/usage-repository.ts';
import { MediaJobsRepository } from './storage/media-jobs-repository.ts';
import { pingDatabase } from './storage/database-probe.ts';
import { Readiness } from './gateway/readiness.ts';
import { openObjectStore } from './storage/open-object-store.ts';
import { FsObjectStore } from './storage/fs-object-store.ts';
import { MediaDownloads } from './gateway/media-downloads.ts';
import { ProviderBreakers } from './gateway/provider-breakers.ts';
import { GatewayTelemetry } from './telemetry/gateway-telemetry.ts';
import { startTracing, type Tracing } from './telemetry/tracing.ts';
import { MediaLibrary } from './gateway/media-library.ts';
import { ImageRelay } from './gateway/image-relay.ts';
import { ImageStreaming } from './gateway/image-streaming.ts';
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
  /** Deletes archived media past its retention once started. */
  retention: MediaRetention;
  store: ObjectStore;
  instanceId: string;
  close(): Promise<void>;
}

/** sonic-boom in its `buffer` content mode, which its types do not describe: it takes bytes where they say text. */
interface ByteDestination {
  write(chunk: Buffer): boolean;
}

/** What any line that logs a request (`{req}`) keeps of it; the request lines themselves are written by the app. */
interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
}

/**
 * Log lines are written in batches of at least this many bytes. Each write handed to libuv's thread pool cost
 * the server 50-90 µs of CPU on a 2-core machine, whatever its size: at 4 KiB batches that was more than
 * building the lines.
 */
const logBatchBytes = 64 * 1024;
/** What is buffered is written at least this often, so a quiet gateway's lines do not wait for a batch to fill. */
const logFlushIntervalMs = 1000;
/**
 * Most a log buffer holds while its reader does not keep up (a stuck pipe, a full disk): lines past it are
 * dropped and counted, rather than the process's memory growing without bound.
 */
export const maxLogBufferBytes = 16 * 1024 * 1024;

/**
 * Fields pino censors as `[redacted]` on every line: a second line of defence behind `Secret` (which already
 * prints as `[redacted]`), for credentials that reach a line as plain strings: a client's headers, a token or a
 * password in an object someone logs whole. Paths only one level under the line (fast-redact's wildcards).
 */
export const redactedLogPaths = [
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'password',
  '*.password',
  'secret',
  '*.secret',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["x-goog-api-key"]',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  '*.headers["x-goog-api-key"]',
  '*.headers.cookie',
  '*.headers["set-cookie"]',
];

/**
 * pino JSON lines on `destination` (stdout, or a file path), written asynchronously in batches. What is
 * buffered is written on exit (pino flushes its destinations then), and within a second otherwise; a process
 * killed outright (SIGKILL) loses at most that second's lines, never a usage record (those are in the database).
 * Lines a reader too slow leaves no room for are dropped; the next line that fits says how many.
 */
export function createLogger(environment: Environment, destination: number | string = 1): Logger {
  // A file is opened here rather than by pino, so that lines logged before it would have opened are still written on an early exit.
  const stream = pino.destination({
    dest: typeof destination === 'string' ? openSync(destination, 'a') : destination,
    sync: false,
    minLength: logBatchBytes,
    maxWrite: 4 * logBatchBytes,
    maxLength: maxLogBufferBytes,
    periodicFlush: logFlushIntervalMs,
    // Lines kept as bytes: in its text mode sonic-boom measures the whole pending batch on every line and encodes each batch twice.
    contentMode: 'buffer',
  });
  const batches = stream as unknown as ByteDestination;
  // Bytes taken and not yet written: sonic-boom calls a flush done once less than a batch is left, so a flush
  // that must write everything asks again until nothing is left.
  let pendingBytes = 0;
  stream.on('write', (written: number) => {
    pendingBytes -= written;
  });
  stream.on('drop', (line: Buffer) => {
    pendingBytes -= line.length;
  });
  const flushAll = (done: (error?: Error) => void): void => {
    if (pendingBytes <= 0) return done();
    stream.flush((error) => (error ? done(error) : flushAll(done)));
  };
  const lines = {
    write: (line: string) => {
      const bytes = Buffer.from(line);
      pendingBytes += bytes.length;
      return batches.write(bytes);
    },
    flush: flushAll,
  };
  const logger = pino(
    {
      level: environment.logLevel,
      redact: { paths: redactedLogPaths, censor: '[redacted]' },
      // Method and path only: no headers, and no query string, where a client may have put a credential (`?key=`).
      serializers: {
        req: (request: LoggedRequest) => ({
          method: request.method,
          path: request.url?.split('?')[0],
          host: request.host,
          remoteAddress: request.ip,
        }),
      },
    },
    lines,
  );
  outlastWriteErrors(stream);
  let dropped = 0;
  stream.on('drop', () => {
    dropped += 1;
  });
  stream.on('drain', () => {
    if (dropped === 0) return;
    const count = dropped;
    dropped = 0;
    logger.error({ droppedLines: count }, 'log lines dropped: the log reader did not keep up');
  });
  return logger;
}

/**
 * A destination that refuses writes (a full disk, an I/O error) neither stops the gateway nor keeps it from
 * exiting: its lines wait in the bounded buffer and are written once it takes writes again, or dropped. Left
 * alone, sonic-boom emits the error with no listener (the process crashed) and its flush on exit retries a
 * failing write forever (the process never ended), so that flush is skipped while writes fail. The failure is
 * said once on stderr, as the log itself cannot take it.
 */
function outlastWriteErrors(stream: ReturnType<typeof pino.destination>): void {
  const flushOnExit = stream.flushSync;
  let failing = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    stream.flushSync = () => undefined;
    if (failing) return;
    failing = true;
    try {
      writeSync(
        2,
        `the log destination refuses writes (${error.code ?? error.message}): its lines wait in memory up to ${maxLogBufferBytes} bytes, then are dropped\n`,
      );
    } catch {
      // stderr refuses too: nothing is left to tell.
    }
  });
  stream.on('write', () => {
    if (!failing) return;
    failing = false;
    stream.flushSync = flushOnExit;
  });
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

/** How long the start waits for the rate limits' Redis connection. */
const redisConnectWaitMs = 2_000;

/** How long a request refused for credit that other processes lease waits for them to give it back, once. */
const peerGiveBackWaitMs = 100;

/** Configuration, storage and every service, without HTTP: what both the server and the CLI stand on. */
export async function openCore(options: CoreOptions): Promise<Core> {
  const { environment } = options;
  // Storage errors are logged without the values they carry, whoever built the logger.
  const logger = withSafeErrorLogging(options.logger);
  const config = options.config ?? loadConfigFile(environment.configPath, environment.variables);
  const secretKeys = deriveSecretKeys(resolveSecret(environment));
  const storage = await openStorage(options.storage ?? storageOptionsFor(environment, logger));
  const instanceId = newId('inst');
  const accountsRepository = new AccountsRepository(storage.db);
  const apiKeysRepository = new ApiKeysRepository(storage.db);
  const sessionsRepository = new SessionsRepository(storage.db);
  const ledgerRepository = new LedgerRepository(storage);
  const authenticator = new Authenticator(secretKeys, apiKeysRepository, sessionsRepository, () => storage.listening());
  const catalog = new Catalog(config);
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
  const rateLimits = new KeyRateLimiter(limiterStore, async (keyId) => {
    const row = await apiKeysRepository.findCredentialById(keyId);
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
  const resilience: Resilience = {
    breakers,
    events: telemetry,
    retryBudgetMs: config.upstream.retryBudgetMs,
    maxRetries: config.upstream.maxRetries,
    traced: config.telemetry.otlpEndpoint !== undefined,
  };
  const ledger = new CreditLedger(ledgerRepository, instanceId, {
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
    reportFailure: (error, reservation) =>
      logger.error(
        { err: error, holdId: reservation.id },
        'storage refused to settle or release a hold (a settlement that failed has its credit given back where storage allows)',
      ),
    reportLeaseFailure: (error) =>
      logger.error(
        { err: error },
        'storage refused to give back leased credit; it stays held until this process stops',
      ),
    onRecorded: (generation, requestLog) => {
      telemetry.generationRecorded(generation, requestLog);
      rateLimits.chargeUsage(generation.apiKeyId, generation.usage);
    },
  });
  const waiters = new JobWaiters();
  let worker: JobWorker | undefined;
  const forget = (event: StorageEvent) => {
    authenticator.handleEvent(event);
    ledger.handleEvent(event);
    if (event.type === 'key-changed') rateLimits.forgetKey(event.keyId);
    if (event.type === 'job-finished') waiters.finished(event.jobId);
    else if (event.type === 'jobs-queued') worker?.wake();
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
  const generation: GenerationDependencies = {
    work,
    catalog,
    ledger,
    adapters,
    providers: config.providers,
    resilience,
  };
  const retentionMs = config.media.retentionDays > 0 ? config.media.retentionDays * 86_400_000 : undefined;
  const store = openObjectStore({ media: config.media, dataDir: environment.dataDir, linkKey: secretKeys.mediaLinks });
  const mediaDownloads = new MediaDownloads(store instanceof FsObjectStore ? store : undefined, secretKeys.mediaLinks);
  const mediaJobs = new MediaJobsRepository(storage.db);
  const announceFinished = (jobId: string) => {
    events
      .publish({ type: 'job-finished', jobId })
      .catch((error: Error) => logger.error({ err: error, jobId }, 'could not announce a finished job'));
  };
  worker = new JobWorker({
    jobs: mediaJobs,
    runners: {
      image: new ImageJobRunner({
        adapters,
        providers: config.providers,
        store,
        downloadOutput: (url, signal) => outputDownloads.fetch(url, undefined, undefined, signal),
        fetchInput: (url, signal) => remoteMedia.fetch(url, undefined, undefined, signal),
        retentionMs,
      }),
      audio: new SpeechJobRunner({
        adapters,
        providers: config.providers,
        store,
        downloadOutput: (url, signal) => outputDownloads.fetch(url, undefined, undefined, signal),
        retentionMs,
      }),
      video: new VideoJobRunner({
        adapters,
        providers: config.providers,
        store,
        downloadOutput: (url, credentials, signal) => outputDownloads.fetch(url, undefined, credentials, signal),
        retentionMs,
        pollMs: config.jobs.taskPollMs,
      }),
    },
    providers: config.providers,
    owner: instanceId,
    config: config.jobs,
    onFinished: announceFinished,
    onRecorded: (generation) => {
      telemetry.generationRecorded(generation);
      rateLimits.chargeUsage(generation.apiKeyId, generation.usage);
    },
    onError: (error, jobId) =>
      logger.error({ err: error, jobId }, 'media job failed inside the gateway; its claim runs out and it is resumed'),
  });
  const submission = new JobSubmission({
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
  const links = new MediaLinks(store, config.media.linkTtlSeconds, environment.configuredPublicBaseUrl);
  const retention = new MediaRetention({
    jobs: mediaJobs,
    store,
    intervalMs: retentionSweepMs,
    onError: (error) => logger.error({ err: error }, 'media retention sweep failed'),
    onDeleted: (count) => logger.info({ count }, 'deleted archived media past its retention'),
  });
  const services: GatewayServices = {
    config,
    catalog,
    authenticator,
    accounts: new AccountService({
      accounts: accountsRepository,
      sessions: sessionsRepository,
      storage: events,
      secretKeys,
      signupCreditsUsd: config.accounts.signupCreditsUsd,
      sessionTtlSeconds: config.accounts.sessionTtlSeconds,
    }),
    apiKeys: new ApiKeyService({
      apiKeys: apiKeysRepository,
      accounts: accountsRepository,
      storage: events,
      secretKeys,
      maxKeysPerAccount: config.accounts.maxApiKeys,
    }),
    ledger,
    usage: new UsageHistory(new UsageRepository(storage.db)),
    text: new TextGeneration(generation),
    embeddings: new EmbeddingGeneration(
      generation,
      (url, budget) => remoteMedia.fetch(url, budget),
      config.remoteMedia.maxRequestBytes,
    ),
    mediaDownloads,
    mediaLibrary: new MediaLibrary({ jobs: mediaJobs, links }),
    imageRelay: new ImageRelay({ catalog, adapters, providers: config.providers, ledger, work, resilience }),
    imageStreaming: new ImageStreaming({
      catalog,
      adapters,
      providers: config.providers,
      ledger,
      work,
      downloadOutput: (url) => outputDownloads.fetch(url),
      checkReferenceUrl,
    }),
    images: new ImageGeneration({ catalog, adapters, submission, links, store, checkReferenceUrl }),
    speech: new SpeechGeneration({ catalog, voices, adapters, submission, links }),
    video: new VideoGeneration({
      catalog,
      adapters,
      submission,
      jobs: mediaJobs,
      links,
      checkReferenceUrl,
      balanceNanos: async (accountId) => (await accountsRepository.findById(accountId))?.balanceNanos,
    }),
    voices,
    adminToken: environment.adminToken,
    rateLimits,
    limiterStore,
    telemetry,
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
    retention,
    store,
    instanceId,
    close: async () => {
      unsubscribe();
      await retention.stop();
      await ledger.close().catch((error: Error) => logger.error({ err: error }, 'could not give back leased credit'));
      await upstreamHttp.close();
      await remoteMedia.close();
      await outputDownloads.close();
      await store.close();
      await limiterStore.close();
      await storage.close();
    },
  };
}

const sessionPurgeIntervalMs = 60 * 60 * 1000;
/** A readiness check (database, object store) that has not answered in this long fails. */
const readinessCheckTimeoutMs = 2_000;
const retentionSweepMs = 10 * 60 * 1000;

export interface RunningGateway {
  app: FastifyInstance;
  core: Core;
  /** What `/readyz` answers: starting until the server listens, draining once close() is called. */
  readiness: Readiness;
  /** Reports draining (for `server.drainDelayMs`), stops accepting, lets in-flight requests finish within the grace period, then closes storage. */
  close(): Promise<void>;
}

export interface GatewayOptions extends CoreOptions {
  /** The built dashboard the app serves at `/`; defaults to web/dist of this package. */
  dashboardDir?: string;
  /** Sees every route of the app as it is registered (the OpenAPI coverage test lists them with it). */
  onRoute?: onRouteHookHandler;
}

/** The composition root: core services, hold reconciliation and the HTTP app (not yet listening). */
export async function createGateway(options: GatewayOptions): Promise<RunningGateway> {
  // Storage errors are logged without the values they carry, the app's request lines included.
  const logger = withSafeErrorLogging(options.logger);
  const core = await openCore({ ...options, logger });
  const config = core.services.config;
  const reconciler = new HoldReconciler({
    ledger: core.upkeep.ledger,
    instanceId: core.instanceId,
    heartbeatSeconds: config.ledger.heartbeatSeconds,
    orphanHoldSeconds: config.ledger.orphanHoldSeconds,
    soleOwner: core.storage.soleOwner,
    onError: (error) => logger.error({ err: error }, 'hold reconciliation failed'),
    onReleased: (count) =>
      logger.warn({ count }, 'released holds left by a gateway process that stopped without settling them'),
  });
  const readiness = new Readiness({
    pingDatabase: () => pingDatabase(core.storage.db),
    checkObjectStore: () => core.store.check(),
    queueDepth: () => core.upkeep.mediaJobs.queueDepth(),
    worker: core.worker,
    concurrency: config.jobs.concurrency,
    timeoutMs: readinessCheckTimeoutMs,
    onCheckFailed: (check, error) =>
      logger.warn({ err: error, check }, 'readiness check failing: /readyz answers 503 until it passes'),
  });
  let sessionPurge: NodeJS.Timeout | undefined;
  let app: FastifyInstance;
  let tracing: Tracing | undefined;
  try {
    await reconciler.start();
    core.worker.start();
    core.retention.start();
    sessionPurge = setInterval(() => {
      core.upkeep.sessions
        .deleteExpired(new Date())
        .catch((error: Error) => logger.error({ err: error }, 'expired session purge failed'));
    }, sessionPurgeIntervalMs).unref();
    tracing = await startTracing(config.telemetry);
    app = await buildApp({
      services: core.services,
      logger,
      secureCookies: options.environment.publicBaseUrl.startsWith('https:'),
      publicBaseUrl: options.environment.publicBaseUrl,
      dashboardDir: options.dashboardDir,
      readiness,
      ...(options.onRoute ? { onRoute: options.onRoute } : {}),
      ...(tracing ? { tracingPlugin: tracing.plugin } : {}),
    });
  } catch (error) {
    clearInterval(sessionPurge);
    await core.worker.stop(0);
    await reconciler.stop().catch(() => undefined);
    await tracing?.shutdown().catch(() => undefined);
    await core.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      readiness.draining();
      // The server still serves while /readyz answers 503, so load balancers that probe it stop sending
      // requests before it stops accepting them.
      if (config.server.drainDelayMs > 0) await sleep(config.server.drainDelayMs);
      const deadline = Date.now() + config.server.shutdownGraceMs;
      const grace = setTimeout(() => app.server.closeAllConnections(), config.server.shutdownGraceMs);
      try {
        await app.close();
        // Streams whose client left may still be reading the upstream to bill it: let them settle.
        await core.work.idle(Math.max(0, deadline - Date.now()));
        // Jobs under way finish within the grace period; the rest are resumed by the next process.
        await core.worker.stop(Math.max(0, deadline - Date.now()));
      } finally {
        clearTimeout(grace);
        clearInterval(sessionPurge);
        // Leased credit goes back while this process is still known to be alive, before it deregisters.
        await core.services.ledger
          .close()
          .catch((error: Error) => logger.error({ err: error }, 'could not give back leased credit'));
        await reconciler
          .stop()
          .catch((error: Error) => logger.error({ err: error }, 'could not deregister this process'));
        await tracing
          ?.shutdown()
          .catch((error: Error) => logger.error({ err: error }, 'could not send the last traces'));
        await core.close();
      }
    })();
    return closing;
  };
  if (!options.environment.configuredPublicBaseUrl && listensBeyondLoopback(options.environment.host)) {
    logger.warn(
      { host: options.environment.host, publicBaseUrl: options.environment.publicBaseUrl },
      'PUBLIC_BASE_URL is not set and the gateway listens beyond loopback: download and polling links are made on HOST:PORT, which clients may not reach; set PUBLIC_BASE_URL to the address clients call',
    );
  }
  return { app, core, readiness, close };
}

/** `gateway serve`: listen, and stop gracefully on SIGTERM or SIGINT. */
export async function serve(environment: Environment): Promise<RunningGateway> {
  const logger = createLogger(environment);
  const gateway = await createGateway({ environment, logger });
  const address = await gateway.app.listen({ port: environment.port, host: environment.host });
  logger.info(
    { address, storage: gateway.core.storage.kind, config: gateway.core.services.config.sourcePath },
    'gateway listening',
  );
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'shutting down: finishing in-flight requests');
      gateway.close().then(
        () => process.exit(0),
        (error: Error) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  return gateway;
}
