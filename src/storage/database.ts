import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle as drizzlePostgres } from 'drizzle-orm/node-postgres';
import { migrate as migratePostgres } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { SQL } from 'drizzle-orm';
import pg from 'pg';
import * as schema from './schema.ts';
import { acquireDataDirLock } from './data-dir-lock.ts';
import { startEmbeddedServer, type EmbeddedServer, type ServerLogLevel } from './embedded-server.ts';
import { importLegacyDatabase } from './legacy-import.ts';

export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

/** Something other processes (or this one) must forget from their caches, or give back. */
export type StorageEvent =
  | { type: 'key-changed'; keyId: string }
  | { type: 'session-ended'; tokenHash: string }
  /**
   * Leases must give back the account's unused credit: a process refused one of its requests while others
   * leased its credit, or an operator took credit away (leased credit must not outlive the balance).
   */
  | { type: 'give-back-credit'; accountId: string }
  /** Media jobs were queued: idle workers look for them now rather than at their next poll. */
  | { type: 'jobs-queued' }
  /** A media job reached a terminal state: requests waiting for it answer now. */
  | { type: 'job-finished'; jobId: string };

export interface Storage {
  /** `embedded`: the PostgreSQL server this process runs on DATA_DIR; `postgres`: a server at DATABASE_URL. */
  readonly kind: 'embedded' | 'postgres';
  /** True when no other gateway process can use this database (embedded): every other process's holds are orphaned. */
  readonly soleOwner: boolean;
  readonly db: Database;
  /**
   * Runs `text` as the named prepared statement `name`: each connection parses and plans it once. For the
   * statements of the hot path, which `db` would send to be parsed again every time.
   */
  prepared<Row>(name: string, text: string, values: unknown[]): Promise<Row[]>;
  /** Tells every gateway process sharing this database, this one included. */
  publish(event: StorageEvent): Promise<void>;
  subscribe(listener: (event: StorageEvent) => void): () => void;
  close(): Promise<void>;
}

export type StorageOptions =
  | { kind: 'postgres'; url: string; poolSize?: number; onError?: (error: Error) => void }
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
/** Arbitrary constant naming the advisory lock that serialises migrations across processes. */
const migrationLockId = 7_270_301;
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
    const opened = await openPostgres({ url: server.url, poolSize: embeddedPoolSize, onError: options.onError }, 'embedded');
    storage = opened;
    await importLegacyDatabase({ dataDir: options.dataDir, url: server.url, migrationsFolder, onLog: (message) => onLog(message, 'warn') });
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

async function openPostgres(options: { url: string; poolSize?: number; onError?: (error: Error) => void }, kind: Storage['kind'] = 'postgres'): Promise<Storage> {
  const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 20 });
  pool.on('error', (error) => options.onError?.(error));
  const db = drizzlePostgres(pool, { schema }) as unknown as Database;
  const listener = new PostgresListener(options.url, options.onError);
  try {
    const lockClient = await pool.connect();
    try {
      await lockClient.query('SELECT pg_advisory_lock($1)', [migrationLockId]);
      await migratePostgres(db as never, { migrationsFolder });
    } finally {
      await lockClient.query('SELECT pg_advisory_unlock($1)', [migrationLockId]).catch(() => undefined);
      lockClient.release();
    }
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
    prepared: async <Row>(name: string, text: string, values: unknown[]) => (await pool.query({ name, text, values })).rows as Row[],
    publish: async (event) => {
      await pool.query('SELECT pg_notify($1, $2)', [eventChannel, JSON.stringify(event)]);
    },
    subscribe: (callback) => listener.subscribe(callback),
    close: async () => {
      await listener.stop();
      await pool.end();
    },
  };
}

/** A dedicated connection that LISTENs for cache invalidations and reconnects when it drops. */
class PostgresListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private reconnecting = false;
  private readonly events = new EventEmitter();

  constructor(
    private readonly url: string,
    private readonly onError: ((error: Error) => void) | undefined,
  ) {}

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('notification', (message) => {
      if (message.channel !== eventChannel || !message.payload) return;
      try {
        this.events.emit(eventChannel, JSON.parse(message.payload) as StorageEvent);
      } catch (error) {
        this.onError?.(error as Error);
      }
    });
    client.on('error', (error) => {
      this.onError?.(error);
      this.reconnectLater();
    });
    client.on('end', () => this.reconnectLater());
    await client.connect();
    await client.query(`LISTEN ${eventChannel}`);
    this.client = client;
  }

  subscribe(listener: (event: StorageEvent) => void): () => void {
    this.events.on(eventChannel, listener);
    return () => this.events.off(eventChannel, listener);
  }

  private reconnectLater(): void {
    if (this.stopped || this.reconnecting) return;
    this.reconnecting = true;
    const broken = this.client;
    this.client = undefined;
    broken?.end().catch(() => undefined);
    setTimeout(() => {
      this.reconnecting = false;
      if (this.stopped) return;
      // Anything missed while disconnected may be stale: tell subscribers to drop every cached entry.
      this.start()
        .then(() => this.events.emit(eventChannel, { type: 'key-changed', keyId: '*' } satisfies StorageEvent))
        .catch((error: Error) => {
          this.onError?.(error);
          this.reconnectLater();
        });
    }, 1000).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}

/** Runs raw SQL and returns its rows; both drivers answer `{ rows }`. */
export async function queryRows<Row>(db: Database, query: SQL): Promise<Row[]> {
  const result = (await db.execute(query)) as unknown as { rows: Row[] };
  return result.rows;
}
