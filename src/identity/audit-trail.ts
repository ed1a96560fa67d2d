import {
  recordableRequest,
  type AuditAction,
  type AuditActor,
  type AuditEntry,
  type AuditRequest,
  type AuditState,
  type AuditSubjectType,
} from '../domain/audit-entry.ts';
import type { AccountsRepository } from '../storage/accounts-repository.ts';
import type { ApiKeysRepository } from '../storage/api-keys-repository.ts';
import type { AuditFilter, AuditLogRepository } from '../storage/audit-log-repository.ts';
import type { PageWindow } from '../storage/database.ts';
import type { MediaJobsRepository } from '../storage/media-jobs-repository.ts';
import type { ProviderKeysRepository } from '../storage/provider-keys-repository.ts';
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

/** A change that succeeded, as its entry is written: who, what, its subject's state before, and whence. */
export interface RecordedChange {
  actor: (accountId: string | null) => AuditActor;
  action: AuditAction;
  subject: AuditSubject;
  before: SubjectState | null;
  /** What the subject is after the change, where it is not read back from storage (a configuration reload's diff). */
  after?: SubjectState;
  request: AuditRequest | null;
  clientAddress: string | null;
  requestId: string | null;
}

/** A subject as it stands: its state as the log keeps it, and the account it belongs to. */
export interface SubjectState {
  state: AuditState | null;
  accountId: string | null;
}

function view(entry: AuditEntry, options: { showAddress: boolean; showOperator: boolean }): AuditEntryView {
  return {
    id: entry.id,
    createdAt: entry.createdAt.toISOString(),
    action: entry.action,
    actor: entry.actor.kind === 'operator' && !options.showOperator ? { kind: 'operator' } : entry.actor,
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
      /** The catalog's models as the log keeps them (the runtime catalog). */
      models?: { auditState(modelId: string): AuditState | null };
      /** Providers' runtime upstream keys (admin API). */
      providerKeys?: ProviderKeysRepository;
    },
  ) {}

  async stateOf(subject: AuditSubject): Promise<SubjectState> {
    if (subject.id === null) return { state: null, accountId: null };
    if (subject.type === 'account') {
      const row = await this.options.accounts.findById(subject.id);
      if (!row) return { state: null, accountId: subject.id };
      const { email, creditBalance, role } = accountView(row);
      return {
        state: { email, creditBalance, rateLimits: rateLimitsView(row), role, disabled: row.disabledAt !== null },
        accountId: row.id,
      };
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
    if (subject.type === 'model')
      return { state: this.options.models?.auditState(subject.id) ?? null, accountId: null };
    if (subject.type === 'provider-key') {
      const row = await this.options.providerKeys?.find(subject.id);
      if (!row) return { state: null, accountId: null };
      const { providerId, label, weight, isActive, keyEnding } = row;
      return {
        state: { providerId, ...(label === null ? {} : { label }), weight, isActive, keyEnding },
        accountId: null,
      };
    }
    // A provider row concerns no account; a session is named by its account.
    return { state: null, accountId: subject.type === 'session' ? subject.id : null };
  }

  /**
   * Writes the entry of a change that succeeded: the subject's state now is its `after`. The actor may depend
   * on the account the change concerns (signing up or in, the account is the actor). A session is named by its
   * account only: its id and token are secrets.
   */
  async recordChange(change: RecordedChange): Promise<void> {
    const after = change.after ?? (await this.stateOf(change.subject));
    const accountId = after.accountId ?? change.before?.accountId ?? null;
    await this.options.log.append({
      actor: change.actor(accountId),
      action: change.action,
      accountId,
      subject: change.subject.type === 'session' ? { type: 'session', id: null } : change.subject,
      before: change.before?.state ?? null,
      after: after.state,
      request: change.request,
      clientAddress: change.clientAddress,
      requestId: change.requestId,
    });
  }

  /**
   * A change the operator makes outside HTTP (the CLI): the subject's state read before `run` (when its id is
   * known before), and the entry written once `run` succeeded, without address or request id.
   */
  async operatorChange<T>(
    change: { action: AuditAction; subject: AuditSubject | ((result: T) => AuditSubject); request: object },
    run: () => Promise<T>,
  ): Promise<T> {
    const known = typeof change.subject === 'function' ? null : change.subject;
    const before = known ? await this.stateOf(known) : null;
    const result = await run();
    await this.recordChange({
      actor: () => ({ kind: 'operator' }),
      action: change.action,
      subject: known ?? (typeof change.subject === 'function' ? change.subject(result) : change.subject),
      before,
      request: recordableRequest(change.request),
      clientAddress: null,
      requestId: null,
    });
    return result;
  }

  /** The operator's page: every entry the filter matches, with the address each change came from. */
  async page(filter: AuditFilter, window: PageWindow): Promise<AuditPage> {
    const { entries, total } = await this.options.log.list(filter, window);
    return {
      results: entries.map((entry) => view(entry, { showAddress: true, showOperator: true })),
      total,
      ...window,
    };
  }

  /**
   * An account's page: the changes made to it and its keys, by itself or by the operator. Which operator (the
   * account a console session signed in as) and from which address are the operator's, not the account's to see.
   */
  async accountPage(accountId: string, filter: Omit<AuditFilter, 'accountId'>, window: PageWindow): Promise<AuditPage> {
    const { entries, total } = await this.options.log.list({ ...filter, accountId }, window);
    return {
      results: entries.map((entry) =>
        view(entry, { showAddress: entry.actor.kind === 'account', showOperator: false }),
      ),
      total,
      ...window,
    };
  }
}
