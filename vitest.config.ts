import { existsSync } from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { databaseSuite } from './test/database-suite.ts';

// A file named in the database suite that does not exist would silently leave its claims untested on PostgreSQL.
const missing = databaseSuite.filter((file) => !existsSync(path.join(import.meta.dirname, file)));
if (missing.length > 0) throw new Error(`test/database-suite.ts names files that do not exist: ${missing.join(', ')}`);

export default defineConfig({
  test: {
    // With TEST_DATABASE_URL only the files whose claims depend on the server run (the rest ran on the embedded one).
    include: process.env.TEST_DATABASE_URL ? databaseSuite : ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
