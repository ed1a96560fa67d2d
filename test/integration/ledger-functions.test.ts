import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const ledgerFunctionsFile = path.resolve(import.meta.dirname, '../../src/storage/ledger-functions.sql');

/** Every ledger function of the database, by signature, as PostgreSQL prints it back (whitespace runs as one space). */
async function ledgerFunctions(client: pg.ClientBase): Promise<Map<string, string>> {
  const { rows } = await client.query<{ signature: string; definition: string }>(
    `SELECT p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS definition
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = current_schema() AND p.proname LIKE 'gw\\_%'
      ORDER BY 1`,
  );
  return new Map(rows.map((row) => [row.signature, row.definition.replace(/\s+/g, ' ').trim()]));
}

describe('storage/ledger-functions.sql', () => {
  let database: TestDatabase;
  let storage: Storage;
  let client: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.options);
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await storage?.close();
    await database?.drop();
  });

  it('holds the current definition of every ledger function a freshly migrated database has', async () => {
    const migrated = await ledgerFunctions(client);
    expect(migrated.size).toBeGreaterThan(10);
    await client.query('BEGIN');
    try {
      for (const signature of migrated.keys()) await client.query(`DROP FUNCTION ${signature}`);
      await client.query(readFileSync(ledgerFunctionsFile, 'utf8'));
      const fromFile = await ledgerFunctions(client);
      expect([...fromFile.keys()]).toEqual([...migrated.keys()]);
      for (const [signature, definition] of migrated) expect(fromFile.get(signature), signature).toBe(definition);
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
