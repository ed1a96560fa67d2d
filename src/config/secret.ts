import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Secret } from '../domain/secret.ts';
import { EnvironmentError, type Environment } from './environment.ts';

/**
 * The master secret: from GATEWAY_SECRET, or in embedded mode generated once into DATA_DIR so that
 * stored keys stay decryptable across restarts. With DATABASE_URL it must be given: processes sharing the
 * database must share it, and one generated into a process's own DATA_DIR would be that process's alone.
 */
export function resolveSecret(environment: Environment): Secret {
  if (environment.secret) return environment.secret;
  if (environment.databaseUrl)
    throw new EnvironmentError('GATEWAY_SECRET is required when DATABASE_URL is set (every process must share it)');
  const file = path.join(environment.dataDir, 'gateway-secret');
  try {
    return new Secret(readFileSync(file, 'utf8').trim());
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(environment.dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return new Secret(secret);
  } catch (error) {
    // Another process created it first; use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return new Secret(readFileSync(file, 'utf8').trim());
    throw error;
  }
}
