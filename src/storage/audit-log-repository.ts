import { and, count, desc, eq, gte, lt, or, type SQL } from 'drizzle-orm';
import {
  auditRequestCheck,
  auditStateCheck,
  isAuditAction,
  type AuditEntry,
  type AuditState,
  type NewAuditEntry,
} from '../domain/audit-entry.ts';
import { newId } from '../domain/ids.ts';
import type { Database, PageWindow } from './database.ts';
import { auditLog } from './schema.ts';

type AuditRow = typeof auditLog.$inferSelect;

/** Narrows the log; an absent field does not filter. */
export interface AuditFilter {
  /** `operator`, or the id of the account or key that acted. */
  actor?: string;
  /** The account the change concerns. */
  accountId?: string;
  action?: string;
  requestId?: string;
  /** From this moment on (inclusive). */
  since?: Date;
  /** Before this moment (exclusive). */
  until?: Date;
}

/**
 * The audit log's table. It has an insert and reads, and nothing else: no code path updates or deletes an
 * entry, and the database refuses both (trigger of migration 0012).
 */
export class AuditLogRepository {
  constructor(private readonly db: Database) {}

  /** Writes the entry, its JSON checked against its schema first. */
  async append(entry: NewAuditEntry): Promise<void> {
    for (const [field, state] of [
      ['before', entry.before],
      ['after', entry.after],
    ] as const) {
      if (state !== null && !auditStateCheck.check(state))
        throw new Error(`audit entry's ${field} does not fit its schema: ${auditStateCheck.problem(state)}`);
    }
    if (entry.request !== null && !auditRequestCheck.check(entry.request))
      throw new Error(`audit entry's request does not fit its schema: ${auditRequestCheck.problem(entry.request)}`);
    await this.db.insert(auditLog).values({
      id: newId('audit'),
      actorKind: entry.actor.kind,
      actorAccountId: entry.actor.accountId ?? null,
      actorApiKeyId: entry.actor.kind === 'account' ? (entry.actor.apiKeyId ?? null) : null,
      action: entry.action,
      accountId: entry.accountId,
      subjectType: entry.subject.type,
      subjectId: entry.subject.id,
      before: entry.before,
      after: entry.after,
      request: entry.request,
      clientAddress: entry.clientAddress,
      requestId: entry.requestId,
    });
  }

  /** One page of entries, newest first, with the count of all entries the filter matches. */
  async list(filter: AuditFilter, { offset, limit }: PageWindow): Promise<{ entries: AuditEntry[]; total: number }> {
    const where = matching(filter);
    const [rows, [totals]] = await Promise.all([
      this.db
        .select()
        .from(auditLog)
        .where(where)
        .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
        .offset(offset)
        .limit(limit),
      this.db.select({ value: count() }).from(auditLog).where(where),
    ]);
    return { entries: rows.map(entryOf), total: totals?.value ?? 0 };
  }
}

function matching(filter: AuditFilter): SQL | undefined {
  const { actor } = filter;
  return and(
    actor === undefined
      ? undefined
      : actor === 'operator'
        ? eq(auditLog.actorKind, 'operator')
        : or(eq(auditLog.actorAccountId, actor), eq(auditLog.actorApiKeyId, actor)),
    filter.accountId === undefined ? undefined : eq(auditLog.accountId, filter.accountId),
    filter.action === undefined ? undefined : eq(auditLog.action, filter.action),
    filter.requestId === undefined ? undefined : eq(auditLog.requestId, filter.requestId),
    filter.since === undefined ? undefined : gte(auditLog.createdAt, filter.since),
    filter.until === undefined ? undefined : lt(auditLog.createdAt, filter.until),
  );
}

function storedState(row: AuditRow, field: 'before' | 'after'): AuditState | null {
  const value = row[field];
  if (value === null) return null;
  if (!auditStateCheck.check(value))
    throw new Error(`audit entry ${row.id}: stored ${field} unreadable: ${auditStateCheck.problem(value)}`);
  return value;
}

function entryOf(row: AuditRow): AuditEntry {
  if (!isAuditAction(row.action)) throw new Error(`audit entry ${row.id}: unknown action "${row.action}"`);
  if (row.request !== null && !auditRequestCheck.check(row.request))
    throw new Error(`audit entry ${row.id}: stored request unreadable: ${auditRequestCheck.problem(row.request)}`);
  const actorAccountId = row.actorAccountId;
  return {
    id: row.id,
    createdAt: row.createdAt,
    actor:
      row.actorKind === 'account' && actorAccountId !== null
        ? { kind: 'account', accountId: actorAccountId, ...(row.actorApiKeyId ? { apiKeyId: row.actorApiKeyId } : {}) }
        : { kind: 'operator', ...(actorAccountId === null ? {} : { accountId: actorAccountId }) },
    action: row.action,
    accountId: row.accountId,
    subject: { type: row.subjectType, id: row.subjectId },
    before: storedState(row, 'before'),
    after: storedState(row, 'after'),
    request: row.request,
    clientAddress: row.clientAddress,
    requestId: row.requestId,
  };
}
