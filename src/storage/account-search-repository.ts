import { asc, count, eq, ilike, sql, type SQL } from 'drizzle-orm';
import type { AccountRow } from './accounts-repository.ts';
import type { Database, PageWindow } from './database.ts';
import { accounts, generations } from './schema.ts';

/** An account as the operator console lists it: the row, and how many unrevoked keys it has. */
export type ListedAccountRow = AccountRow & { keyCount: number };

/** What an account spent, over all its usage records. */
export interface AccountSpendRow {
  generations: number;
  spentNanos: bigint;
}

/** `%` and `_` are LIKE's wildcards, `\` its escape: an email fragment is matched as the text it is. */
function likeFragment(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

// Written out with its tables named: inside a subquery the builder would leave the outer column unqualified.
const keyCount = sql<number>`(SELECT count(*) FROM "api_keys" WHERE "api_keys"."account_id" = "accounts"."id" AND "api_keys"."revoked_at" IS NULL)::int`;

/** The operator console's reads of accounts across the gateway. */
export class AccountSearchRepository {
  constructor(private readonly db: Database) {}

  /** Accounts whose email contains `email` (case-insensitive), oldest first, with the count of all that match. */
  async search(
    email: string | undefined,
    { offset, limit }: PageWindow,
  ): Promise<{ rows: ListedAccountRow[]; total: number }> {
    const where: SQL | undefined = email === undefined ? undefined : ilike(accounts.email, likeFragment(email));
    const [rows, [totals]] = await Promise.all([
      this.db
        .select({ account: accounts, keyCount })
        .from(accounts)
        .where(where)
        .orderBy(asc(accounts.createdAt), asc(accounts.id))
        .offset(offset)
        .limit(limit),
      this.db.select({ value: count() }).from(accounts).where(where),
    ]);
    return { rows: rows.map((row) => ({ ...row.account, keyCount: row.keyCount })), total: totals?.value ?? 0 };
  }

  async find(id: string): Promise<ListedAccountRow | undefined> {
    const [row] = await this.db
      .select({ account: accounts, keyCount })
      .from(accounts)
      .where(eq(accounts.id, id))
      .limit(1);
    return row && { ...row.account, keyCount: row.keyCount };
  }

  /** Every record's charge summed by the database, in integer nano-USD. */
  async spend(accountId: string): Promise<AccountSpendRow> {
    const [row] = await this.db
      .select({
        generations: count(),
        spentNanos: sql<string>`coalesce(sum(${generations.usdCostNanos}), 0)::text`,
      })
      .from(generations)
      .where(eq(generations.accountId, accountId));
    return { generations: row?.generations ?? 0, spentNanos: BigInt(row?.spentNanos ?? '0') };
  }
}
