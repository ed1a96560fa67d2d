import { GatewayError } from '../domain/errors.ts';
import type { ApiKeysRepository } from '../storage/api-keys-repository.ts';
import type { StorageEvent } from '../storage/database.ts';
import type { SessionsRepository } from '../storage/sessions-repository.ts';
import { apiKeyPrefix, lookupHashOf, sessionTokenPrefix } from './credential-codec.ts';
import type { SecretKeys } from './secret-keys.ts';

export type CredentialSource = 'x-api-key' | 'bearer' | 'cookie';

export type Principal =
  | { kind: 'key'; accountId: string; apiKeyId: string; keyName: string; source: CredentialSource }
  | { kind: 'session'; accountId: string; sessionTokenHash: string; source: CredentialSource };

interface CachedKey {
  principal: { accountId: string; apiKeyId: string; keyName: string } | null;
  expiresAt: number;
}

interface CachedSession {
  accountId: string;
  validUntil: number;
}

/** Entries are dropped on revocation events at once; the TTL only bounds memory and rare missed events. */
const cacheTtlMs = 60_000;
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

  constructor(
    private readonly secretKeys: SecretKeys,
    private readonly apiKeys: ApiKeysRepository,
    private readonly sessionStore: SessionsRepository,
  ) {}

  handleEvent(event: StorageEvent): void {
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
    }
  }

  /** The principal for a raw credential, or 401 naming what is wrong (never echoing the credential). */
  async authenticate(credential: string, source: CredentialSource): Promise<Principal> {
    if (credential.startsWith(sessionTokenPrefix) && source !== 'x-api-key') return this.authenticateSession(credential, source);
    // The session cookie carries a session, never an API key: a key planted in it would ride on the browser's cookie.
    if (source === 'cookie') throw invalid();
    if (!credential.startsWith(apiKeyPrefix) || credential.length > 200) throw invalid();
    const hash = lookupHashOf(this.secretKeys, credential);
    const now = Date.now();
    let cached = this.keys.get(hash);
    if (!cached || cached.expiresAt <= now) {
      const row = await this.apiKeys.findByLookupHash(hash);
      const usable = row && row.isActive && !row.revokedAt;
      cached = {
        principal: usable ? { accountId: row.accountId, apiKeyId: row.id, keyName: row.name } : null,
        expiresAt: now + (usable ? cacheTtlMs : negativeTtlMs),
      };
      this.remember(this.keys, hash, cached);
      if (row) this.keyHashById.set(row.id, hash);
    }
    if (!cached.principal) throw invalid();
    return { kind: 'key', ...cached.principal, source };
  }

  private async authenticateSession(token: string, source: CredentialSource): Promise<Principal> {
    const hash = lookupHashOf(this.secretKeys, token);
    const now = Date.now();
    let cached = this.sessions.get(hash);
    if (!cached || cached.validUntil <= now) {
      const row = await this.sessionStore.findLive(hash, new Date(now));
      if (!row) {
        this.sessions.delete(hash);
        throw new GatewayError('GW_INVALID_CREDENTIALS', 'the session token is invalid or expired');
      }
      cached = { accountId: row.accountId, validUntil: Math.min(row.expiresAt.getTime(), now + cacheTtlMs) };
      this.remember(this.sessions, hash, cached);
    }
    return { kind: 'session', accountId: cached.accountId, sessionTokenHash: hash, source };
  }

  private remember<T>(cache: Map<string, T>, hash: string, entry: T): void {
    if (cache.size >= maxCacheEntries) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    cache.set(hash, entry);
  }
}

function invalid(): GatewayError {
  return new GatewayError('GW_INVALID_CREDENTIALS', 'invalid API key: it does not exist, or it is revoked or disabled');
}
