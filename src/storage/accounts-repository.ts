import { and, eq, ne, sql } from 'drizzle-orm';
import type { AccountRole } from '../domain/account-role.ts';
import type { Database } from './database.ts';
import { accounts, creditGrants, sessions } from './schema.ts';

export interface AccountRow {
  id: string;
  email: string;
  passwordHash: string | null;
  balanceNanos: bigint;
  heldNanos: bigint;
  /** Rate limits of the account's keys that have none of their own. */
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  concurrentRequests: number | null;
  createdAt: Date;
  role: AccountRole;
  /** When an operator disabled the account; null while it is enabled. */
  disabledAt: Date | null;
}

export class AccountsRepository {
  constructor(private readonly db: Database) {}

  /** Inserts the account and its opening credit grant together; false when the email is taken. */
  async create(input: {
    id: string;
    email: string;
    passwordHash: string | null;
    creditsNanos: bigint;
    grantId: string;
    note: string;
  }): Promise<boolean> {
    return this.db.transaction(async (transaction) => {
      const inserted = await transaction
        .insert(accounts)
        .values({
          id: input.id,
          email: input.email,
          passwordHash: input.passwordHash,
          balanceNanos: input.creditsNanos,
        })
        .onConflictDoNothing({ target: accounts.email })
        .returning({ id: accounts.id });
      if (inserted.length === 0) return false;
      if (input.creditsNanos !== 0n) {
        await transaction
          .insert(creditGrants)
          .values({ id: input.grantId, accountId: input.id, amountNanos: input.creditsNanos, note: input.note });
      }
      return true;
    });
  }

  async findById(id: string): Promise<AccountRow | undefined> {
    const [row] = await this.db.select().from(accounts).where(eq(accounts.id, id)).limit(1);
    return row;
  }

  async findByEmail(email: string): Promise<AccountRow | undefined> {
    const [row] = await this.db.select().from(accounts).where(eq(accounts.email, email)).limit(1);
    return row;
  }

  /** Sets the default rate limits of the account's keys (a null removes one); undefined when no such account. */
  async setRateLimits(
    id: string,
    limits: { requestsPerMinute?: number | null; tokensPerMinute?: number | null; concurrentRequests?: number | null },
  ): Promise<AccountRow | undefined> {
    if (Object.keys(limits).length === 0) return this.findById(id);
    const [row] = await this.db.update(accounts).set(limits).where(eq(accounts.id, id)).returning();
    return row;
  }

  async setRole(id: string, role: AccountRole): Promise<AccountRow | undefined> {
    const [row] = await this.db.update(accounts).set({ role }).where(eq(accounts.id, id)).returning();
    return row;
  }

  /**
   * Sets the account's password hash and ends its sessions but `keepSessionTokenHash` (the session that asked,
   * when it is one of the account's), in one transaction; false when there is no such account.
   */
  async setPassword(input: {
    accountId: string;
    passwordHash: string;
    keepSessionTokenHash: string | null;
  }): Promise<boolean> {
    return this.db.transaction(async (transaction) => {
      const [row] = await transaction
        .update(accounts)
        .set({ passwordHash: input.passwordHash })
        .where(eq(accounts.id, input.accountId))
        .returning({ id: accounts.id });
      if (!row) return false;
      await transaction
        .delete(sessions)
        .where(
          and(
            eq(sessions.accountId, input.accountId),
            input.keepSessionTokenHash === null ? undefined : ne(sessions.tokenHash, input.keepSessionTokenHash),
          ),
        );
      return true;
    });
  }

  /** Disabling keeps the first moment it was disabled at; enabling clears it. */
  async setDisabled(id: string, disabled: boolean): Promise<AccountRow | undefined> {
    const [row] = await this.db
      .update(accounts)
      .set({ disabledAt: disabled ? sql`coalesce(${accounts.disabledAt}, now())` : null })
      .where(eq(accounts.id, id))
      .returning();
    return row;
  }

  /** Adds (or, negative, removes) credits in one statement and records the grant; undefined when no such account. */
  async addCredits(input: {
    accountId: string;
    amountNanos: bigint;
    grantId: string;
    note: string | null;
    /** Refuse (answer `below-zero`, change nothing) a removal that would take the balance below zero. */
    floorAtZero?: boolean;
  }): Promise<bigint | undefined | 'below-zero'> {
    return this.db.transaction(async (transaction) => {
      const [row] = await transaction
        .update(accounts)
        .set({ balanceNanos: sql`${accounts.balanceNanos} + ${input.amountNanos}` })
        .where(
          and(
            eq(accounts.id, input.accountId),
            input.floorAtZero ? sql`${accounts.balanceNanos} + ${input.amountNanos} >= 0` : undefined,
          ),
        )
        .returning({ balanceNanos: accounts.balanceNanos });
      if (!row) {
        // Inside the transaction, on its own connection: another of the pool's could be long in coming.
        const [exists] = await transaction
          .select({ id: accounts.id })
          .from(accounts)
          .where(eq(accounts.id, input.accountId))
          .limit(1);
        return input.floorAtZero && exists ? 'below-zero' : undefined;
      }
      await transaction
        .insert(creditGrants)
        .values({ id: input.grantId, accountId: input.accountId, amountNanos: input.amountNanos, note: input.note });
      return row.balanceNanos;
    });
  }
}
