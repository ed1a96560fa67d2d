import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { databaseSuite } from './test/database-suite.ts';
import { slowestFiles } from './test/slowest-files.ts';

// A file named in the database suite that does not exist would silently leave its claims untested on PostgreSQL.
const missing = databaseSuite.filter((file) => !existsSync(path.join(import.meta.dirname, file)));
if (missing.length > 0) throw new Error(`test/database-suite.ts names files that do not exist: ${missing.join(', ')}`);
const gone = slowestFiles.filter((file) => !existsSync(path.join(import.meta.dirname, file)));
if (gone.length > 0) throw new Error(`test/slowest-files.ts names files that do not exist: ${gone.join(', ')}`);

/**
 * Vitest's order (by its previous run's durations, else by size), but the files of test/slowest-files.ts first,
 * slowest first, when any file has no duration of vitest's own: started last, a short file that runs long held
 * the run's end while the other workers were done.
 */
class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const fileOf = (spec: TestSpecification) => path.relative(this.ctx.config.root, spec.moduleId);
    const timed = sorted.every((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${fileOf(spec)}`));
    if (timed) return sorted;
    const rank = (spec: TestSpecification) => {
      const index = slowestFiles.indexOf(fileOf(spec));
      return index < 0 ? slowestFiles.length : index;
    };
    // Array.prototype.sort is stable: the other files keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    // With TEST_DATABASE_URL only the files whose claims depend on the server run (the rest ran on the embedded one).
    include: process.env.TEST_DATABASE_URL ? databaseSuite : ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Each worker imports the gateway and the clients' SDKs once for all the files it runs, not once per file:
    // isolated, importing took over a third of the run's worker time. Test files therefore share module state:
    // none mocks a module (a spy on a prototype works in any order) and each undoes what it changes globally.
    isolate: false,
    // Vitest's default, one file fewer than cores, runs one file at a time on the 2-core CI machine, and most
    // test time is spent waiting (on gateway processes, the database server, fake upstreams' delays): the CPUs
    // were idle about half the time. One file more than cores keeps them busy; four at most, as each file holds
    // pools of up to 30 connections on the run's server (300 slots).
    maxWorkers: Math.min(availableParallelism() + 1, 4),
    sequence: { sequencer: SlowestFirst },
    testTimeout: 60_000,
    // expect.poll waits for what another process does (a page's navigation after a sign-up's scrypt, a gateway's
    // log line). Vitest's default of one second is shorter than that takes on a loaded 2-core machine: a CI run
    // here failed the browser test's sign-up at one second. Polling ends as soon as the check holds, so a
    // longer limit costs only a failing test's time.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    // When a Gemini stream ends in an error, @google/generative-ai (under LangChain's ChatGoogleGenerativeAI)
    // rejects the stream its caller reads and also an internal promise of the whole answer that nobody awaits.
    // The client matrix's stream-cut cells cut streams on purpose and check the first; the second is the
    // library's own loose end, not a defect of the gateway or of the tests.
    onUnhandledError: (error) => !error.message?.startsWith('[GoogleGenerativeAI Error]: Failed to parse stream'),
  },
});
