import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { StorageOptions } from '../../src/storage/database.ts';

export interface TestDatabase {
  options: StorageOptions;
  /** The database's connection URL. */
  url: string;
  drop(): Promise<void>;
}

/** True when the run goes against the PostgreSQL server of TEST_DATABASE_URL rather than its own embedded one. */
export const onExternalServer = Boolean(process.env.TEST_DATABASE_URL);

/** The server test databases are made on: TEST_DATABASE_URL, or the embedded server the run started (test/support/global-setup.ts). */
export function testServerUrl(): string {
  return process.env.TEST_DATABASE_URL || inject('embeddedServerUrl');
}

/** `url` with its database name replaced (TCP and Unix-socket URLs alike). */
export function withDatabase(url: string, name: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^/?]*\/)([^?]*)/, `$1${name}`);
}

/**
 * A fresh, empty database for one test file, created here on the run's server and dropped by `drop()`;
 * the server's other databases are never touched.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = testServerUrl();
  const name = `gw_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(serverUrl, name);
  return {
    options: { kind: 'postgres', url, poolSize: 30 },
    url,
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
