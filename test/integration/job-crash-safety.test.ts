/**
 * Media jobs survive a SIGKILL of their gateway process on the run's PostgreSQL server, and two gateway processes
 * on one database drain 200 queued jobs, each run exactly once (test/support/job-crash.ts). The same crash on the
 * embedded default is job-crash-safety-embedded.test.ts.
 */
import { describeJobCrash } from '../support/job-crash.ts';

describeJobCrash('postgres');
