import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, onRouteHookHandler } from 'fastify';
import { HoldReconciler } from './billing/hold-reconciler.ts';
import type { Environment } from './config/environment.ts';
import { buildApp } from './http/app.ts';
import { listensBeyondLoopback } from './http/base-url.ts';
import { pingDatabase } from './storage/database-probe.ts';
import { Readiness } from './gateway/readiness.ts';
import { startTracing, type Tracing } from './telemetry/tracing.ts';
import { withSafeErrorLogging } from './storage/logged-errors.ts';
import { openCore, type Core, type CoreOptions } from './core.ts';
import { registerSurfaces } from './surface-registry.ts';
import { createLogger } from './telemetry/logger.ts';
import { RequestLine } from './telemetry/request-line.ts';

/** How long generations cut at a stop past its grace have to settle: each settlement is one write. */
const settleAfterCutMs = 10_000;

/** The logger, for the benchmark harness, which loads the compiled entry point of this and of other checkouts. */
export { createLogger } from './telemetry/logger.ts';

const sessionPurgeIntervalMs = 60 * 60 * 1000;
/** A readiness check (database, object store) that has not answered in this long fails. */
const readinessCheckTimeoutMs = 2_000;

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
    resendRefusedWrites: () => core.services.ledger.resendRefusedWrites(),
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
    core.webhookWorker.start();
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
      surfaces: (instance) =>
        registerSurfaces(instance, core.services, {
          secureCookies: options.environment.publicBaseUrl.startsWith('https:'),
        }),
      ...(options.onRoute ? { onRoute: options.onRoute } : {}),
      ...(tracing ? { tracingPlugin: tracing.plugin } : {}),
    });
  } catch (error) {
    clearInterval(sessionPurge);
    await core.worker.stop(0);
    await core.webhookWorker.stop(0);
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
        if (core.work.size > 0) {
          // Past the grace, what still reads its upstream is cut, and settles (charged what it delivered) while
          // storage and leased credit are still here.
          logger.warn(
            { generations: core.work.size },
            'generations still under way past server.shutdownGraceMs: their upstreams are cut, and each is charged what it delivered',
          );
          await core.cutUpstreams();
          await core.work.idle(settleAfterCutMs);
        }
        // The lines of records whose answers were cut are not kept waiting for answers that will not finish.
        RequestLine.writeWaiting();
        // Jobs under way finish within the grace period; the rest are resumed by the next process.
        await core.worker.stop(Math.max(0, deadline - Date.now()));
        await core.webhookWorker.stop(Math.max(0, deadline - Date.now()));
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
  // The filesystem store serves download links only from this process's own DATA_DIR/media: a process sharing the
  // database but not that directory finds no file for a link to media another process archived (404).
  if (options.environment.databaseUrl && core.store.kind === 'fs') {
    logger.warn(
      { mediaStore: 'fs', mediaDir: path.join(options.environment.dataDir, 'media') },
      "media.store is fs with DATABASE_URL: media is archived under this process's DATA_DIR/media and download links are served from it, so every process sharing the database must share that directory (one DATA_DIR, or one file system mounted at each DATA_DIR/media), or links to media another process archived answer 404; processes on several machines use media.store: s3",
    );
  }
  if (!options.environment.configuredPublicBaseUrl && listensBeyondLoopback(options.environment.host)) {
    logger.warn(
      { host: options.environment.host, publicBaseUrl: options.environment.publicBaseUrl },
      'PUBLIC_BASE_URL is not set and the gateway listens beyond loopback: download and polling links are made on HOST:PORT, which clients may not reach; set PUBLIC_BASE_URL to the address clients call',
    );
  }
  return { app, core, readiness, close };
}

/** `gateway serve`: listen, reload gateway.yaml on SIGHUP, and stop gracefully on SIGTERM or SIGINT. */
export async function serve(environment: Environment): Promise<RunningGateway> {
  const logger = createLogger(environment);
  // SIGHUP's default action ends the process: it is taken from the start, and only reloads while serving (a
  // signal meant for a reload must not cut a start-up short, nor the requests a graceful stop is finishing).
  let reload: (() => void) | undefined;
  process.on('SIGHUP', () => {
    if (reload) reload();
    else logger.warn('SIGHUP ignored: the gateway is starting or stopping, not serving');
  });
  const gateway = await createGateway({ environment, logger });
  const address = await gateway.app.listen({ port: environment.port, host: environment.host });
  logger.info(
    { address, storage: gateway.core.storage.kind, config: gateway.core.services.config.sourcePath },
    'gateway listening',
  );
  // Each process reloads on its own signal: with several processes, the operator signals every one.
  reload = () => {
    const { configReloader, audit } = gateway.core.services;
    configReloader.reload('SIGHUP').then(
      (outcome) => {
        if (!outcome.applied) return;
        // The operator's change, as the admin route's reload is: kept as its diff, without address or request id.
        audit
          .recordChange({
            actor: () => ({ kind: 'operator' }),
            action: 'config.reload',
            subject: { type: 'config', id: null },
            before: null,
            after: { state: { configDiff: { ...outcome.diff } }, accountId: null },
            request: { trigger: 'SIGHUP' },
            clientAddress: null,
            requestId: null,
          })
          .catch((error: unknown) =>
            logger.error({ err: error }, 'the audit log could not record a configuration reload'),
          );
      },
      // A reload is never worth the process: it goes on serving, and the error is the operator's to read.
      (error: unknown) => logger.error({ err: error }, 'configuration reload failed'),
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      reload = undefined;
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
