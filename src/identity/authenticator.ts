import { effectiveRateLimits, hasRateLimits, type RateLimits } from '../billing/rate-limits.ts';
import type { AccountRole } from '../domain/account-role.ts';
import { GatewayError } from '../domain/errors.ts';
import type { ApiKeysRepository, CredentialRow } from '../storage/api-keys-repository.ts';
import type { StorageEvent } from '../storage/storage-events.ts';
import type { SessionsRepository } from '../storage/sessions-repository.ts';
import { apiKeyPrefix, lookupHashOf, sessionTokenPrefix } from './credential-codec.ts';
import type { SecretKeys } from './secret-keys.ts';

/** Where a credential came from; `query` is gamma's `?key=`, which carries API keys only. */
export type CredentialSource = 'x-api-key' | 'bearer' | 'cookie' | 'query';

export type Principal =
  | {
      kind: 'key';
      accountId: string;
      apiKeyId: string;
      keyName: string;
      source: CredentialSource;
      rateLimits: RateLimits | null;
    }
  | {
      kind: 'session';
      accountId: string;
      role: AccountRole;
      sessionTokenHash: string;
      source: CredentialSource;
      /** The account's limits (null: none), which the account's sessions are admitted under together. */
      rateLimits: RateLimits | null;
    };

interface CachedKey {
  /** `rateLimits` null: the key has none (its own or its account's), so admission skips the limiter. */
  principal: { accountId: string; apiKeyId: string; keyName: string; rateLimits: RateLimits | null } | null;
  expiresAt: number;
  /** When it was read from the database. */
  readAt: number;
  /** The key's account, also for a refused key (its account disabled), so enabling the account forgets the refusal. */
  accountId: string | undefined;
}

interface CachedSession {
  accountId: string;
  role: AccountRole;
  rateLimits: RateLimits | null;
  validUntil: number;
  readAt: number;
}

/** Entries are dropped on revocation events at once; the TTL only bounds memory and rare missed events. */
const cacheTtlMs = 60_000;
/**
 * While revocation events may be missed (this process's LISTEN connection is down, until it listens again and
 * the caches were cleared), an entry is trusted this long after it was read: a key revoked, disabled or
 * logged out through another process is refused here within this bound, at the cost of one database read
 * per credential and bound while the outage lasts.
 */
export const unlistenedTrustMs = 1_000;
const maxCacheEntries = 50_000;
/** Unknown credentials are remembered briefly so a flood of one bad key does not hit the database each time. */
const negativeTtlMs = 5_000;

/**
 * Turns a credential into a principal. Keys and sessions are looked up by keyed hash and cached in
 * process; revocation, disabling and logout reach every process through storage events.
 */
export class Authenticator {
  private readonly keys = new Map<string, CachedKey>();
  private readonly keyHashById = new Map<string, string>();
  private readonly sessions = new Map<string, CachedSession>();
  /**
   * Bumped by every event that forgets something (a key changed or revoked, a session ended, an account changed,
   * a forget-everything). A lookup that began before one and ends after it may have read a row from before the
   * change: its answer serves that one request but is not cached, or the change would be missed for the full TTL.
   */
  private epoch = 0;

  private readonly secretKeys: SecretKeys;
  private readonly apiKeys: Pick<ApiKeysRepository, 'findByLookupHash'>;
  private readonly sessionStore: Pick<SessionsRepository, 'findLive'>;
  private readonly eventsArrive: () => boolean;

  constructor(dependencies: {
    secretKeys: SecretKeys;
    apiKeys: Pick<ApiKeysRepository, 'findByLookupHash'>;
    sessions: Pick<SessionsRepository, 'findLive'>;
    /** Whether this process receives every storage event now (Storage.listening); entries are trusted briefly when not. */
    eventsArrive?: () => boolean;
  }) {
    this.secretKeys = dependencies.secretKeys;
    this.apiKeys = dependencies.apiKeys;
    this.sessionStore = dependencies.sessions;
    this.eventsArrive = dependencies.eventsArrive ?? (() => true);
  }

  handleEvent(event: StorageEvent): void {
    if (event.type === 'key-changed' || event.type === 'session-ended') this.epoch++;
    if (event.type === 'key-changed') {
      if (event.keyId === '*') {
        this.keys.clear();
        this.keyHashById.clear();
        this.sessions.clear();
        return;
      }
      const hash = this.keyHashById.get(event.keyId);
      if (hash) this.keys.delete(hash);
      this.keyHashById.delete(event.keyId);
    } else if (event.type === 'session-ended') {
      this.sessions.delete(event.tokenHash);
    } else if (event.type === 'account-changed') {
      this.forgetAccount(event.accountId);
    }
  }

  /**
   * Drops every cached key and session of the account (disabled, enabled, or its role changed). Rare, so a
   * walk over the caches is cheap enough; a lookup under way may have read the account before the change, so
   * its answer is not cached (the epoch moves).
   */
  private forgetAccount(accountId: string): void {
    this.epoch++;
    for (const [hash, entry] of this.keys) if (entry.accountId === accountId) this.keys.delete(hash);
    for (const [hash, entry] of this.sessions) if (entry.accountId === accountId) this.sessions.delete(hash);
  }

  /** The principal for a raw credential, or 401 naming what is wrong (never echoing the credential). */
  async authenticate(credential: string, source: CredentialSource): Promise<Principal> {
    if (credential.startsWith(sessionTokenPrefix) && source !== 'x-api-key' && source !== 'query')
      return this.authenticateSession(credential, source);
    // The session cookie carries a session, never an API key: a key planted in it would ride on the browser's cookie.
    if (source === 'cookie') throw invalid();
    if (!credential.startsWith(apiKeyPrefix) || credential.length > 200) throw invalid();
    const hash = lookupHashOf(this.secretKeys, credential);
    const now = Date.now();
    let cached = this.keys.get(hash);
    if (!cached || cached.expiresAt <= now || this.untrusted(cached.readAt, now)) {
      const epoch = this.epoch;
      const row = await this.apiKeys.findByLookupHash(hash);
      const usable = row?.isActive && !row.revokedAt && row.accountDisabledAt === null;
      cached = {
        principal: usable
          ? { accountId: row.accountId, apiKeyId: row.id, keyName: row.name, rateLimits: rateLimitsOf(row) }
          : null,
        expiresAt: now + (usable ? cacheTtlMs : negativeTtlMs),
        readAt: now,
        accountId: row?.accountId,
      };
      if (epoch === this.epoch) {
        this.remember(this.keys, hash, cached);
        if (row) this.keyHashById.set(row.id, hash);
      }
    }
    if (!cached.principal) throw invalid();
    return { kind: 'key', ...cached.principal, source };
  }

  private async authenticateSession(token: string, source: CredentialSource): Promise<Principal> {
    const hash = lookupHashOf(this.secretKeys, token);
    const now = Date.now();
    let cached = this.sessions.get(hash);
    if (!cached || cached.validUntil <= now || this.untrusted(cached.readAt, now)) {
      const epoch = this.epoch;
      const row = await this.sessionStore.findLive(hash, new Date(now));
      if (!row) {
        this.sessions.delete(hash);
        throw new GatewayError('GW_INVALID_CREDENTIALS', 'the session token is invalid or expired');
      }
      if (row.accountDisabledAt !== null) {
        this.sessions.delete(hash);
        throw new GatewayError('GW_INVALID_CREDENTIALS', 'the account of this session is disabled by the operator');
      }
      cached = {
        accountId: row.accountId,
        role: row.role,
        rateLimits: hasRateLimits(row.accountRateLimits) ? row.accountRateLimits : null,
        validUntil: Math.min(row.expiresAt.getTime(), now + cacheTtlMs),
        readAt: now,
      };
      if (epoch === this.epoch) this.remember(this.sessions, hash, cached);
    }
    const { accountId, role, rateLimits } = cached;
    return { kind: 'session', accountId, role, sessionTokenHash: hash, source, rateLimits };
  }

  /** An entry read too long ago to be trusted while events may be missed. */
  private untrusted(readAt: number, now: number): boolean {
    return now - readAt >= unlistenedTrustMs && !this.eventsArrive();
  }

  private remember<T>(cache: Map<string, T>, hash: string, entry: T): void {
    if (cache.size >= maxCacheEntries) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    cache.set(hash, entry);
  }
}

/** The limits a key's requests are admitted under, or null when it has none. */
function rateLimitsOf(row: CredentialRow): RateLimits | null {
  const limits = effectiveRateLimits(row, row.accountRateLimits);
  return hasRateLimits(limits) ? limits : null;
}

function invalid(): GatewayError {
  return new GatewayError('GW_INVALID_CREDENTIALS', 'invalid API key: it does not exist, or it is revoked or disabled');
}
