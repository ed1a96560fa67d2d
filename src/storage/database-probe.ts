import { sql } from 'drizzle-orm';
import type { Database } from './database.ts';

/** The cheapest round trip to the database (a connection from the pool and `SELECT 1`): readiness asks it. */
export async function pingDatabase(db: Database): Promise<void> {
  await db.execute(sql`SELECT 1`);
}
