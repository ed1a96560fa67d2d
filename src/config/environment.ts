import path from 'node:path';
import { Secret } from '../domain/secret.ts';

/** Everything the gateway takes from its process environment; no other module reads `process.env`. */
export interface Environment {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /**
   * Redis for per-key rate-limit and sign-in counters shared by several processes; unset, they are kept in
   * memory. A `Secret`: the URL may carry a password, and is revealed only to the Redis client.
   */
  redisUrl: Secret | undefined;
  configPath: string;
  /** Credentials are `Secret`s from here on: revealed only where compared (the token) or derived from (the master secret). */
  adminToken: Secret | undefined;
  /** GATEWAY_SECRET; with DATABASE_URL, every command that uses it (all but `migrate` and `models list`) requires it. */
  secret: Secret | undefined;
  publicBaseUrl: string;
  /** PUBLIC_BASE_URL as the operator set it; without it, links are made on `http://HOST:PORT` (`publicBaseUrl`). */
  configuredPublicBaseUrl: string | undefined;
  logLevel: string;
  /** The whole environment, for `${VAR}` interpolation inside gateway.yaml. */
  variables: Readonly<Record<string, string | undefined>>;
}

export class EnvironmentError extends Error {}

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function readEnvironment(variables: Readonly<Record<string, string | undefined>>): Environment {
  const nonEmpty = (name: string): string | undefined => {
    const value = variables[name]?.trim();
    return value ? value : undefined;
  };
  const port = Number(nonEmpty('PORT') ?? '8080');
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new EnvironmentError(`PORT must be an integer 0-65535, got "${variables.PORT}"`);
  const host = nonEmpty('HOST') ?? '127.0.0.1';
  const logLevel = nonEmpty('LOG_LEVEL') ?? 'info';
  if (!logLevels.includes(logLevel))
    throw new EnvironmentError(`LOG_LEVEL must be one of ${logLevels.join(', ')}, got "${logLevel}"`);
  const databaseUrl = nonEmpty('DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new EnvironmentError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  const redisUrl = nonEmpty('REDIS_URL');
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl))
    throw new EnvironmentError('REDIS_URL must be a redis:// or rediss:// URL');
  const secret = nonEmpty('GATEWAY_SECRET');
  const adminToken = nonEmpty('GATEWAY_ADMIN_TOKEN');
  if (secret !== undefined && secret.length < 32)
    throw new EnvironmentError('GATEWAY_SECRET must be at least 32 characters');
  // Without it, DATABASE_URL is refused where the secret is used (resolveSecret): `migrate` does not use it.
  return {
    port,
    host,
    dataDir: path.resolve(nonEmpty('DATA_DIR') ?? './data'),
    databaseUrl,
    redisUrl: redisUrl === undefined ? undefined : new Secret(redisUrl),
    configPath: path.resolve(nonEmpty('GATEWAY_CONFIG') ?? './gateway.yaml'),
    adminToken: adminToken === undefined ? undefined : new Secret(adminToken),
    secret: secret === undefined ? undefined : new Secret(secret),
    configuredPublicBaseUrl: nonEmpty('PUBLIC_BASE_URL')?.replace(/\/+$/, ''),
    publicBaseUrl: (nonEmpty('PUBLIC_BASE_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(
      /\/+$/,
      '',
    ),
    logLevel,
    variables,
  };
}
