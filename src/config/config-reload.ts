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

  constructor(private readonly options: ConfigReloaderOptions) {
    this.running = options.running;
  }

  reload(trigger: ReloadTrigger): ReloadOutcome {
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
}

/** The running configuration with the reloadable parts of the new one. */
function reloadedConfig(running: GatewayConfig, next: GatewayConfig): GatewayConfig {
  const upstream = { ...running.upstream };
  for (const name of reloadableUpstreamSettings) upstream[name] = next.upstream[name];
  return { ...running, providers: next.providers, models: next.models, voices: next.voices, upstream };
}
