import type {
  AuditAction,
  AuditActor,
  AuditEntry,
  AuditRequest,
  AuditState,
  AuditSubjectType,
  NewAuditEntry,
} from '../domain/audit-entry.ts';
import type { AccountsRepository } from '../storage/accounts-repository.ts';
import type { ApiKeysRepository } from '../storage/api-keys-repository.ts';
import type { AuditFilter, AuditLogRepository } from '../storage/audit-log-repository.ts';
import type { PageWindow } from '../storage/database.ts';
import type { MediaJobsRepository } from '../storage/media-jobs-repository.ts';
import { accountView } from './account-service.ts';
import { apiKeyView, rateLimitsView } from './api-key-service.ts';

export type { AuditFilter };

/** An entry as the admin and account APIs answer it: fields without a value are left out. */
export interface AuditEntryView {
  id: string;
  createdAt: string;
  action: AuditAction;
  actor: AuditActor;
  accountId?: string;
  subject: { type: AuditSubjectType; id?: string };
  before?: AuditState;
  after?: AuditState;
  request?: AuditRequest;
  clientAddress?: string;
  requestId?: string;
}

export interface AuditPage {
  results: AuditEntryView[];
  total: number;
  offset: number;
  limit: number;
}

/** What a change is made to: its type and id (null: a session, named by its account only). */
export interface AuditSubject {
  type: AuditSubjectType;
  id: string | null;
}

/** A subject as it stands: its state as the log keeps it, and the account it belongs to. */
export interface SubjectState {
  state: AuditState | null;
  accountId: string | null;
}

function view(entry: AuditEntry, options: { showAddress: boolean }): AuditEntryView {
  return {
    id: entry.id,
    createdAt: entry.createdAt.toISOString(),
    action: entry.action,
    actor: entry.actor,
    ...(entry.accountId === null ? {} : { accountId: entry.accountId }),
    subject:
      entry.subject.id === null ? { type: entry.subject.type } : { type: entry.subject.type, id: entry.subject.id },
    ...(entry.before === null ? {} : { before: entry.before }),
    ...(entry.after === null ? {} : { after: entry.after }),
    ...(entry.request === null ? {} : { request: entry.request }),
    ...(entry.clientAddress === null || !options.showAddress ? {} : { clientAddress: entry.clientAddress }),
    ...(entry.requestId === null ? {} : { requestId: entry.requestId }),
  };
}

/**
 * The audit log above its table: the state of what a change touches (as the log may keep it: no password
 * hash, no key, no token), entries written, and pages of them for the operator and for an account.
 */
export class AuditTrail {
  constructor(
    private readonly options: {
      log: AuditLogRepository;
      accounts: AccountsRepository;
      apiKeys: ApiKeysRepository;
      mediaJobs: MediaJobsRepository;
    },
  ) {}

  async stateOf(subject: AuditSubject): Promise<SubjectState> {
    if (subject.id === null) return { state: null, accountId: null };
    if (subject.type === 'account') {
      const row = await this.options.accounts.findById(subject.id);
      if (!row) return { state: null, accountId: subject.id };
      const { email, creditBalance } = accountView(row);
      return { state: { email, creditBalance, rateLimits: rateLimitsView(row) }, accountId: row.id };
    }
    if (subject.type === 'api-key') {
      const row = await this.options.apiKeys.findById(subject.id);
      if (!row) return { state: null, accountId: null };
      const { name, prefix, isActive, limits, rateLimits } = apiKeyView(row);
      return {
        state: {
          accountId: row.accountId,
          name,
          prefix,
          isActive,
          revoked: row.revokedAt !== null,
          limits,
          rateLimits,
        },
        accountId: row.accountId,
      };
    }
    if (subject.type === 'media-job') {
      const row = await this.options.mediaJobs.find(subject.id);
      if (!row) return { state: null, accountId: null };
      const { accountId, kind, model, state } = row;
      return { state: { accountId, kind, model, state }, accountId };
    }
    return { state: null, accountId: subject.id };
  }

  async record(entry: NewAuditEntry): Promise<void> {
    await this.options.log.append(entry);
  }

  /** The operator's page: every entry the filter matches, with the address each change came from. */
  async page(filter: AuditFilter, window: PageWindow): Promise<AuditPage> {
    const { entries, total } = await this.options.log.list(filter, window);
    return { results: entries.map((entry) => view(entry, { showAddress: true })), total, ...window };
  }

  /**
   * An account's page: the changes made to it and its keys, by itself or by the operator. The operator's
   * address is the operator's, not the account's to see.
   */
  async accountPage(accountId: string, filter: Omit<AuditFilter, 'accountId'>, window: PageWindow): Promise<AuditPage> {
    const { entries, total } = await this.options.log.list({ ...filter, accountId }, window);
    return {
      results: entries.map((entry) => view(entry, { showAddress: entry.actor.kind === 'account' })),
      total,
      ...window,
    };
  }
}
