/**
 * What one request costs the database on the billing path, through the real ledger (src/billing/credit-ledger.ts
 * with its credit leases, src/storage/ledger-repository.ts and the SQL functions of the migrations): one gateway
 * process admits and settles the benchmark's chat completion (bench/capacity-support.ts) `--requests` times with
 * `--concurrency` requests in flight, in a database made for the run on the server of `TEST_DATABASE_URL` and
 * dropped after it. Per request: transactions and rows written (pg_stat_database of that database), WAL bytes
 * (the records of that database and of its transactions, read back with pg_walinspect, and the server's whole
 * WAL over the same span as an upper bound), the CPU of its database backends (/proc, when the server is on this
 * machine), and the lease statements. Each figure is the run's less a run of no requests (opening and closing
 * the storage), over the requests. A third part times the heartbeat each process sends every 15 s.
 * Keys are looked up once a minute per process (src/identity/authenticator.ts), so a request's own database
 * work is its credit: admission out of a lease in memory, and its settlement with its usage record.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm exec -- tsx bench/ledger-cost.ts
 *                     [--requests 4000] [--concurrency 1,32] [--heartbeats 200]
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { newId } from '../src/domain/ids.ts';
import { openStorage, type Storage } from '../src/storage/database.ts';
import { LedgerRepository } from '../src/storage/ledger-repository.ts';
import {
  chatHoldNanos,
  chatSettlement,
  fundedAccount,
  queryOnce,
  processLedger,
  scratchDatabase,
} from './capacity-support.ts';
import { ownCpuMs } from './processes.ts';

const { values: options } = parseArgs({
  options: {
    requests: { type: 'string', default: '4000' },
    concurrency: { type: 'string', default: '1,32' },
    heartbeats: { type: 'string', default: '200' },
  },
});
const serverUrl = process.env.TEST_DATABASE_URL;
if (!serverUrl)
  throw new Error('TEST_DATABASE_URL: the PostgreSQL server to measure on (a database is made there and dropped)');
const requests = Number(options.requests);
const concurrencies = options.concurrency.split(',').map(Number);
const heartbeats = Number(options.heartbeats);

/** Counters of the measured database, and the position up to which the server has flushed its WAL (what pg_walinspect can read). */
interface Counters {
  transactions: number;
  inserted: number;
  updated: number;
  deleted: number;
  lsn: string;
}

/** The figures of a phase that are counts. */
type Counted = Exclude<keyof PhaseCost, 'walKinds'>;

/** WAL records of one kind: resource manager, record type and the relfilenode of the first block it touches. */
interface WalKind {
  kind: string;
  records: number;
  bytes: number;
  fpi: number;
}

/** What one phase cost the database, and what it did. */
interface PhaseCost {
  transactions: number;
  inserted: number;
  updated: number;
  deleted: number;
  /** WAL records of the measured database and of its transactions (commits included): bytes, and full-page images among them. */
  walBytes: number;
  fpiBytes: number;
  walKinds: WalKind[];
  /** All WAL the server wrote meanwhile, whoever wrote it. */
  serverWalBytes: number;
  /** CPU of the database's backends (user + system), or NaN when their /proc is not readable here. */
  backendCpuMs: number;
  seconds: number;
  extensions: number;
  giveBacks: number;
}

const measured = await scratchDatabase(serverUrl, 'capacity');
// pg_walinspect lives in a database of its own, so reading the WAL counts nothing against the measured one.
const probeDatabase = await scratchDatabase(serverUrl, 'capacity_probe');
const probe = new pg.Client({ connectionString: probeDatabase.url });
try {
  await queryOnce(probeDatabase.url, 'CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  await probe.connect();
  const [database] = (
    await probe.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = $1', [measured.name])
  ).rows;
  const databaseOid = database!.oid;

  const setup = await open();
  const account = await fundedAccount(setup, 1_000_000);
  await setup.close();

  const lines = [
    `| in flight | requests | req/s (this run) | transactions / request | rows inserted / request | rows updated / request | rows deleted / request | WAL bytes / request | of which full-page images | server WAL bytes / request (upper bound) | database CPU ms / request | lease extensions | extensions / s |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const walByKind = new Map<number, WalKind[]>();
  for (const concurrency of concurrencies) {
    const idle = await phase({ count: 0, concurrency });
    const busy = await phase({ count: requests, concurrency });
    walByKind.set(concurrency, busy.walKinds);
    const per = (key: Counted, digits = 2) => ((busy[key] - idle[key]) / requests).toFixed(digits);
    lines.push(
      `| ${[
        concurrency,
        requests,
        (requests / busy.seconds).toFixed(0),
        per('transactions', 3),
        per('inserted'),
        per('updated'),
        per('deleted'),
        per('walBytes', 0),
        per('fpiBytes', 0),
        per('serverWalBytes', 0),
        per('backendCpuMs', 3),
        busy.extensions,
        (busy.extensions / busy.seconds).toFixed(1),
      ].join(' | ')} |`,
    );
    process.stderr.write(`${lines.at(-1)}\n`);
  }
  const heartbeatIdle = await heartbeatPhase(0);
  const heartbeatBusy = await heartbeatPhase(heartbeats);
  const perBeat = (key: Counted, digits = 1) =>
    ((heartbeatBusy[key] - heartbeatIdle[key]) / heartbeats).toFixed(digits);
  lines.push(
    '',
    `Heartbeat of one process (sent every ledger.heartbeatSeconds, 15 s by default; the sweep of dead processes' holds with it), over ${heartbeats}: ${perBeat('transactions')} transactions, ${perBeat('updated')} rows updated, ${perBeat('walBytes', 0)} WAL bytes each.`,
  );
  const relations = new Map(
    (
      await queryOnce<{ node: string; name: string }>(
        measured.url,
        'SELECT relfilenode::text AS node, relname AS name FROM pg_class WHERE relfilenode <> 0',
      )
    ).map((row) => [row.node, row.name]),
  );
  for (const [concurrency, kinds] of walByKind) {
    lines.push(
      '',
      `WAL of the run with ${concurrency} in flight by kind of record (the relation of its first block), per request:`,
      '',
      '| record | relation | records / request | bytes / request |',
      '|---|---|---|---|',
      ...kinds.slice(0, 12).map((kind) => {
        const [record, node] = kind.kind.split('|');
        return `| ${record} | ${relations.get(node ?? '') ?? (node ? `relfilenode ${node}` : '—')} | ${(kind.records / requests).toFixed(2)} | ${(kind.bytes / requests).toFixed(0)} |`;
      }),
    );
  }
  const [records] = await queryOnce<{ records: string; heap: string; total: string }>(
    measured.url,
    `SELECT count(*) AS records, pg_relation_size('generations') AS heap, pg_total_relation_size('generations') AS total FROM generations`,
  );
  const bytesPerRecord = (bytes: string) => (Number(bytes) / Number(records!.records)).toFixed(0);
  lines.push(
    '',
    `Usage records on disk: ${bytesPerRecord(records!.total)} bytes each with their indexes and TOAST (${bytesPerRecord(records!.heap)} in the table itself), over ${records!.records} records.`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);

  async function open(): Promise<Storage> {
    return openStorage({ kind: 'postgres', url: measured.url, poolSize: 10 });
  }

  async function counters(): Promise<Counters> {
    const [row] = (
      await probe.query<Counters>(
        `SELECT xact_commit + xact_rollback AS transactions, tup_inserted AS inserted, tup_updated AS updated,
                tup_deleted AS deleted, pg_current_wal_flush_lsn()::text AS lsn
           FROM pg_stat_database WHERE datname = $1`,
        [measured.name],
      )
    ).rows;
    return {
      transactions: Number(row!.transactions),
      inserted: Number(row!.inserted),
      updated: Number(row!.updated),
      deleted: Number(row!.deleted),
      lsn: row!.lsn,
    };
  }

  /**
   * The counters once they stop moving: a backend that has left pg_stat_activity may not have written its
   * statistics yet (on a busy machine, a while later).
   */
  async function settledCounters(): Promise<Counters> {
    let last = await counters();
    for (let reads = 0; reads < 40; reads++) {
      await sleep(500);
      const now = await counters();
      if (now.transactions === last.transactions && now.inserted === last.inserted && now.updated === last.updated)
        return now;
      last = now;
    }
    throw new Error('the statistics of the measured database did not settle within 20 s');
  }

  /** The CPU its backends have spent so far, read while they are connected. */
  async function backendCpuMs(): Promise<number> {
    const pids = (
      await probe.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [measured.name])
    ).rows.map((row) => row.pid);
    // A server on another machine (or in another PID namespace) has no /proc entries here.
    if (!pids.every((pid) => existsSync(`/proc/${pid}/stat`))) return Number.NaN;
    return pids.reduce((total, pid) => total + ownCpuMs(pid), 0);
  }

  /**
   * Opens the storage, runs `work` on it, reads its backends' CPU, closes it, and once its backends have gone
   * (a backend writes its statistics as it exits) answers what the database counted meanwhile.
   */
  async function measure(
    work: (storage: Storage) => Promise<{ extensions: number; giveBacks: number }>,
  ): Promise<PhaseCost> {
    const before = await settledCounters();
    const storage = await open();
    const started = process.hrtime.bigint();
    const done = await work(storage);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = await backendCpuMs();
    await storage.close();
    for (let waited = 0; waited < 100; waited++) {
      const [row] = (
        await probe.query<{ backends: string }>(
          'SELECT count(*) AS backends FROM pg_stat_activity WHERE datname = $1',
          [measured.name],
        )
      ).rows;
      if (Number(row!.backends) === 0) break;
      await sleep(100);
    }
    const after = await settledCounters();
    const wal = await walOfDatabase(before.lsn, after.lsn);
    const [server] = (
      await probe.query<{ bytes: string }>('SELECT pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn) AS bytes', [
        before.lsn,
        after.lsn,
      ])
    ).rows;
    return {
      transactions: after.transactions - before.transactions,
      inserted: after.inserted - before.inserted,
      updated: after.updated - before.updated,
      deleted: after.deleted - before.deleted,
      walBytes: wal.bytes,
      fpiBytes: wal.fpi,
      walKinds: wal.kinds,
      serverWalBytes: Number(server!.bytes),
      backendCpuMs: cpu,
      seconds,
      ...done,
    };
  }

  /**
   * WAL records between two positions that touch the measured database's relations, or belong to a transaction
   * that does, by kind of record (resource manager and record type, with the relation of its first block).
   */
  async function walOfDatabase(from: string, to: string): Promise<{ bytes: number; fpi: number; kinds: WalKind[] }> {
    // pg_walinspect refuses a start at the flushed end: nothing was written.
    if (from === to) return { bytes: 0, fpi: 0, kinds: [] };
    const kinds = (
      await probe.query<{ kind: string; records: string; bytes: string; fpi: string }>(
        `WITH records AS (SELECT xid, resource_manager, record_type, record_length, fpi_length, block_ref
                            FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)),
              ours AS (SELECT DISTINCT xid FROM records WHERE block_ref LIKE $3 AND xid <> '0'::xid)
         SELECT resource_manager || ' ' || record_type || '|' || COALESCE(substring(block_ref from '/([0-9]+) fork'), '') AS kind,
                count(*) AS records, sum(record_length) AS bytes, sum(fpi_length) AS fpi
           FROM records WHERE block_ref LIKE $3 OR xid IN (SELECT xid FROM ours)
          GROUP BY 1 ORDER BY sum(record_length) DESC`,
        [from, to, `%/${databaseOid}/%`],
      )
    ).rows.map((row) => ({
      kind: row.kind,
      records: Number(row.records),
      bytes: Number(row.bytes),
      fpi: Number(row.fpi),
    }));
    const total = (key: 'bytes' | 'fpi') => kinds.reduce((sum, kind) => sum + kind[key], 0);
    return { bytes: total('bytes'), fpi: total('fpi'), kinds };
  }

  /** `count` requests of the benchmark's chat completion, `concurrency` at a time, admitted and settled by one process. */
  function phase({ count, concurrency }: { count: number; concurrency: number }): Promise<PhaseCost> {
    return measure(async (storage) => {
      const { ledger, counts, failures } = processLedger(storage, { instanceId: newId('inst') });
      let next = 0;
      const worker = async () => {
        while (next < count) {
          next++;
          const reservation = await ledger.reserve({
            ...account,
            amountNanos: chatHoldNanos,
            modelId: 'bench-chat',
          });
          await reservation.settle(chatSettlement());
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      await ledger.close();
      if (failures.length > 0) throw new Error(`storage refused ledger work: ${String(failures[0])}`);
      return { extensions: counts.extensions, giveBacks: counts.giveBacks };
    });
  }

  /** `count` heartbeats with their sweeps, as the ledger's reconciler sends them. */
  function heartbeatPhase(count: number): Promise<PhaseCost> {
    return measure(async (storage) => {
      const repository = new LedgerRepository(storage);
      const instanceId = newId('inst');
      for (let beat = 0; beat < count; beat++) {
        await repository.heartbeat(instanceId);
        await repository.releaseOrphanedHolds(instanceId, 120);
      }
      return { extensions: 0, giveBacks: 0 };
    });
  }
} finally {
  await probe.end().catch(() => undefined);
  await measured.drop();
  await probeDatabase.drop();
}
