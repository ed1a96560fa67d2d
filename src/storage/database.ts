import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle as drizzlePostgres } from 'drizzle-orm/node-postgres';
import { migrate as migratePostgres } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { SQL } from 'drizzle-orm';
import pg from 'pg';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import * as schema from './schema.ts';
import { checkedRows, StorageRowError, type PreparedStatement, type RowShape } from './checked-rows.ts';
import { acquireDataDirLock } from './data-dir-lock.ts';
import { startEmbeddedServer, type EmbeddedServer, type ServerLogLevel } from './embedded-server.ts';
import { importLegacyDatabase } from './legacy-import.ts';
import { ReturningPool } from './returning-pool.ts';
import { parseStorageEvent, type StorageEvent } from './storage-events.ts';
import { limitSession, migrationSessionLimits, poolSessionLimits, type SessionLimits } from './session-limits.ts';

/**
 * The gateway's database, and equally one of its transactions: drizzle's transaction extends its database, so a
 * function that runs inside or outside a transaction takes a `Database` and is handed either without a cast.
 */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

/** One page of a listing: the rows skipped, then at most `limit` rows. */
export interface PageWindow {
  offset: number;
  limit: number;
}

export interface Storage {
  /** `embedded`: the PostgreSQL server this process runs on DATA_DIR; `postgres`: a server at DATABASE_URL. */
  readonly kind: 'embedded' | 'postgres';
  /** True when no other gateway process can use this database (embedded): every other process's holds are orphaned. */
  readonly soleOwner: boolean;
  readonly db: Database;
  /**
   * Runs the statement as a named prepared statement: each connection parses and plans it once. For the
   * statements of the hot path, which `db` would send to be parsed again every time. Its rows are checked
   * against its shape (StorageRowError when one does not match).
   */
  prepared<Row>(statement: PreparedStatement<Row>, values: unknown[]): Promise<Row[]>;
  /** Tells every gateway process sharing this database, this one included. */
  publish(event: StorageEvent): Promise<void>;
  subscribe(listener: (event: StorageEvent) => void): () => void;
  /**
   * False while this process may be missing other processes' events (its LISTEN connection is down), until it
   * listens again and its subscribers were told to forget every cached entry.
   */
  listening(): boolean;
  close(): Promise<void>;
}

/** How often the LISTEN connection is probed with a query, and how long the answer may take before it is counted lost. */
export interface ListenerProbe {
  everyMs: number;
  timeoutMs: number;
}

export type StorageOptions =
  | {
      kind: 'postgres';
      url: string;
      poolSize?: number;
      onError?: (error: Error) => void;
      listenerProbe?: ListenerProbe;
      /** The pool's session limits (`poolSessionLimits` of session-limits.ts), shortened by tests. */
      idleInTransactionTimeoutMs?: number;
      lockTimeoutMs?: number;
      statementTimeoutMs?: number;
    }
  | {
      kind: 'embedded';
      /** DATA_DIR: the server's data goes to `pg/` under it, and `gateway.lock` makes this process its only user. */
      dataDir: string;
      onError?: (error: Error) => void;
      /** The server's log lines, and what the storage does with it (stopping a leftover server, importing). */
      onLog?: (message: string, level: ServerLogLevel | 'info') => void;
    };

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
const eventChannel = 'gateway_events';
/** The `application_name` of every gateway process's LISTEN connection. */
export const listenerApplicationName = 'gateway-events-listener';
/** Arbitrary constant naming the advisory lock that serialises migrations across processes. */
const migrationLockId = 7_270_301;
/** The `application_name` of the session that runs the migrations. */
const migrationsApplicationName = 'gateway-migrations';
/** Connections of an embedded server's pool: one client process, and at most two cores' worth of work. */
const embeddedPoolSize = 10;

export async function openStorage(options: StorageOptions): Promise<Storage> {
  return options.kind === 'postgres' ? openPostgres(options) : openEmbedded(options);
}

async function openEmbedded(options: Extract<StorageOptions, { kind: 'embedded' }>): Promise<Storage> {
  const onLog = options.onLog ?? (() => undefined);
  mkdirSync(options.dataDir, { recursive: true });
  const lock = acquireDataDirLock(options.dataDir);
  let server: EmbeddedServer | undefined;
  let storage: Storage | undefined;
  try {
    server = await startEmbeddedServer({
      dataDir: path.join(options.dataDir, 'pg'),
      onLog: (line, level) => onLog(`database server: ${line}`, level),
      onUnexpectedExit: (message) => options.onError?.(new Error(message)),
    });
    const opened = await openPostgres(
      { url: server.url, poolSize: embeddedPoolSize, onError: options.onError },
      'embedded',
    );
    storage = opened;
    await importLegacyDatabase({
      dataDir: options.dataDir,
      url: server.url,
      migrationsFolder,
      onLog: (message) => onLog(message, 'warn'),
    });
    const running = server;
    return {
      ...opened,
      close: async () => {
        try {
          await opened.close();
        } finally {
          try {
            await running.stop();
          } finally {
            lock.release();
          }
        }
      },
    };
  } catch (error) {
    await storage?.close().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    lock.release();
    throw error;
  }
}

async function openPostgres(
  options: Omit<Extract<StorageOptions, { kind: 'postgres' }>, 'kind'>,
  kind: Storage['kind'] = 'postgres',
): Promise<Storage> {
  const limits: SessionLimits = {
    idleInTransactionTimeoutMs: options.idleInTransactionTimeoutMs ?? poolSessionLimits.idleInTransactionTimeoutMs,
    lockTimeoutMs: options.lockTimeoutMs ?? poolSessionLimits.lockTimeoutMs,
    statementTimeoutMs: options.statementTimeoutMs ?? poolSessionLimits.statementTimeoutMs,
  };
  const pool = new ReturningPool({
    connectionString: options.url,
    max: options.poolSize ?? 20,
    // Run before the pool hands the connection out.
    onConnect: (client) => limitSession(client, limits),
  });
  // Every client's cut is reported once, by its own listener, whether it was idle or checked out (one cut
  // while out would otherwise be an uncaught exception; returning-pool.ts takes it back at once). The pool
  // passes an idle client's error on as its own too: heard here only so that it does not throw.
  pool.on('connect', (client) => client.on('error', (error) => options.onError?.(error)));
  pool.on('error', () => undefined);
  const db = drizzlePostgres(pool, { schema });
  const listener = new PostgresListener(options.url, options.onError, options.listenerProbe ?? defaultListenerProbe);
  try {
    await migrateOnce(options.url);
    await listener.start();
  } catch (error) {
    await listener.stop();
    await pool.end().catch(() => undefined);
    throw error;
  }
  return {
    kind,
    soleOwner: kind === 'embedded',
    db,
    prepared: async <Row>(statement: PreparedStatement<Row>, values: unknown[]) => {
      const { rows }: { rows: unknown[] } = await pool.query({ name: statement.name, text: statement.text, values });
      return checkedRows(rows, statement);
    },
    publish: async (event) => {
      await pool.query('SELECT pg_notify($1, $2)', [eventChannel, JSON.stringify(event)]);
    },
    subscribe: (callback) => listener.subscribe(callback),
    listening: () => listener.listening(),
    close: async () => {
      await listener.stop();
      await pool.end();
    },
  };
}

/**
 * Runs the migrations not yet run, one process at a time: under the migration lock, taken by the session that
 * runs them (its limits: `migrationSessionLimits`). The lock lives exactly as long as that session: ended here,
 * or by the server when the process dies, the next process waiting for it goes on, and finds the migrations
 * already run.
 */
async function migrateOnce(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: migrationsApplicationName });
  // A cut connection fails the statement under way; heard here only so that it does not throw.
  client.on('error', () => undefined);
  await client.connect();
  try {
    await limitSession(client, migrationSessionLimits);
    await client.query('SELECT pg_advisory_lock($1)', [migrationLockId]);
    await migratePostgres(drizzlePostgres(client, { schema }), { migrationsFolder });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** How long the listener waits before connecting again after its connection dropped or could not be made. */
const listenerReconnectMs = 1000;
/**
 * TCP keepalive on the LISTEN connection, which sends nothing of its own: a peer gone without a FIN or RST
 * (a host or a NAT entry that vanished) is found by the kernel's probes rather than never.
 */
const listenerKeepAliveDelayMs = 10_000;
/**
 * A `SELECT 1` on the LISTEN connection this often: one that fails or does not answer in time marks the
 * connection lost (caches forget, `listening()` is false, it reconnects), so a silently dead socket does not
 * leave caches trusting entries for their full TTL while events are lost. Keepalive alone takes minutes.
 */
const defaultListenerProbe: ListenerProbe = { everyMs: 5_000, timeoutMs: 3_000 };

/**
 * A dedicated connection that LISTENs for cache invalidations and reconnects when it drops.
 *
 * While it is down, other processes' events are lost: at the drop and again once it listens anew it tells
 * subscribers to forget every cached entry (`key-changed` `*`), and `listening()` is false in between so that
 * caches trust what they re-read only briefly (see Authenticator).
 */
class PostgresListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private probing = false;
  /** True from the first LISTEN until the connection is lost, and again once it listens anew and caches forgot. */
  private live = false;
  private readonly events = new EventEmitter();

  constructor(
    private readonly url: string,
    private readonly onError: ((error: Error) => void) | undefined,
    private readonly probe: ListenerProbe,
  ) {}

  async start(): Promise<void> {
    await this.connect();
    this.live = true;
    this.probeTimer = setInterval(() => this.probeOnce(), this.probe.everyMs).unref();
  }

  /** False while the connection is down, and until it listens again and subscribers were told to forget. */
  listening(): boolean {
    return this.live;
  }

  subscribe(listener: (event: StorageEvent) => void): () => void {
    this.events.on(eventChannel, listener);
    return () => this.events.off(eventChannel, listener);
  }

  /** Connects and LISTENs; the client becomes the one in use. */
  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.url,
      // Named, so an operator (and a test) finds it in pg_stat_activity whatever it last ran (a probe, say).
      application_name: listenerApplicationName,
      keepAlive: true,
      keepAliveInitialDelayMillis: listenerKeepAliveDelayMs,
    });
    let ended = false;
    const lost = (error?: Error) => {
      if (error) this.onError?.(error);
      ended = true;
      this.lost(client);
    };
    client.on('notification', (message) => {
      if (message.channel !== eventChannel || !message.payload) return;
      const event = parseStorageEvent(message.payload);
      if (event instanceof Error) this.onError?.(event);
      else this.events.emit(eventChannel, event);
    });
    client.on('error', (error) => lost(error));
    client.on('end', () => lost());
    try {
      await client.connect();
      await client.query(`LISTEN ${eventChannel}`);
      if (ended) throw new Error(`the connection listening to ${eventChannel} ended as it started`);
      if (this.stopped) throw new Error('the storage was closed');
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
    return client;
  }

  /** A cheap query on the connection in use; no answer in time, or a failure, and the connection is lost. */
  private probeOnce(): void {
    const client = this.client;
    if (!client || this.probing || this.stopped) return;
    this.probing = true;
    let timer: NodeJS.Timeout | undefined;
    const unanswered = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `the connection listening to ${eventChannel} did not answer a probe within ${this.probe.timeoutMs} ms`,
            ),
          ),
        this.probe.timeoutMs,
      );
    });
    Promise.race([client.query('SELECT 1'), unanswered])
      .then(
        () => undefined,
        (error: Error) => {
          if (client !== this.client || this.stopped) return;
          this.onError?.(error);
          this.lost(client, 'dead');
        },
      )
      .finally(() => {
        clearTimeout(timer);
        this.probing = false;
      });
  }

  /**
   * The connection in use dropped (one that is no longer in use is ignored). A dead one (a probe went
   * unanswered) has its socket destroyed: a polite end would wait for a peer that no longer answers.
   */
  private lost(client: pg.Client, state: 'ended' | 'dead' = 'ended'): void {
    if (client !== this.client) return;
    this.client = undefined;
    this.live = false;
    if (state === 'dead') client.connection.stream.destroy();
    else client.end().catch(() => undefined);
    // Events sent between the drop and its discovery are lost already: forget whatever they may have changed.
    this.forgetEverything();
    this.reconnectLater();
  }

  private reconnectLater(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.stopped) return;
      this.connect().then(
        (client) => {
          // Lost again (or closed) before this ran: the next attempt is already planned.
          if (this.client !== client) return;
          // In the same tick: nothing reads a cache entry of the disconnected time as trusted in between.
          this.live = true;
          this.forgetEverything();
        },
        (error: Error) => {
          this.onError?.(error);
          this.reconnectLater();
        },
      );
    }, listenerReconnectMs).unref();
  }

  private forgetEverything(): void {
    this.events.emit(eventChannel, { type: 'key-changed', keyId: '*' } satisfies StorageEvent);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.live = false;
    clearInterval(this.probeTimer);
    this.probeTimer = undefined;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}

/** What `db.execute` answers, which drizzle types only as its driver's result: node-postgres's has `rows`. */
const executed = Compile(Type.Object({ rows: Type.Array(Type.Unknown()) }));

/** Runs raw SQL and returns its rows, each checked against `shape` (StorageRowError when one does not match). */
export async function queryRows<Row>(db: Database, query: SQL, shape: RowShape<Row>): Promise<Row[]> {
  const result = await db.execute(query);
  if (!executed.Check(result)) throw new StorageRowError(shape.name, 'the driver answered no rows');
  return checkedRows(result.rows, shape);
}
