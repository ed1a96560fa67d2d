import type { SQL } from 'drizzle-orm';
import Type from 'typebox';
import { rowShape } from '../../src/storage/checked-rows.ts';
import { queryRows, type Database } from '../../src/storage/database.ts';

/** Any row (an object): the test reads the columns it selected, and its own assertions fail on a wrong guess. */
const anyRow = rowShape('a test query', Type.Record(Type.String(), Type.Unknown()));

/** A test's raw SQL, its rows typed as the test says: a schema per test query would check nothing the test does not. */
export async function uncheckedRows<Row = Record<string, unknown>>(db: Database, query: SQL): Promise<Row[]> {
  return (await queryRows(db, query, anyRow)) as Row[];
}
