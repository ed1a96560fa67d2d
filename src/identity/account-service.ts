import { GatewayError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { AccountRole } from '../domain/account-role.ts';
import { nanosToUsd, typedUsdToNanos } from '../domain/money.ts';
import type { AccountRow, AccountsRepository } from '../storage/accounts-repository.ts';
import type { Storage } from '../storage/database.ts';
import type { SessionsRepository } from '../storage/sessions-repository.ts';
import { generateSessionToken, lookupHashOf } from './credential-codec.ts';
import { decoyPasswordHash, hashPassword, verifyPassword } from './password-hasher.ts';
import type { SecretKeys } from './secret-keys.ts';

export interface AccountView {
  id: string;
  email: string;
  creditBalance: number;
  role: AccountRole;
}

export interface SessionGrant {
  token: string;
  expiresAt: Date;
  account: AccountView;
}

export interface AccountServiceOptions {
  accounts: AccountsRepository;
  sessions: SessionsRepository;
  storage: Pick<Storage, 'publish'>;
  secretKeys: SecretKeys;
  signupCreditsUsd: number;
  sessionTtlSeconds: number;
}

export function accountView(row: Pick<AccountRow, 'id' | 'email' | 'balanceNanos' | 'role'>): AccountView {
  return { id: row.id, email: row.email, creditBalance: nanosToUsd(row.balanceNanos), role: row.role };
}

/** The current password sent to change it is wrong (403): the sign-in throttle counts it as a failed sign-in. */
export class WrongPasswordError extends GatewayError {
  constructor() {
    super('GW_FORBIDDEN', 'the current password is wrong: nothing changed');
  }
}

/** Emails are compared case-insensitively: stored trimmed and lower-cased. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class AccountService {
  constructor(private readonly options: AccountServiceOptions) {}

  /** Creates an account (admin API, CLI); 409 when the email is taken. */
  async createAccount(input: {
    email: string;
    password?: string;
    creditsUsd?: number;
    note?: string;
  }): Promise<AccountView> {
    const id = newId('acct');
    const email = normaliseEmail(input.email);
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    const creditsNanos = typedUsdToNanos(input.creditsUsd ?? 0, 'credits', 'allowed');
    const created = await this.options.accounts.create({
      id,
      email,
      passwordHash,
      creditsNanos,
      grantId: newId('grant'),
      note: input.note ?? 'opening credits',
    });
    if (!created) throw new GatewayError('GW_CONFLICT', `an account with email "${email}" already exists`);
    return { id, email, creditBalance: nanosToUsd(creditsNanos), role: 'user' };
  }

  /**
   * A taken email answers 409 (from createAccount), which tells the caller the email has an account. The answer
   * cannot be the same as for a new email: signup opens a session at once, so a "success" for a taken email
   * would either sign the caller into someone else's account or hand out a token that does not work (which
   * tells the same thing). Hiding it needs email verification (every signup answering "check your mailbox"),
   * which this gateway does not have. Signups are throttled per client address, the password is hashed before
   * the insert either way (same timing), and login reveals nothing (see `login`).
   */
  async signup(email: string, password: string): Promise<SessionGrant> {
    const account = await this.createAccount({
      email,
      password,
      creditsUsd: this.options.signupCreditsUsd,
      note: 'signup credits',
    });
    return this.openSession(account);
  }

  /**
   * An unknown email, an account without a password and a wrong password get one answer, and each computes a
   * scrypt (the decoy hash when there is no stored one), so neither the answer nor its timing tells whether
   * the email has an account.
   */
  async login(email: string, password: string): Promise<SessionGrant> {
    const row = await this.options.accounts.findByEmail(normaliseEmail(email));
    const matches = await verifyPassword(password, row?.passwordHash ?? decoyPasswordHash);
    if (!row?.passwordHash || !matches) throw new GatewayError('GW_INVALID_CREDENTIALS', 'wrong email or password');
    // Told only to whoever knows the password: it reveals nothing a wrong one would not.
    if (row.disabledAt !== null)
      throw new GatewayError('GW_FORBIDDEN', 'this account is disabled by the operator: it cannot sign in');
    return this.openSession(accountView(row));
  }

  async logout(sessionTokenHash: string): Promise<void> {
    await this.options.sessions.deleteByTokenHash(sessionTokenHash);
    await this.options.storage.publish({ type: 'session-ended', tokenHash: sessionTokenHash });
  }

  /**
   * The owner's change of password (a session of the account): the current password must be right, or 403
   * (`WrongPasswordError`) and nothing changes. A scrypt is computed whether or not the account has a password,
   * as at login. Every other session of the account ends; the one that asked stays signed in.
   */
  async changePassword(input: {
    accountId: string;
    sessionTokenHash: string;
    currentPassword: string;
    newPassword: string;
  }): Promise<void> {
    const row = await this.options.accounts.findById(input.accountId);
    const matches = await verifyPassword(input.currentPassword, row?.passwordHash ?? decoyPasswordHash);
    if (!row) throw new GatewayError('GW_NOT_FOUND', `account "${input.accountId}" not found`);
    if (!row.passwordHash || !matches) throw new WrongPasswordError();
    await this.setPassword(row.id, input.newPassword, input.sessionTokenHash);
  }

  /**
   * Sets the account's password (the operator's: admin API, operator console, CLI; or the owner's, above), the
   * account's sessions ending with it in every process, but `keepSessionTokenHash` (the session that asked, when
   * it is the account's own). An account made without a password gets one this way.
   */
  async setPassword(accountId: string, password: string, keepSessionTokenHash: string | null = null): Promise<void> {
    const passwordHash = await hashPassword(password);
    const found = await this.options.accounts.setPassword({ accountId, passwordHash, keepSessionTokenHash });
    if (!found) throw new GatewayError('GW_NOT_FOUND', `account "${accountId}" not found`);
    // Every process forgets the account's cached sessions: the ended ones answer 401 from their next request.
    await this.options.storage.publish({ type: 'account-changed', accountId });
  }

  async getAccount(accountId: string): Promise<AccountView> {
    const row = await this.options.accounts.findById(accountId);
    if (!row) throw new GatewayError('GW_NOT_FOUND', `account "${accountId}" not found`);
    return accountView(row);
  }

  /**
   * Adds (or with a negative amount removes) credits; returns the new balance in USD. With `floorAtZero` (the
   * operator console) a removal past the balance is refused with 400, in the same statement that would make it.
   */
  async addCredits(accountId: string, amountUsd: number, note: string | null): Promise<number> {
    return this.adjustCredits(accountId, { amountUsd, note });
  }

  /** `addCredits`, optionally refusing a removal past the balance (`floorAtZero`). */
  async adjustCredits(
    accountId: string,
    { amountUsd, note, floorAtZero }: { amountUsd: number; note: string | null; floorAtZero?: boolean },
  ): Promise<number> {
    let balance: bigint | undefined | 'below-zero';
    try {
      balance = await this.options.accounts.addCredits({
        accountId,
        amountNanos: typedUsdToNanos(amountUsd, 'amount', 'refused'),
        grantId: newId('grant'),
        note,
        floorAtZero,
      });
    } catch (error) {
      // The balance column is a bigint of nanos (about ±9.2e9 USD); an adjustment past it fails the whole transaction.
      if (isNumericOutOfRange(error)) {
        throw new GatewayError(
          'GW_VALIDATION',
          `adding ${amountUsd} USD would take the balance of account "${accountId}" out of the storable range`,
        );
      }
      throw error;
    }
    if (balance === undefined) throw new GatewayError('GW_NOT_FOUND', `account "${accountId}" not found`);
    if (balance === 'below-zero')
      throw new GatewayError(
        'GW_VALIDATION',
        `amount: removing ${-amountUsd} USD would take the balance of account "${accountId}" below zero; nothing changed`,
      );
    // Credit leased before a removal would otherwise still admit requests the balance no longer covers.
    if (amountUsd < 0) await this.options.storage.publish({ type: 'give-back-credit', accountId });
    return nanosToUsd(balance);
  }

  /** The account named by its id or its email (the CLI takes either); 404 when there is none. */
  async findAccount(idOrEmail: string): Promise<AccountRow> {
    const row =
      (await this.options.accounts.findById(idOrEmail)) ??
      (await this.options.accounts.findByEmail(normaliseEmail(idOrEmail)));
    if (!row) throw new GatewayError('GW_NOT_FOUND', `account "${idOrEmail}" not found`);
    return row;
  }

  /**
   * Grants or removes the operator role. Every process forgets the account's cached sessions, so a session
   * opened before the change answers by the new role from its next request.
   */
  async setRole(accountId: string, role: AccountRole): Promise<AccountView> {
    const row = await this.options.accounts.setRole(accountId, role);
    if (!row) throw new GatewayError('GW_NOT_FOUND', `account "${accountId}" not found`);
    await this.options.storage.publish({ type: 'account-changed', accountId });
    return accountView(row);
  }

  /**
   * Disables or enables the account. Disabled, its keys and sessions are refused on every surface: the change
   * is published to every process (LISTEN/NOTIFY), which drops the account's cached credentials at once.
   */
  async setDisabled(accountId: string, disabled: boolean): Promise<AccountRow> {
    const row = await this.options.accounts.setDisabled(accountId, disabled);
    if (!row) throw new GatewayError('GW_NOT_FOUND', `account "${accountId}" not found`);
    await this.options.storage.publish({ type: 'account-changed', accountId });
    // Credit leased for the account's requests is given back: none will be admitted while it is disabled.
    if (disabled) await this.options.storage.publish({ type: 'give-back-credit', accountId });
    return row;
  }

  private async openSession(account: AccountView): Promise<SessionGrant> {
    const token = generateSessionToken();
    const expiresAt = new Date(Date.now() + this.options.sessionTtlSeconds * 1000);
    await this.options.sessions.insert({
      id: newId('sess'),
      accountId: account.id,
      tokenHash: lookupHashOf(this.options.secretKeys, token),
      expiresAt,
    });
    return { token, expiresAt, account };
  }
}

/** PostgreSQL's numeric_value_out_of_range (22003), possibly wrapped by the query builder as a `cause`. */
function isNumericOutOfRange(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if ((current as { code?: unknown }).code === '22003') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
