/**
 * Holds of a gateway process killed with SIGKILL, on the embedded default: the next gateway to open the data
 * directory releases them at once (one process owns the directory), and the killed gateway's database server
 * has stopped by itself. Its gateways open data directories of their own whichever server the run has, so this
 * file is not in the database suite (with TEST_DATABASE_URL it would repeat the embedded run).
 */
import { describeKilledGatewayHolds } from '../support/killed-gateway-holds.ts';

describeKilledGatewayHolds({ setup: 'the embedded default', onPostgres: false });
