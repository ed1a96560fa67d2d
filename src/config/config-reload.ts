import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { type ConfigDiff, diffConfig, reloadableUpstreamSettings } from './config-diff.ts';
import { ConfigError, type GatewayConfig } from './load-config.ts';

/** What asked for the reload: the process's SIGHUP, or the admin API. */
export type ReloadTrigger = 'SIGHUP' | 'admin';

export type ReloadOutcome = { applied: true; diff: ConfigDiff } | { applied: false; problems: readonly string[] };

export interface ConfigReloaderOptions {
  running: GatewayConfig;
  /** Reads and validates gateway.yaml as the start does; throws a `ConfigError` naming every problem. */
  read: () => GatewayConfig;
  /**
   * Readies what the reloaded configuration needs before it serves (its prices' versions), while the running one
   * still serves. A failure, or no answer within `prepareWaitMs`, is logged and the reload goes on without it.
   */
  prepare?: (config: GatewayConfig) => Promise<void>;
  /** How long a reload waits for `prepare` (default 5 s): storage that does not answer never holds a reload up. */
  prepareWaitMs?: number;
  /** Puts the reloaded configuration in place for new requests, in one synchronous step. */
  apply: (config: GatewayConfig) => void;
  logger: Logger;
}

/**
 * Reloads gateway.yaml in this process: a file that passes the start's checks replaces the catalog, prices,
 * providers, voices and the upstream's breaker and retry settings for the requests that start from then on;
 * the other settings keep their running value and are named as needing a restart. A file that fails changes
 * nothing. Requests under way keep the model, rows and prices they resolved.
 */
export class ConfigReloader {
  private running: GatewayConfig;
  /** The reload under way: reloads run one after another, so an older file never lands over a newer one. */
  private underWay: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ConfigReloaderOptions) {
    this.running = options.running;
  }

  /** Reloads once the reload under way has ended; answers once the file serves (or was refused). */
  reload(trigger: ReloadTrigger): Promise<ReloadOutcome> {
    const reloaded = this.underWay.then(() => this.reloadNow(trigger));
    this.underWay = reloaded.catch(() => undefined);
    return reloaded;
  }

  private async reloadNow(trigger: ReloadTrigger): Promise<ReloadOutcome> {
    const { logger } = this.options;
    let next: GatewayConfig;
    try {
      next = this.options.read();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      logger.warn({ trigger, problems: error.problems }, 'configuration reload refused: nothing changed');
      return { applied: false, problems: error.problems };
    }
    const diff = diffConfig(this.running, next);
    const applied = reloadedConfig(this.running, next);
    await this.prepared(applied, trigger);
    this.options.apply(applied);
    this.running = applied;
    logger.info({ trigger, diff }, 'configuration reloaded');
    if (diff.needsRestart.length > 0)
      logger.warn(
        { trigger, needsRestart: diff.needsRestart },
        'configuration settings changed that apply only after a restart: they keep their running values',
      );
    return { applied: true, diff };
  }

  /** `prepare` of the reloaded configuration, waited for at most `prepareWaitMs`; its failure is only logged. */
  private async prepared(config: GatewayConfig, trigger: ReloadTrigger): Promise<void> {
    const { prepare, prepareWaitMs = defaultPrepareWaitMs, logger } = this.options;
    if (!prepare) return;
    const timer = new AbortController();
    const ready = prepare(config).then(
      () => true,
      (error: unknown) => {
        logger.error({ err: error, trigger }, 'could not ready the reloaded configuration; it serves without it');
        return true;
      },
    );
    const waited = sleep(prepareWaitMs, false, { signal: timer.signal }).catch(() => false);
    if (!(await Promise.race([ready, waited])))
      logger.error(
        { trigger, waitedMs: prepareWaitMs },
        'the reloaded configuration was not ready in time; it serves without it',
      );
    timer.abort();
  }
}

/** How long a reload waits for its preparation by default. */
const defaultPrepareWaitMs = 5_000;

/** The running configuration with the reloadable parts of the new one. */
function reloadedConfig(running: GatewayConfig, next: GatewayConfig): GatewayConfig {
  const upstream = { ...running.upstream };
  for (const name of reloadableUpstreamSettings) upstream[name] = next.upstream[name];
  return { ...running, providers: next.providers, models: next.models, voices: next.voices, upstream };
}
