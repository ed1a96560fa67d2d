import { currentSpend } from '../domain/spend-windows.ts';
import { GatewayError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { nanosToUsd, typedUsdToNanos, usdText } from '../domain/money.ts';
import { rateLimitNames, type RateLimits } from '../billing/rate-limits.ts';
import type { AccountsRepository } from '../storage/accounts-repository.ts';
import type { ApiKeyRow, ApiKeysRepository, SpendLimitsNanos } from '../storage/api-keys-repository.ts';
import type { Storage } from '../storage/database.ts';
import { displayPrefixOf, generateApiKey, lookupHashOf, sealSecret, unsealSecret } from './credential-codec.ts';
import type { SecretKeys } from './secret-keys.ts';

export const capNames = ['daily', 'weekly', 'monthly', 'total'] as const;
export type CapName = (typeof capNames)[number];

/** Caps in USD as clients write them; `null` removes a cap, an absent field leaves it alone. */
export type LimitsInput = Partial<Record<CapName, number | null>>;

/** Rate limits as clients write them: `null` removes one, an absent one is left alone. */
export type RateLimitsInput = Partial<Record<keyof RateLimits, number | null>>;

/** Rate limits as answered: those that are set. */
export type RateLimitsView = Partial<Record<keyof RateLimits, number>>;

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  isActive: boolean;
  limits: Partial<Record<CapName, number>>;
  /** The key's own rate limits (its account's apply where it has none). */
  rateLimits: RateLimitsView;
  createdAt: string;
}

export interface CapStatus {
  limit: number;
  spent: number;
  remaining: number;
}

/** What a key spent in one window (the current UTC day, ISO week, month, or ever), against its cap when it has one. */
export interface WindowSpend {
  spent: number;
  limit?: number;
  remaining?: number;
}

/** A key of the account's list: its record and its spend in every window. */
export type ApiKeyListItem = ApiKeyView & { spend: Record<CapName, WindowSpend> };

/** The spec's key lookup object: caps that are configured, and no balance. */
export type KeyLookup = { name: string; isActive: true } & Partial<Record<CapName, CapStatus>>;

export interface ApiKeyServiceOptions {
  apiKeys: ApiKeysRepository;
  /** The accounts' rate limits, the default of their keys. */
  accounts: AccountsRepository;
  storage: Pick<Storage, 'publish'>;
  secretKeys: SecretKeys;
  maxKeysPerAccount: number;
  clock?: () => Date;
}

const limitColumns = {
  daily: 'dailyLimitNanos',
  weekly: 'weeklyLimitNanos',
  monthly: 'monthlyLimitNanos',
  total: 'totalLimitNanos',
} as const;

/** How long a lowered cap waits for processes to give back credit leased for the key and not in use. */
const leasedCreditBackMs = 2000;

/**
 * The first cap `limits` lowers below what the key has committed under it while it holds credit for work under way:
 * spent in the cap's window and held, which the work would no longer be charged. Without work under way any cap
 * goes (one below what is spent stops the key's spending); a cap raised, removed or left as it is always does.
 */
function capBelowCommitted(
  row: ApiKeyRow,
  limits: Partial<SpendLimitsNanos>,
  now: Date,
): { cap: CapName; committedNanos: bigint; heldNanos: bigint } | undefined {
  if (row.heldNanos <= 0n) return undefined;
  const spent = currentSpend(row, now);
  for (const cap of capNames) {
    const limit = limits[cap];
    const before = row[limitColumns[cap]];
    if (limit === undefined || limit === null || (before !== null && limit >= before)) continue;
    const committedNanos = spent[cap] + row.heldNanos;
    if (limit < committedNanos) return { cap, committedNanos, heldNanos: row.heldNanos };
  }
  return undefined;
}

function limitsOf(row: ApiKeyRow): Partial<Record<CapName, bigint>> {
  const limits: Partial<Record<CapName, bigint>> = {};
  for (const cap of capNames) {
    const value = row[limitColumns[cap]];
    if (value !== null) limits[cap] = value;
  }
  return limits;
}

export function apiKeyView(row: ApiKeyRow): ApiKeyView {
  const limits = Object.fromEntries(Object.entries(limitsOf(row)).map(([cap, nanos]) => [cap, nanosToUsd(nanos)]));
  return {
    id: row.id,
    name: row.name,
    prefix: row.displayPrefix,
    isActive: row.isActive,
    limits,
    rateLimits: rateLimitsView(row),
    createdAt: row.createdAt.toISOString(),
  };
}

export function rateLimitsView(limits: RateLimits): RateLimitsView {
  const view: RateLimitsView = {};
  for (const name of rateLimitNames) {
    const value = limits[name];
    if (value !== null) view[name] = value;
  }
  return view;
}

function capStatus(limit: bigint, spent: bigint): CapStatus {
  const remaining = limit - spent;
  return { limit: nanosToUsd(limit), spent: nanosToUsd(spent), remaining: nanosToUsd(remaining > 0n ? remaining : 0n) };
}

function spendOf(row: ApiKeyRow, now: Date): Record<CapName, WindowSpend> {
  const spent = currentSpend(row, now);
  const limits = limitsOf(row);
  const window = (cap: CapName): WindowSpend => {
    const limit = limits[cap];
    return limit === undefined ? { spent: nanosToUsd(spent[cap]) } : capStatus(limit, spent[cap]);
  };
  return { daily: window('daily'), weekly: window('weekly'), monthly: window('monthly'), total: window('total') };
}

/** `fieldPrefix` places the caps in the request for error messages (`limits.` in a new key's body). */
function limitsToNanos(limits: LimitsInput, fieldPrefix: string): Partial<SpendLimitsNanos> {
  const nanos: Partial<SpendLimitsNanos> = {};
  for (const cap of capNames) {
    const value = limits[cap];
    if (value !== undefined)
      nanos[cap] = value === null ? null : typedUsdToNanos(value, `${fieldPrefix}${cap}`, 'allowed');
  }
  return nanos;
}

export class ApiKeyService {
  private readonly clock: () => Date;

  constructor(private readonly options: ApiKeyServiceOptions) {
    this.clock = options.clock ?? (() => new Date());
  }

  async create(
    accountId: string,
    input: { name: string; limits?: LimitsInput; rateLimits?: Partial<Record<keyof RateLimits, number>> },
  ): Promise<ApiKeyView & { key: string }> {
    const key = generateApiKey();
    const id = newId('key');
    const limits = limitsToNanos(input.limits ?? {}, 'limits.');
    const outcome = await this.options.apiKeys.createWithinLimit(
      {
        id,
        accountId,
        name: input.name,
        displayPrefix: displayPrefixOf(key),
        lookupHash: lookupHashOf(this.options.secretKeys, key),
        sealedKey: sealSecret(this.options.secretKeys, key),
        limits: {
          daily: limits.daily ?? null,
          weekly: limits.weekly ?? null,
          monthly: limits.monthly ?? null,
          total: limits.total ?? null,
        },
        rateLimits: {
          requestsPerMinute: input.rateLimits?.requestsPerMinute ?? null,
          tokensPerMinute: input.rateLimits?.tokensPerMinute ?? null,
          concurrentRequests: input.rateLimits?.concurrentRequests ?? null,
        },
      },
      this.options.maxKeysPerAccount,
    );
    if (outcome === 'no-account') throw new GatewayError('GW_NOT_FOUND', `account "${accountId}" not found`);
    if (outcome === 'limit-reached') {
      throw new GatewayError(
        'GW_KEY_LIMIT_REACHED',
        `the account already has the maximum of ${this.options.maxKeysPerAccount} API keys; revoke one first`,
      );
    }
    const row = await this.ownedKey(id, accountId);
    return { ...apiKeyView(row), key };
  }

  /** The account's keys, each with what it spent in the current windows. */
  async list(accountId: string): Promise<ApiKeyListItem[]> {
    const now = this.clock();
    return (await this.options.apiKeys.listForAccount(accountId)).map((row) => ({
      ...apiKeyView(row),
      spend: spendOf(row, now),
    }));
  }

  async reveal(accountId: string, keyId: string): Promise<string> {
    const row = await this.ownedKey(keyId, accountId);
    return unsealSecret(this.options.secretKeys, row.sealedKey);
  }

  /** `accountId` null means the operator (admin API), who may change any key. */
  async update(
    accountId: string | null,
    keyId: string,
    changes: { name?: string; isActive?: boolean },
  ): Promise<ApiKeyView> {
    await this.ownedKey(keyId, accountId);
    const row = await this.options.apiKeys.update(keyId, changes);
    if (!row) throw notFound(keyId);
    await this.options.storage.publish({ type: 'key-changed', keyId });
    return apiKeyView(row);
  }

  /**
   * Sets the key's caps. The operator's (`accountId` null) apply as given, to work under way too (charged no
   * further than they allow). The owner's may not fall below what the key has committed under a cap while work is
   * under way, spent in its window and held: lowered mid-flight, they would make that work free.
   */
  async setLimits(accountId: string | null, keyId: string, limits: LimitsInput): Promise<ApiKeyView> {
    await this.ownedKey(keyId, accountId);
    const nanos = limitsToNanos(limits, '');
    const row =
      accountId === null
        ? await this.options.apiKeys.setLimits(keyId, nanos)
        : await this.ownerSetsLimits(keyId, nanos);
    if (!row) throw notFound(keyId);
    await this.options.storage.publish({ type: 'key-changed', keyId });
    return apiKeyView(row);
  }

  /**
   * The owner's caps, none lowered below what is committed under it. Credit processes have leased for the key and
   * not promised to a request counts as held until given back, which a change of the key asks of them: refused
   * once, the change is tried again while they give it back (`leasedCreditBackMs`), then refused with 409.
   */
  private async ownerSetsLimits(keyId: string, limits: Partial<SpendLimitsNanos>): Promise<ApiKeyRow | undefined> {
    const refuses = (row: ApiKeyRow) => capBelowCommitted(row, limits, this.clock());
    let outcome = await this.options.apiKeys.setLimitsUnless(keyId, limits, refuses);
    if (outcome !== undefined && 'refused' in outcome) {
      await this.options.storage.publish({ type: 'key-changed', keyId });
      for (let waited = 0; waited < leasedCreditBackMs && outcome && 'refused' in outcome; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        outcome = await this.options.apiKeys.setLimitsUnless(keyId, limits, refuses);
      }
    }
    if (outcome === undefined) return undefined;
    if ('row' in outcome) return outcome.row;
    const { cap, committedNanos, heldNanos } = outcome.refused;
    throw new GatewayError(
      'GW_CONFLICT',
      `${cap}: the key holds ${usdText(heldNanos)} USD for work under way, which a cap below ${usdText(committedNanos)} USD (with what it spent ${cap === 'total' ? 'in all' : 'in this window'}) would leave unpaid; set it once that work has ended`,
    );
  }

  /** Sets the key's own rate limits; every process admits its requests under them from the next one. */
  async setRateLimits(accountId: string | null, keyId: string, limits: RateLimitsInput): Promise<ApiKeyView> {
    await this.ownedKey(keyId, accountId);
    const row = await this.options.apiKeys.setRateLimits(keyId, limits);
    if (!row) throw notFound(keyId);
    await this.options.storage.publish({ type: 'key-changed', keyId });
    return apiKeyView(row);
  }

  /** The account's rate limits, which its keys without limits of their own have. */
  async accountRateLimits(accountId: string): Promise<RateLimitsView> {
    const row = await this.options.accounts.findById(accountId);
    if (!row) throw new GatewayError('GW_NOT_FOUND', `account "${accountId}" not found`);
    return rateLimitsView(row);
  }

  /** Sets the account's rate limits; its keys are re-read by every process, so their defaults apply at once. */
  async setAccountRateLimits(accountId: string, limits: RateLimitsInput): Promise<RateLimitsView> {
    const row = await this.options.accounts.setRateLimits(accountId, limits);
    if (!row) throw new GatewayError('GW_NOT_FOUND', `account "${accountId}" not found`);
    for (const key of await this.options.apiKeys.listForAccount(accountId))
      await this.options.storage.publish({ type: 'key-changed', keyId: key.id });
    // The account's sessions are admitted under these limits too.
    await this.options.storage.publish({ type: 'account-changed', accountId });
    return rateLimitsView(row);
  }

  /** Revoking twice is refused with the reason (still a 404: the key is gone for its owner). */
  async revoke(accountId: string | null, keyId: string): Promise<void> {
    const row = await this.options.apiKeys.findById(keyId);
    if (!row || (accountId !== null && row.accountId !== accountId)) throw notFound(keyId);
    if (row.revokedAt || !(await this.options.apiKeys.revoke(keyId)))
      throw new GatewayError('GW_NOT_FOUND', `API key "${keyId}" is already revoked`);
    await this.options.storage.publish({ type: 'key-changed', keyId });
  }

  /** Caps with what was spent in the current windows, read fresh from storage. */
  async lookup(keyId: string): Promise<KeyLookup> {
    const row = await this.options.apiKeys.findById(keyId);
    if (!row?.isActive || row.revokedAt)
      throw new GatewayError('GW_INVALID_CREDENTIALS', 'the API key is revoked or disabled');
    const spent = currentSpend(row, this.clock());
    const lookup: KeyLookup = { name: row.name, isActive: true };
    for (const [cap, limit] of Object.entries(limitsOf(row)) as [CapName, bigint][])
      lookup[cap] = capStatus(limit, spent[cap]);
    return lookup;
  }

  private async ownedKey(keyId: string, accountId: string | null): Promise<ApiKeyRow> {
    const row = await this.options.apiKeys.findById(keyId);
    if (!row || row.revokedAt || (accountId !== null && row.accountId !== accountId)) throw notFound(keyId);
    return row;
  }
}

function notFound(keyId: string): GatewayError {
  return new GatewayError('GW_NOT_FOUND', `API key "${keyId}" not found`);
}
