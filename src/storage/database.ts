import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/node-postgres';
import { migrate as migratePostgres } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { SQL } from 'drizzle-orm';
import pg from 'pg';
import * as schema from './schema.ts';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.ts';

export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

/** Something other processes (or this one) must forget from their caches, or give back. */
export type StorageEvent =
  | { type: 'key-changed'; keyId: string }
  | { type: 'session-ended'; tokenHash: string }
  /** A process refused a request of the account while others held its credit unused in leases. */
  | { type: 'credit-wanted'; accountId: string };

export interface Storage {
  readonly kind: 'pglite' | 'postgres';
  readonly db: Database;
  /** Tells every gateway process sharing this database, this one included. */
  publish(event: StorageEvent): Promise<void>;
  subscribe(listener: (event: StorageEvent) => void): () => void;
  close(): Promise<void>;
}

export type StorageOptions =
  | { kind: 'postgres'; url: string; poolSize?: number; onError?: (error: Error) => void }
  | { kind: 'pglite'; dataDir: string }
  | { kind: 'pglite-memory' };

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
const eventChannel = 'gateway_events';
/** Arbitrary constant naming the advisory lock that serialises migrations across processes. */
const migrationLockId = 7_270_301;

export async function openStorage(options: StorageOptions): Promise<Storage> {
  return options.kind === 'postgres' ? openPostgres(options) : openPglite(options);
}

async function openPglite(options: { kind: 'pglite'; dataDir: string } | { kind: 'pglite-memory' }): Promise<Storage> {
  let lock: DataDirLock | undefined;
  let client: PGlite;
  if (options.kind === 'pglite') {
    mkdirSync(options.dataDir, { recursive: true });
    lock = acquireDataDirLock(options.dataDir);
    client = new PGlite(path.join(options.dataDir, 'pgdata'));
  } else {
    client = new PGlite();
  }
  try {
    await client.waitReady;
    const db = drizzlePglite(client, { schema }) as unknown as Database;
    await migratePglite(db as never, { migrationsFolder });
    // One process owns an embedded database, so events never leave it.
    const events = new EventEmitter();
    return {
      kind: 'pglite',
      db,
      publish: async (event) => {
        events.emit(eventChannel, event);
      },
      subscribe: (listener) => {
        events.on(eventChannel, listener);
        return () => events.off(eventChannel, listener);
      },
      close: async () => {
        await client.close();
        lock?.release();
      },
    };
  } catch (error) {
    await client.close().catch(() => undefined);
    lock?.release();
    throw error;
  }
}

async function openPostgres(options: { url: string; poolSize?: number; onError?: (error: Error) => void }): Promise<Storage> {
  const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 20 });
  pool.on('error', (error) => options.onError?.(error));
  const db = drizzlePostgres(pool, { schema }) as unknown as Database;
  const lockClient = await pool.connect();
  try {
    await lockClient.query('SELECT pg_advisory_lock($1)', [migrationLockId]);
    await migratePostgres(db as never, { migrationsFolder });
  } finally {
    await lockClient.query('SELECT pg_advisory_unlock($1)', [migrationLockId]).catch(() => undefined);
    lockClient.release();
  }
  const listener = new PostgresListener(options.url, options.onError);
  await listener.start();
  return {
    kind: 'postgres',
    db,
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
