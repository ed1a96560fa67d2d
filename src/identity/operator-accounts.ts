import { GatewayError } from '../domain/errors.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { AccountSearchRepository, ListedAccountRow } from '../storage/account-search-repository.ts';
import type { PageWindow } from '../storage/database.ts';
import { type AccountService, type AccountView, accountView } from './account-service.ts';

/** An account as the operator console lists it. */
export interface OperatorAccountView extends AccountView {
  disabled: boolean;
  /** Its unrevoked keys. */
  keyCount: number;
  createdAt: string;
}

/** An account as the operator console shows it: also what is held for requests under way, and what it spent. */
export interface OperatorAccountDetail extends OperatorAccountView {
  /** USD held for requests and jobs under way. */
  held: number;
  /** USD charged over all its usage records. */
  spent: number;
  generations: number;
}

export interface OperatorAccountPage {
  results: OperatorAccountView[];
  total: number;
  offset: number;
  limit: number;
}

function listed(row: ListedAccountRow): OperatorAccountView {
  return {
    ...accountView(row),
    disabled: row.disabledAt !== null,
    keyCount: row.keyCount,
    createdAt: row.createdAt.toISOString(),
  };
}

/** The operator console's accounts: search, view, credit with a reason, disable and enable. */
export class OperatorAccounts {
  constructor(private readonly options: { search: AccountSearchRepository; accounts: AccountService }) {}

  async search(email: string | undefined, window: PageWindow): Promise<OperatorAccountPage> {
    const { rows, total } = await this.options.search.search(email, window);
    return { results: rows.map(listed), total, ...window };
  }

  async view(accountId: string): Promise<OperatorAccountDetail> {
    const [row, spend] = await Promise.all([this.options.search.find(accountId), this.options.search.spend(accountId)]);
    if (!row) throw new GatewayError('GW_NOT_FOUND', `account "${accountId}" not found`);
    return {
      ...listed(row),
      held: nanosToUsd(row.heldNanos),
      spent: nanosToUsd(spend.spentNanos),
      generations: spend.generations,
    };
  }

  /**
   * Grants (positive) or removes (negative) credit through the admin API's credit path, the reason kept as the
   * ledger's note. A removal that would take the balance below zero is refused (400) and changes nothing.
   */
  async adjustCredits(accountId: string, amountUsd: number, reason: string): Promise<OperatorAccountDetail> {
    await this.options.accounts.adjustCredits(accountId, { amountUsd, note: reason, floorAtZero: true });
    return this.view(accountId);
  }

  /**
   * Sets the account's password (the admin API's), ending its sessions in every process; the operator's own
   * session stays signed in when the account is their own (`operatorSessionTokenHash` names no other's session).
   */
  async setPassword(
    accountId: string,
    { password, operatorSessionTokenHash }: { password: string; operatorSessionTokenHash: string },
  ): Promise<void> {
    await this.options.accounts.setPassword(accountId, password, operatorSessionTokenHash);
  }

  /** An operator cannot disable their own account: they would lock themselves out of the console. */
  async setDisabled(accountId: string, disabled: boolean, operatorAccountId: string): Promise<OperatorAccountDetail> {
    if (disabled && accountId === operatorAccountId)
      throw new GatewayError('GW_VALIDATION', 'accountId: an operator cannot disable their own account');
    await this.options.accounts.setDisabled(accountId, disabled);
    return this.view(accountId);
  }
}
