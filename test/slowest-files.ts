/**
 * The test files that took longest in a full run on the embedded default (2-core machine), slowest
 * first, with the seconds one worker spent on each. Vitest orders files by the durations of its previous run and,
 * lacking them (a fresh `npm ci`, as in CI's first `npm test`), by size, larger first: these files are short
 * (job-crash-safety.test.ts is 8 lines) and then started last, each holding the run's end while the other
 * workers had finished. vitest.config.ts starts them first, slowest first, when any file lacks a duration of
 * vitest's own. An out-of-date order costs only time; a file named here that does not exist stops the run.
 */
export const slowestFiles = [
  'test/integration/cli-accounts.test.ts', // 104 s
  'test/integration/cli.test.ts', // 92
  'test/integration/cli-input.test.ts', // 86
  'test/integration/docs.test.ts', // 63
  'test/integration/multi-process-caps.test.ts', // 62
  'test/integration/gateway-secret.test.ts', // 56
  'test/integration/orphaned-holds.test.ts', // 54
  'test/integration/npm-start.test.ts', // 49
  'test/integration/secret-grep.test.ts', // 41
  'test/integration/embedded-database.test.ts', // 41
  'test/integration/job-crash-safety.test.ts', // 39
  'test/integration/ledger-races.test.ts', // 38
  'test/integration/stop-past-grace.test.ts', // 33
  'test/integration/multi-process.test.ts', // 32
  'test/integration/fuzz-routes.test.ts', // 28
  'test/integration/job-crash-safety-embedded.test.ts', // 27
  'test/integration/orphaned-holds-embedded.test.ts', // 23
  'test/integration/rate-limits.test.ts', // 22
  'test/integration/audit-coverage.test.ts', // 20
  'test/integration/image-jobs.test.ts', // 19
];
