/**
 * Media jobs survive a SIGKILL of their gateway process on the embedded default (test/support/job-crash.ts). The
 * processes open a data directory of their own whichever server the run has, so this file is not in the database
 * suite (with TEST_DATABASE_URL it would repeat the embedded run).
 */
import { describeJobCrash } from '../support/job-crash.ts';

describeJobCrash('embedded');
