/**
 * Raw SQL's rows are checked against the shape their reader expects, as the server answers them: a column of
 * another type (a function redefined under the code, a `bigint` read as a number) is refused with an error that
 * names the statement and the column, never the row's values, where it used to flow on typed as it never was.
 */
import { sql } from 'drizzle-orm';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedStatement, rowShape, StorageRowError, timestampText } from '../../src/storage/checked-rows.ts';
import { openStorage, queryRows, type Storage } from '../../src/storage/database.ts';
import { LedgerRepository } from '../../src/storage/ledger-repository.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/** A value that must never reach an error's message: rows hold tenants' data. */
const secret = 'tenant-secret@example.com';

describe('rows of raw SQL', () => {
  let database: TestDatabase;
  let storage: Storage;

  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await openStorage({ kind: 'postgres', url: database.url, poolSize: 2 });
  });

  afterAll(async () => {
    await storage?.close();
    await database?.drop();
  });

  it('are answered typed when every column matches the types pg answers', async () => {
    const shape = rowShape(
      'pg types',
      Type.Object({
        big: Type.String(),
        small: Type.Integer(),
        yes: Type.Boolean(),
        doc: Type.Object({ a: Type.Array(Type.Integer()) }),
        // drizzle has pg leave dates as text.
        at: timestampText,
      }),
    );
    const [row] = await queryRows(
      storage.db,
      sql`SELECT 5::bigint AS big, 5::int AS small, true AS yes, '{"a":[1,2]}'::jsonb AS doc, now() AS at`,
      shape,
    );
    expect(row).toMatchObject({ big: '5', small: 5, yes: true, doc: { a: [1, 2] } });
    expect(Math.abs(new Date(row?.at ?? '').getTime() - Date.now())).toBeLessThan(60_000);
  });

  it('are refused when a column has another type, naming the statement and the column but no value', async () => {
    const shape = rowShape('count of holds', Type.Object({ holds: Type.Integer() }));
    const refused = queryRows(
      storage.db,
      sql`SELECT n::bigint AS holds, ${secret}::text AS note FROM (VALUES (1), (2)) v(n) UNION ALL SELECT 3, 'x'`,
      shape,
    );
    // pg answers a bigint as text: read as a number, `holds + 1` would have been '11'.
    await expect(refused).rejects.toThrow(StorageRowError);
    await expect(refused).rejects.toThrow(
      /^storage statement count of holds answered a row of an unexpected shape: row 0: \/holds must be integer$/,
    );
  });

  it('are refused when a column is missing', async () => {
    const shape = rowShape('missing column', Type.Object({ id: Type.String(), email: Type.String() }));
    await expect(queryRows(storage.db, sql`SELECT ${secret}::text AS id`, shape)).rejects.toThrow(
      /missing column answered a row of an unexpected shape: row 0: \/ must have required properties email/,
    );
  });

  it('of a prepared statement are refused the same way, naming the statement', async () => {
    const statement = preparedStatement({
      name: 'checked-rows-prepared',
      text: 'SELECT $1::text AS amount',
      row: Type.Object({ amount: Type.Integer() }),
    });
    const refused = storage.prepared(statement, [secret]);
    await expect(refused).rejects.toThrow(
      /^storage statement checked-rows-prepared answered a row of an unexpected shape: row 0: \/amount must be integer$/,
    );
  });

  it('of a ledger function whose answer changed type are refused where the ledger read them as another answer', async () => {
    // gw_release answering text: `released === true` read 'true' as false, and a released hold as kept.
    await storage.db.execute(sql`DROP FUNCTION gw_release(text)`);
    await storage.db.execute(
      sql.raw(`CREATE FUNCTION gw_release(p_hold_id text) RETURNS text LANGUAGE sql AS $$ SELECT 'true' $$`),
    );
    const ledger = new LedgerRepository(storage);
    const error = await ledger.release('hold_1').then(
      () => undefined,
      (refusal: unknown) => refusal,
    );
    expect(error).toBeInstanceOf(StorageRowError);
    expect(error).toMatchObject({
      statement: 'gw_release',
      message: 'storage statement gw_release answered a row of an unexpected shape: row 0: /released must be boolean',
    });
  });
});
