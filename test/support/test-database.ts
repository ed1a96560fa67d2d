import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { StorageOptions } from '../../src/storage/database.ts';

export interface TestDatabase {
  options: StorageOptions;
  /** The connection URL when the run is on PostgreSQL. */
  url: string | undefined;
  drop(): Promise<void>;
}

/** True when this run goes against the PostgreSQL of TEST_DATABASE_URL rather than embedded PGlite. */
export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

/**
 * A fresh, empty database for one test file: in-memory PGlite, or with TEST_DATABASE_URL a new database
 * on that server, created here and dropped by `drop()`; the server's other databases are never touched.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return { options: { kind: 'pglite-memory' }, url: undefined, drop: async () => undefined };
  const name = `gw_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    options: { kind: 'postgres', url: url.toString(), poolSize: 30 },
    url: url.toString(),
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
