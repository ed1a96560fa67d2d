import type pg from 'pg';
import { serverErrorOf } from './logged-errors.ts';

/**
 * Time limits of the gateway's database sessions, set by each session's first statement (`set_config`, not a
 * startup parameter: a pooler such as PgBouncer refuses a connection whose startup packet carries one it does
 * not track).
 */
export interface SessionLimits {
  /**
   * How long the server lets a session sit idle inside a transaction before it ends the session, rolling the
   * transaction back. A process frozen in the middle of one (stopped, paused, cut off without a FIN or RST)
   * would otherwise hold the rows it locked for as long as its connection lives: every process's settlements
   * touching the account would wait behind them, and with them every settlement batched alongside. Our
   * transactions send their statements back to back, so none comes near it.
   */
  idleInTransactionTimeoutMs: number;
  /** How long one statement waits for a lock before the server cancels it (0: for as long as the lock lasts). */
  lockTimeoutMs: number;
  /** How long one statement runs, lock waits included, before the server cancels it (0: without limit). */
  statementTimeoutMs: number;
  /**
   * How often the server checks, while a statement runs or waits, that the client is still connected, and ends
   * the session when it is not (PostgreSQL 14 and later; absent: only when it next writes to the client).
   */
  clientCheckIntervalMs?: number;
}

/**
 * The pool's sessions: every request's statements, and the background work that runs beside requests on the
 * same rows (job claims, webhook deliveries, the orphaned-hold sweep, retention sweeps).
 *
 * - A lock is waited for 5 s. Our own transactions hold a row for milliseconds (a settlement batch, a lease
 *   extension), so a longer wait means a session that does not let go: an operator's transaction left open, a
 *   long statement of another program. Without a bound, the request waits for as long as that lasts, and so
 *   does every settlement of this process queued behind it (one settlement statement runs at a time). The
 *   background work gets the same bound on purpose: a sweep waiting on one locked row keeps the rows it has
 *   already locked from the requests that need them.
 * - A statement runs for 30 s at most: far past the slowest statement of a request (a page of a usage search)
 *   and of a sweep (each deletes a bounded batch), and well before a client gives up.
 *
 * A statement cut short is rolled back with its transaction, so nothing of it is kept: the request answers 503
 * (`statementCutShort`), a settlement is sent again (it finds its own record if it had been written), a sweep
 * waits for its next turn.
 */
export const poolSessionLimits: SessionLimits = {
  idleInTransactionTimeoutMs: 10_000,
  lockTimeoutMs: 5_000,
  statementTimeoutMs: 30_000,
};

/**
 * The migrations' session: it waits for the migration lock as long as another process's migrations run, and a
 * migration rewriting a large table may run for minutes; cut short, it would be rolled back and the process
 * would fail to start each time it tried. It has no lock or statement limit (0 here overrides a default the
 * role or the database may carry). It holds the migration lock, so it must not outlive its process: the
 * idle-in-transaction limit ends it when the process froze in the middle of a migration, and the client check
 * when the process died while its statement ran or waited on a lock (the server would otherwise notice only
 * once the statement ended, keeping the lock from the next process until then).
 */
export const migrationSessionLimits: SessionLimits = {
  idleInTransactionTimeoutMs: poolSessionLimits.idleInTransactionTimeoutMs,
  lockTimeoutMs: 0,
  statementTimeoutMs: 0,
  clientCheckIntervalMs: 1_000,
};

/** Applies the limits to a session: its first statement. */
export async function limitSession(client: pg.ClientBase, limits: SessionLimits): Promise<void> {
  const milliseconds = (value: number) => String(Math.max(0, Math.trunc(value)));
  await client.query(
    `SELECT set_config('idle_in_transaction_session_timeout', $1, false),
            set_config('lock_timeout', $2, false),
            set_config('statement_timeout', $3, false)`,
    [
      milliseconds(limits.idleInTransactionTimeoutMs),
      milliseconds(limits.lockTimeoutMs),
      milliseconds(limits.statementTimeoutMs),
    ],
  );
  if (limits.clientCheckIntervalMs === undefined) return;
  // An older server does not know the setting, and would refuse the statement.
  await client.query(
    `SELECT set_config('client_connection_check_interval', $1, false)
      WHERE current_setting('server_version_num')::int >= 140000`,
    [milliseconds(limits.clientCheckIntervalMs)],
  );
}

/**
 * SQLSTATEs of a statement the server cancelled: 55P03 (lock_not_available: `lock_timeout`) and 57014
 * (query_canceled: `statement_timeout`, or an operator's `pg_cancel_backend`).
 */
const cancelledStatement = new Set(['55P03', '57014']);

/** Whether the server cancelled the statement (a time limit, an operator): it was rolled back, nothing kept. */
export function statementCutShort(error: unknown): boolean {
  const code = serverErrorOf(error)?.code;
  return code !== undefined && cancelledStatement.has(code);
}
