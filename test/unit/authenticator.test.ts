import { describe, expect, it } from 'vitest';
import { noRateLimits } from '../../src/billing/rate-limits.ts';
import { Authenticator } from '../../src/identity/authenticator.ts';
import { generateApiKey, generateSessionToken } from '../../src/identity/credential-codec.ts';
import { deriveSecretKeys } from '../../src/identity/secret-keys.ts';
import type { CredentialRow } from '../../src/storage/api-keys-repository.ts';
import type { SessionRow } from '../../src/storage/sessions-repository.ts';

const secretKeys = deriveSecretKeys('unit-authenticator-secret'.padEnd(40, '0'));

function keyRow(revoked: boolean, accountDisabled = false): CredentialRow {
  const now = new Date();
  return {
    id: 'key_1',
    accountId: 'acct_1',
    name: 'k',
    displayPrefix: 'gwk_x',
    lookupHash: 'h',
    sealedKey: 's',
    isActive: true,
    revokedAt: revoked ? now : null,
    dailyLimitNanos: null,
    weeklyLimitNanos: null,
    monthlyLimitNanos: null,
    totalLimitNanos: null,
    requestsPerMinute: null,
    tokensPerMinute: null,
    concurrentRequests: null,
    heldNanos: 0n,
    spentTotalNanos: 0n,
    dayStart: null,
    spentDayNanos: 0n,
    weekStart: null,
    spentWeekNanos: 0n,
    monthStart: null,
    spentMonthNanos: 0n,
    capAlerts: false,
    createdAt: now,
    updatedAt: now,
    accountRateLimits: { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null },
    accountDisabledAt: accountDisabled ? now : null,
  };
}

/** A lookup the test answers when it chooses: what the database held when the read began, returned later. */
function controllableLookups<T>(): { lookup: () => Promise<T>; answer: (value: T) => void; calls: () => number } {
  const pending: Array<(value: T) => void> = [];
  let calls = 0;
  return {
    lookup: () => {
      calls++;
      return new Promise<T>((resolve) => pending.push(resolve));
    },
    answer: (value) => pending.shift()?.(value),
    calls: () => calls,
  };
}

describe('Authenticator cache epoch', () => {
  it('does not cache a key read begun before a forget-everything (listener reconnect) and ended after it', async () => {
    const keys = controllableLookups<CredentialRow | undefined>();
    const sessions = controllableLookups<SessionRow | undefined>();
    const authenticator = new Authenticator({
      secretKeys,
      apiKeys: { findByLookupHash: keys.lookup },
      sessions: { findLive: sessions.lookup },
    });
    const key = generateApiKey();

    // The read starts during the LISTEN outage and sees the key before its revocation...
    const stale = authenticator.authenticate(key, 'bearer');
    // ...the listener reconnects and the caches forget everything (the revocation's event was lost)...
    authenticator.handleEvent({ type: 'key-changed', keyId: '*' });
    // ...then the read returns the row from before the revocation.
    keys.answer(keyRow(false));
    expect(await stale).toMatchObject({ kind: 'key', apiKeyId: 'key_1' });

    // The next request reads again (nothing was cached) and sees the revocation.
    const next = authenticator.authenticate(key, 'bearer');
    expect(keys.calls()).toBe(2);
    keys.answer(keyRow(true));
    await expect(next).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS' });
  });

  it('still caches a key read within one epoch', async () => {
    const keys = controllableLookups<CredentialRow | undefined>();
    const sessions = controllableLookups<SessionRow | undefined>();
    const authenticator = new Authenticator({
      secretKeys,
      apiKeys: { findByLookupHash: keys.lookup },
      sessions: { findLive: sessions.lookup },
    });
    const key = generateApiKey();
    const first = authenticator.authenticate(key, 'bearer');
    keys.answer(keyRow(false));
    await first;
    await authenticator.authenticate(key, 'bearer');
    expect(keys.calls()).toBe(1);
  });

  it('does not cache a session read begun before a forget-everything and ended after it', async () => {
    const keys = controllableLookups<CredentialRow | undefined>();
    const sessions = controllableLookups<SessionRow | undefined>();
    const authenticator = new Authenticator({
      secretKeys,
      apiKeys: { findByLookupHash: keys.lookup },
      sessions: { findLive: sessions.lookup },
    });
    const token = generateSessionToken();
    const live: SessionRow = {
      id: 'sess_1',
      accountId: 'acct_1',
      expiresAt: new Date(Date.now() + 3_600_000),
      role: 'user',
      accountDisabledAt: null,
      accountRateLimits: noRateLimits,
    };

    const stale = authenticator.authenticate(token, 'cookie');
    authenticator.handleEvent({ type: 'key-changed', keyId: '*' });
    sessions.answer(live);
    expect(await stale).toMatchObject({ kind: 'session', accountId: 'acct_1' });

    const next = authenticator.authenticate(token, 'cookie');
    expect(sessions.calls()).toBe(2);
    sessions.answer(undefined);
    await expect(next).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS' });
  });

  it('does not cache a key or a session read before its own revocation or sign-out whose event came during the read', async () => {
    const keys = controllableLookups<CredentialRow | undefined>();
    const sessions = controllableLookups<SessionRow | undefined>();
    const authenticator = new Authenticator({
      secretKeys,
      apiKeys: { findByLookupHash: keys.lookup },
      sessions: { findLive: sessions.lookup },
    });
    const key = generateApiKey();
    const readKey = authenticator.authenticate(key, 'bearer');
    // The key is revoked while its read is on the way back; the revocation's event comes first.
    authenticator.handleEvent({ type: 'key-changed', keyId: 'key_1' });
    keys.answer(keyRow(false));
    await readKey;
    const nextKey = authenticator.authenticate(key, 'bearer');
    expect(keys.calls()).toBe(2);
    keys.answer(keyRow(true));
    await expect(nextKey).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS' });

    const token = generateSessionToken();
    const readSession = authenticator.authenticate(token, 'bearer');
    authenticator.handleEvent({ type: 'session-ended', tokenHash: 'another-or-this' });
    sessions.answer({
      id: 'sess_1',
      accountId: 'acct_1',
      expiresAt: new Date(Date.now() + 3_600_000),
      role: 'user',
      accountDisabledAt: null,
      accountRateLimits: noRateLimits,
    });
    await readSession;
    const nextSession = authenticator.authenticate(token, 'bearer');
    expect(sessions.calls()).toBe(2);
    sessions.answer(undefined);
    await expect(nextSession).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS' });
  });
});

describe('Authenticator and account changes', () => {
  const live = (role: SessionRow['role'], disabled: boolean): SessionRow => ({
    id: 'sess_1',
    accountId: 'acct_1',
    expiresAt: new Date(Date.now() + 3_600_000),
    role,
    accountDisabledAt: disabled ? new Date() : null,
    accountRateLimits: noRateLimits,
  });

  it("refuses a disabled account's key, and forgets the refusal once the account is enabled", async () => {
    let disabled = true;
    let reads = 0;
    const authenticator = new Authenticator({
      secretKeys,
      apiKeys: {
        findByLookupHash: async () => {
          reads++;
          return keyRow(false, disabled);
        },
      },
      sessions: { findLive: async () => undefined },
    });
    const key = generateApiKey();
    await expect(authenticator.authenticate(key, 'bearer')).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS' });
    disabled = false;
    // The refusal is cached (5 s) until the account's change is heard.
    await expect(authenticator.authenticate(key, 'bearer')).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS' });
    expect(reads).toBe(1);
    authenticator.handleEvent({ type: 'account-changed', accountId: 'acct_1' });
    expect(await authenticator.authenticate(key, 'bearer')).toMatchObject({ kind: 'key', accountId: 'acct_1' });
    // And a cached acceptance is dropped when the account is disabled again.
    disabled = true;
    authenticator.handleEvent({ type: 'account-changed', accountId: 'acct_1' });
    await expect(authenticator.authenticate(key, 'bearer')).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS' });
  });

  it("carries the session's role, read again when the account changes; a disabled account's session is refused", async () => {
    let row = live('user', false);
    const authenticator = new Authenticator({
      secretKeys,
      apiKeys: { findByLookupHash: async () => undefined },
      sessions: { findLive: async () => row },
    });
    const token = generateSessionToken();
    expect(await authenticator.authenticate(token, 'cookie')).toMatchObject({ kind: 'session', role: 'user' });
    row = live('operator', false);
    expect(await authenticator.authenticate(token, 'cookie')).toMatchObject({ role: 'user' });
    authenticator.handleEvent({ type: 'account-changed', accountId: 'acct_2' });
    expect(await authenticator.authenticate(token, 'cookie')).toMatchObject({ role: 'user' });
    authenticator.handleEvent({ type: 'account-changed', accountId: 'acct_1' });
    expect(await authenticator.authenticate(token, 'cookie')).toMatchObject({ role: 'operator' });
    row = live('operator', true);
    authenticator.handleEvent({ type: 'account-changed', accountId: 'acct_1' });
    await expect(authenticator.authenticate(token, 'cookie')).rejects.toMatchObject({ code: 'GW_INVALID_CREDENTIALS' });
  });
});
