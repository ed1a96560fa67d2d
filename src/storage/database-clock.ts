import { sql } from 'drizzle-orm';
import Type from 'typebox';
import { rowShape, timestampText } from './checked-rows.ts';
import { queryRows, type Database } from './database.ts';

const serverNow = rowShape('clock_timestamp', Type.Object({ now: timestampText }));

/**
 * The database server's clock, as this process reads it: its own clock corrected by the offset measured at the
 * last `sync`. Processes sharing one database charge spend windows (the UTC day, week and month a charge counts
 * in) by one clock, as their heartbeats already age by one: a process whose own clock ran seconds ahead would
 * otherwise move a key into the next day for all of them while another still charges the day before, and a key
 * could spend its daily cap almost twice around midnight.
 */
export class DatabaseClock {
  private offsetMs = 0;

  constructor(
    private readonly readServerTime: () => Promise<Date>,
    private readonly localNow: () => number = Date.now,
  ) {}

  now(): Date {
    return new Date(this.localNow() + this.offsetMs);
  }

  async sync(): Promise<void> {
    const sent = this.localNow();
    const server = (await this.readServerTime()).getTime();
    const received = this.localNow();
    // The server read its clock somewhere within the round trip: its middle is the best guess of when.
    this.offsetMs = server - (sent + received) / 2;
  }
}

/** The database server's clock at the moment it runs the statement. */
export async function serverTime(db: Database): Promise<Date> {
  const [row] = await queryRows(db, sql`SELECT clock_timestamp() AS now`, serverNow);
  if (!row) throw new Error('the database did not say what time it is');
  return new Date(row.now);
}
