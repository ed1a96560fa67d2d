import { and, asc, count, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { Database } from './database.ts';
import { accounts, apiKeys } from './schema.ts';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export interface SpendLimitsNanos {
  daily: bigint | null;
  weekly: bigint | null;
  monthly: bigint | null;
  total: bigint | null;
}

export type CreateKeyResult = 'created' | 'limit-reached' | 'no-account';

/** The cap columns a change of `limits` sets (a null removes the cap; a cap not named is left as it is). */
function limitChanges(limits: Partial<SpendLimitsNanos>): Partial<typeof apiKeys.$inferInsert> {
  const changes: Partial<typeof apiKeys.$inferInsert> = {};
  if (limits.daily !== undefined) changes.dailyLimitNanos = limits.daily;
  if (limits.weekly !== undefined) changes.weeklyLimitNanos = limits.weekly;
  if (limits.monthly !== undefined) changes.monthlyLimitNanos = limits.monthly;
  if (limits.total !== undefined) changes.totalLimitNanos = limits.total;
  return changes;
}

/** Rate limits as stored on a key or an account (null: none). */
export interface RateLimitColumns {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  concurrentRequests: number | null;
}

/** A key as authentication reads it: with its account's rate limits, the default for its own. */
export type CredentialRow = ApiKeyRow & { accountRateLimits: RateLimitColumns; accountDisabledAt: Date | null };

export class ApiKeysRepository {
  constructor(private readonly db: Database) {}

  /**
   * Inserts a key unless the account already has `maxKeys` unrevoked keys. The account row is locked
   * first, so concurrent creations cannot both slip under the limit.
   */
  async createWithinLimit(
    input: {
      id: string;
      accountId: string;
      name: string;
      displayPrefix: string;
      lookupHash: string;
      sealedKey: string;
      limits: SpendLimitsNanos;
      rateLimits: RateLimitColumns;
    },
    maxKeys: number,
  ): Promise<CreateKeyResult> {
    return this.db.transaction(async (transaction) => {
      const locked = await transaction
        .select({ id: accounts.id })
        .from(accounts)
        .where(eq(accounts.id, input.accountId))
        .for('update');
      if (locked.length === 0) return 'no-account';
      const [existing] = await transaction
        .select({ value: count() })
        .from(apiKeys)
        .where(and(eq(apiKeys.accountId, input.accountId), isNull(apiKeys.revokedAt)));
      if ((existing?.value ?? 0) >= maxKeys) return 'limit-reached';
      await transaction.insert(apiKeys).values({
        id: input.id,
        accountId: input.accountId,
        name: input.name,
        displayPrefix: input.displayPrefix,
        lookupHash: input.lookupHash,
        sealedKey: input.sealedKey,
        dailyLimitNanos: input.limits.daily,
        weeklyLimitNanos: input.limits.weekly,
        monthlyLimitNanos: input.limits.monthly,
        totalLimitNanos: input.limits.total,
        ...input.rateLimits,
      });
      return 'created';
    });
  }

  async findByLookupHash(lookupHash: string): Promise<CredentialRow | undefined> {
    return this.findCredential(eq(apiKeys.lookupHash, lookupHash));
  }

  /** A key with its account's rate limits, by id (settlements read the key's limits this way). */
  async findCredentialById(id: string): Promise<CredentialRow | undefined> {
    return this.findCredential(eq(apiKeys.id, id));
  }

  private async findCredential(where: SQL): Promise<CredentialRow | undefined> {
    const [found] = await this.db
      .select({
        key: apiKeys,
        accountRateLimits: {
          requestsPerMinute: accounts.requestsPerMinute,
          tokensPerMinute: accounts.tokensPerMinute,
          concurrentRequests: accounts.concurrentRequests,
        },
        accountDisabledAt: accounts.disabledAt,
      })
      .from(apiKeys)
      .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
      .where(where)
      .limit(1);
    return (
      found && { ...found.key, accountRateLimits: found.accountRateLimits, accountDisabledAt: found.accountDisabledAt }
    );
  }

  async findById(id: string): Promise<ApiKeyRow | undefined> {
    const [row] = await this.db.select().from(apiKeys).where(eq(apiKeys.id, id)).limit(1);
    return row;
  }

  /** The account's unrevoked keys, oldest first. */
  async listForAccount(accountId: string): Promise<ApiKeyRow[]> {
    return this.db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
      .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  }

  async update(id: string, changes: { name?: string; isActive?: boolean }): Promise<ApiKeyRow | undefined> {
    const [row] = await this.db
      .update(apiKeys)
      .set({ ...changes, updatedAt: sql`now()` })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning();
    return row;
  }

  /** Sets the given caps (a null removes one); caps not named are left as they are. */
  async setLimits(id: string, limits: Partial<SpendLimitsNanos>): Promise<ApiKeyRow | undefined> {
    const [row] = await this.db
      .update(apiKeys)
      .set({ ...limitChanges(limits), updatedAt: sql`now()` })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning();
    return row;
  }

  /**
   * Sets the caps unless `refuses` (asked of the key as it stands, its row locked so that no hold or settlement
   * moves between the check and the change) says why not: the key as it now is, that reason, or undefined when
   * there is no such key.
   */
  async setLimitsUnless<R>(
    id: string,
    limits: Partial<SpendLimitsNanos>,
    refuses: (row: ApiKeyRow) => R | undefined,
  ): Promise<{ row: ApiKeyRow } | { refused: R } | undefined> {
    return this.db.transaction(async (transaction) => {
      const live = and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt));
      const [current] = await transaction.select().from(apiKeys).where(live).for('update');
      if (!current) return undefined;
      const refused = refuses(current);
      if (refused !== undefined) return { refused };
      const [row] = await transaction
        .update(apiKeys)
        .set({ ...limitChanges(limits), updatedAt: sql`now()` })
        .where(live)
        .returning();
      return row && { row };
    });
  }

  /** Sets the given rate limits (a null removes one); limits not named are left as they are. */
  async setRateLimits(id: string, limits: Partial<RateLimitColumns>): Promise<ApiKeyRow | undefined> {
    const [row] = await this.db
      .update(apiKeys)
      .set({ ...limits, updatedAt: sql`now()` })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning();
    return row;
  }

  /** Marks the key revoked for good; false when it did not exist or was already revoked. */
  async revoke(id: string): Promise<boolean> {
    const rows = await this.db
      .update(apiKeys)
      .set({ revokedAt: sql`now()`, isActive: false, updatedAt: sql`now()` })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id });
    return rows.length > 0;
  }
}
