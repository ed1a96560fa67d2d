import { and, eq, gt, lt } from 'drizzle-orm';
import type { Database } from './database.ts';
import type { AccountRole } from '../domain/account-role.ts';
import type { RateLimitColumns } from './api-keys-repository.ts';
import { accounts, sessions } from './schema.ts';

/**
 * A live session with what authentication needs of its account: its role, whether it is disabled, and the
 * operator's rate limits, which a session's requests are admitted under.
 */
export interface SessionRow {
  id: string;
  accountId: string;
  expiresAt: Date;
  role: AccountRole;
  accountDisabledAt: Date | null;
  accountRateLimits: RateLimitColumns;
}

export class SessionsRepository {
  constructor(private readonly db: Database) {}

  async insert(input: { id: string; accountId: string; tokenHash: string; expiresAt: Date }): Promise<void> {
    await this.db.insert(sessions).values(input);
  }

  async findLive(tokenHash: string, now: Date): Promise<SessionRow | undefined> {
    const [row] = await this.db
      .select({
        id: sessions.id,
        accountId: sessions.accountId,
        expiresAt: sessions.expiresAt,
        role: accounts.role,
        accountDisabledAt: accounts.disabledAt,
        accountRateLimits: {
          requestsPerMinute: accounts.requestsPerMinute,
          tokensPerMinute: accounts.tokensPerMinute,
          concurrentRequests: accounts.concurrentRequests,
        },
      })
      .from(sessions)
      .innerJoin(accounts, eq(accounts.id, sessions.accountId))
      .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, now)))
      .limit(1);
    return row;
  }

  async deleteByTokenHash(tokenHash: string): Promise<boolean> {
    const rows = await this.db.delete(sessions).where(eq(sessions.tokenHash, tokenHash)).returning({ id: sessions.id });
    return rows.length > 0;
  }

  async deleteExpired(now: Date): Promise<number> {
    const rows = await this.db.delete(sessions).where(lt(sessions.expiresAt, now)).returning({ id: sessions.id });
    return rows.length;
  }
}
