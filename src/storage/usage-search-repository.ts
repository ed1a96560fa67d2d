import { and, count, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { Database, PageWindow } from './database.ts';
import { generations } from './schema.ts';
import type { GenerationRow } from './usage-repository.ts';

/** The operator's filters over every account's usage records; an absent field does not filter. */
export interface UsageSearchFilter {
  accountId?: string;
  apiKeyId?: string;
  model?: string;
  /** The provider row that served (or was tried last), by provider and, optionally, upstream model. */
  providerId?: string;
  upstreamModel?: string;
  status?: string;
  /** From this moment on (inclusive). */
  since?: Date;
  /** Before this moment (exclusive). */
  until?: Date;
}

export interface UsageTotals {
  generations: number;
  costNanos: bigint;
}

/** Where a walk over the records stopped: the last record's exact moment (as PostgreSQL writes it) and id. */
interface Cursor {
  createdAt: string;
  id: string;
}

/**
 * Reads of the usage records across accounts (the operator console): a page with the filter's totals, and a
 * walk over every matching record in pages by keyset, newest first, so an export of any size holds one page
 * in memory at a time.
 */
export class UsageSearchRepository {
  constructor(private readonly db: Database) {}

  async page(filter: UsageSearchFilter, { offset, limit }: PageWindow): Promise<{ rows: GenerationRow[] }> {
    const rows = await this.db
      .select()
      .from(generations)
      .where(matching(filter))
      .orderBy(desc(generations.createdAt), desc(generations.id))
      .offset(offset)
      .limit(limit);
    return { rows };
  }

  async totals(filter: UsageSearchFilter): Promise<UsageTotals> {
    const [row] = await this.db
      .select({
        generations: count(),
        costNanos: sql<string>`coalesce(sum(${generations.usdCostNanos}), 0)::text`,
      })
      .from(generations)
      .where(matching(filter));
    return { generations: row?.generations ?? 0, costNanos: BigInt(row?.costNanos ?? '0') };
  }

  /** Every matching record, newest first, read `batchSize` at a time (each read starts after the last record). */
  async *walk(filter: UsageSearchFilter, batchSize: number): AsyncGenerator<GenerationRow> {
    let cursor: Cursor | undefined;
    for (;;) {
      const after = cursor
        ? sql`(${generations.createdAt}, ${generations.id}) < (${cursor.createdAt}::timestamptz, ${cursor.id})`
        : undefined;
      const batch = await this.db
        .select({ row: generations, cursor: sql<string>`${generations.createdAt}::text` })
        .from(generations)
        .where(and(matching(filter), after))
        .orderBy(desc(generations.createdAt), desc(generations.id))
        .limit(batchSize);
      for (const { row } of batch) yield row;
      const last = batch.at(-1);
      if (!last || batch.length < batchSize) return;
      cursor = { createdAt: last.cursor, id: last.row.id };
    }
  }
}

function matching(filter: UsageSearchFilter): SQL | undefined {
  return and(
    filter.accountId === undefined ? undefined : eq(generations.accountId, filter.accountId),
    filter.apiKeyId === undefined ? undefined : eq(generations.apiKeyId, filter.apiKeyId),
    filter.model === undefined ? undefined : eq(generations.model, filter.model),
    filter.providerId === undefined ? undefined : sql`${generations.route}->>'providerId' = ${filter.providerId}`,
    filter.upstreamModel === undefined
      ? undefined
      : sql`${generations.route}->>'upstreamModel' = ${filter.upstreamModel}`,
    filter.status === undefined ? undefined : eq(generations.status, filter.status),
    filter.since === undefined ? undefined : gte(generations.createdAt, filter.since),
    filter.until === undefined ? undefined : lt(generations.createdAt, filter.until),
  );
}
