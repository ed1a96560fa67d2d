/**
 * Earlier releases kept the embedded database in PGlite (PostgreSQL compiled to WebAssembly, run inside
 * the gateway process) under DATA_DIR/db. The first start of this release on such a DATA_DIR copies that
 * database into the embedded server, checks every table's row count, and renames DATA_DIR/db to
 * DATA_DIR/db.imported, which is kept (delete it once satisfied). The copy is one transaction: a start
 * that dies half way leaves the server's database empty and the next start copies again.
 */
import { existsSync, renameSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { acquireDataDirLock } from './data-dir-lock.ts';

export class LegacyImportError extends Error {}

/** Rows fetched from PGlite per round trip. */
const batchRows = 1_000;

interface ImportOptions {
  /** DATA_DIR. */
  dataDir: string;
  /** The embedded server's database, migrated to the current schema. */
  url: string;
  migrationsFolder: string;
  onLog: (message: string) => void;
}

const quoted = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

/** Does nothing unless DATA_DIR/db holds a PGlite database. */
export async function importLegacyDatabase(options: ImportOptions): Promise<void> {
  const legacyDir = path.join(options.dataDir, 'db');
  const legacyData = path.join(legacyDir, 'pgdata');
  if (!existsSync(legacyData)) return;
  // An earlier release still running on DATA_DIR/db holds this lock: copying under it would lose its later writes.
  const legacyLock = acquireDataDirLock(legacyDir);
  let imported = false;
  try {
    options.onLog(
      `found a database of an earlier release (PGlite) in ${legacyDir}: importing it into the embedded server`,
    );
    const [{ PGlite }, { drizzle }, { migrate }] = await Promise.all([
      import('@electric-sql/pglite'),
      import('drizzle-orm/pglite'),
      import('drizzle-orm/pglite/migrator'),
    ]);
    const source = new PGlite(legacyData);
    const target = new pg.Client({ connectionString: options.url });
    try {
      await source.waitReady;
      // The same migrations bring both to the same schema, so every table and column lines up.
      await migrate(drizzle(source), { migrationsFolder: options.migrationsFolder });
      await target.connect();
      const tablesQuery = `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`;
      const tables = (await source.query<{ name: string }>(tablesQuery)).rows.map((row) => row.name);
      const countQuery = (table: string) => `SELECT count(*)::text AS count FROM public.${quoted(table)}`;
      const sourceCounts = new Map<string, string>();
      const targetCounts = new Map<string, string>();
      for (const table of tables) {
        sourceCounts.set(table, (await source.query<{ count: string }>(countQuery(table))).rows[0]?.count ?? '0');
        targetCounts.set(table, (await target.query<{ count: string }>(countQuery(table))).rows[0]?.count ?? '0');
      }
      const same = tables.every((table) => sourceCounts.get(table) === targetCounts.get(table));
      const empty = tables.every((table) => targetCounts.get(table) === '0');
      if (same && !empty) {
        // Copied and committed by a start that stopped before renaming DATA_DIR/db.
        imported = true;
        return;
      }
      if (!empty) {
        throw new LegacyImportError(
          `${legacyDir} holds the database of an earlier release (PGlite), and the embedded server's database in ${path.join(options.dataDir, 'pg')} already holds other data: ` +
            'the gateway will not merge them. Move one of the two directories away and start again.',
        );
      }
      await target.query('BEGIN');
      try {
        // A plain copy of rows: no foreign-key or other triggers fire until it is whole.
        await target.query('SET LOCAL session_replication_role = replica');
        for (const table of tables) {
          let after = '(0,0)';
          for (;;) {
            const { rows } = await source.query<{ position: string; row: string }>(
              `SELECT ctid::text AS position, row_to_json(t)::text AS row FROM public.${quoted(table)} t WHERE ctid > $1::tid ORDER BY ctid LIMIT ${batchRows}`,
              [after],
            );
            if (rows.length === 0) break;
            // Rows travel as JSON text, so 64-bit integers and timestamps arrive exactly as stored.
            await target.query(
              `INSERT INTO public.${quoted(table)} SELECT * FROM json_populate_recordset(NULL::public.${quoted(table)}, $1::json)`,
              [`[${rows.map((row) => row.row).join(',')}]`],
            );
            after = rows.at(-1)!.position;
          }
          const copied = (await target.query<{ count: string }>(countQuery(table))).rows[0]?.count;
          if (copied !== sourceCounts.get(table))
            throw new LegacyImportError(
              `importing ${table} from ${legacyDir}: ${sourceCounts.get(table)} rows there, ${copied} copied`,
            );
        }
        await target.query('COMMIT');
      } catch (error) {
        await target.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      imported = true;
      options.onLog(
        `imported ${tables.map((table) => `${sourceCounts.get(table)} ${table}`).join(', ')} from ${legacyDir}`,
      );
    } finally {
      await target.end().catch(() => undefined);
      await source.close().catch(() => undefined);
    }
  } finally {
    legacyLock.release();
    if (imported) {
      const keptAs = existsSync(`${legacyDir}.imported`)
        ? `${legacyDir}.imported-${Date.now()}`
        : `${legacyDir}.imported`;
      renameSync(legacyDir, keptAs);
      options.onLog(`the earlier database is kept in ${keptAs}; delete it once satisfied`);
    }
  }
}
