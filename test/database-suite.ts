/**
 * The test files whose claims depend on the PostgreSQL server itself: the ledger's SQL functions and their
 * races, transactions across processes, LISTEN/NOTIFY, connection loss, migrations, and the job queue's claims.
 * They run on both servers (the embedded default and TEST_DATABASE_URL); every other file runs once, on the
 * embedded default, as its claims hold whichever server stores the data (vitest.config.ts).
 */
export const databaseSuite = [
  'test/integration/account-api.test.ts',
  'test/integration/admin-api.test.ts',
  'test/integration/audio.test.ts',
  'test/integration/audit-log.test.ts',
  'test/integration/cli.test.ts',
  'test/integration/compat.test.ts',
  'test/integration/credit-leases.test.ts',
  'test/integration/dashboard-api.test.ts',
  'test/integration/disconnect-billing.test.ts',
  'test/integration/image-jobs.test.ts',
  'test/integration/image-money.test.ts',
  'test/integration/job-crash-safety.test.ts',
  'test/integration/job-deadlines.test.ts',
  'test/integration/job-fallback.test.ts',
  'test/integration/ledger-functions.test.ts',
  'test/integration/ledger-races.test.ts',
  'test/integration/listener-probe.test.ts',
  'test/integration/lowered-cap-processes.test.ts',
  'test/integration/money-input.test.ts',
  'test/integration/money-invariants.test.ts',
  'test/integration/multi-process.test.ts',
  'test/integration/orphaned-holds.test.ts',
  'test/integration/price-versions.test.ts',
  'test/integration/provider-keys-processes.test.ts',
  'test/integration/rate-limits.test.ts',
  'test/integration/read-own-charges.test.ts',
  'test/integration/readiness.test.ts',
  'test/integration/revocation-without-listen.test.ts',
  'test/integration/runtime-catalog-processes.test.ts',
  'test/integration/runtime-catalog.test.ts',
  'test/integration/settlement-property.test.ts',
  'test/integration/unreadable-jobs.test.ts',
  'test/integration/unstorable-text.test.ts',
  'test/integration/video.test.ts',
  'test/integration/webhook-crash-safety.test.ts',
  'test/integration/webhooks.test.ts',
];
