import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import Type from 'typebox';
import { integerText, rowShape } from './checked-rows.ts';
import { type Database, type PageWindow, queryRows } from './database.ts';
import { generations } from './schema.ts';

/** Sums and counts are bigint and numeric, which pg answers as text. */
const dailySpendRows = rowShape(
  'daily spend',
  Type.Object({ day: Type.String(), model: Type.String(), cost_nanos: integerText, generations: integerText }),
);

export type GenerationRow = typeof generations.$inferSelect;

/** Narrows an account's usage records; an absent field does not filter. */
export interface GenerationFilter {
  apiKeyId?: string;
  model?: string;
  modality?: string;
}

/** What an account was charged on one UTC day for one model. */
export interface DailySpendRow {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  model: string;
  costNanos: bigint;
  generations: number;
}

/** Reads of the usage records (the `generations` table) an account sees; records are written by the ledger's settlement. */
export class UsageRepository {
  constructor(private readonly db: Database) {}

  /** One page of an account's records, newest first, with the count of all records the filter matches. */
  async listGenerations(
    accountId: string,
    filter: GenerationFilter,
    { offset, limit }: PageWindow,
  ): Promise<{ rows: GenerationRow[]; total: number }> {
    const where = matching(accountId, filter);
    const [rows, [totals]] = await Promise.all([
      this.db
        .select()
        .from(generations)
        .where(where)
        .orderBy(desc(generations.createdAt), desc(generations.id))
        .offset(offset)
        .limit(limit),
      this.db.select({ value: count() }).from(generations).where(where),
    ]);
    return { rows, total: totals?.value ?? 0 };
  }

  /** The record, when it is the account's. */
  async findGeneration(accountId: string, id: string): Promise<GenerationRow | undefined> {
    const [row] = await this.db
      .select()
      .from(generations)
      .where(and(eq(generations.accountId, accountId), eq(generations.id, id)))
      .limit(1);
    return row;
  }

  /** Charges per UTC day and model since `since`, summed by the database in integer nano-USD; oldest day first. */
  async dailySpend(accountId: string, since: Date): Promise<DailySpendRow[]> {
    const rows = await queryRows(
      this.db,
      sql`SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, model,
                 sum(usd_cost_nanos)::text AS cost_nanos, count(*) AS generations
            FROM generations
           WHERE account_id = ${accountId} AND created_at >= ${since.toISOString()}::timestamptz
           GROUP BY 1, 2
           ORDER BY 1, 2`,
      dailySpendRows,
    );
    return rows.map((row) => ({
      day: row.day,
      model: row.model,
      costNanos: BigInt(row.cost_nanos),
      generations: Number(row.generations),
    }));
  }
}

function matching(accountId: string, filter: GenerationFilter): SQL | undefined {
  return and(
    eq(generations.accountId, accountId),
    filter.apiKeyId === undefined ? undefined : eq(generations.apiKeyId, filter.apiKeyId),
    filter.model === undefined ? undefined : eq(generations.model, filter.model),
    filter.modality === undefined ? undefined : eq(generations.modality, filter.modality),
  );
}
