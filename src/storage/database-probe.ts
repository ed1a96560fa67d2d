import { sql } from 'drizzle-orm';
import { queryRows, type Database } from './database.ts';

/** The cheapest round trip to the database (a connection from the pool and `SELECT 1`): readiness asks it. */
export async function pingDatabase(db: Database): Promise<void> {
  await queryRows(db, sql`SELECT 1`);
}
