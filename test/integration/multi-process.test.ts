/**
 * Two gateway processes on one PostgreSQL database: no interleaving of their requests may overspend the
 * balance, and a charge or a key revoked through one process is seen by the other at once (LISTEN/NOTIFY cache
 * invalidation). The same processes under spend caps are multi-process-caps.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { useTwoGatewayProcesses } from '../support/two-gateway-processes.ts';

// On the run's PostgreSQL server (TEST_DATABASE_URL, or the embedded server the run started), as several
// gateway processes share one DATABASE_URL. The embedded default itself belongs to one process (its data
// directory is locked).
describe('two gateway processes on one PostgreSQL database', () => {
  const processes = useTwoGatewayProcesses();
  const { accountState, giveBackUnused, expectConservation, holdBoth, settleBoth, sumOf } = processes;

  it.each([
    // With room for 142 holds both processes hold some; with room for 14 one process may take them all.
    { withKey: true, credits: 10, seed: 100, bothHold: true },
    { withKey: false, credits: 1, seed: 200, bothHold: false },
  ])(
    'admits exactly the holds that fit the balance among 2 x 150 concurrent ones (API key: $withKey), and conserves every nano',
    async ({ withKey, credits, seed, bothHold }) => {
      const creditsNanos = usdToNanos(credits);
      const amount = usdToNanos(0.07);
      const fits = Number(creditsNanos / amount); // 142 of 300 with 10 USD, 14 with 1 USD
      const { accountId, keyId } = await processes.gateway.createFundedKey({ credits });
      const apiKeyId = withKey ? keyId : null;
      // With room for many, each process first takes one hold of its own and keeps it through the storm, so that
      // both hold some of the same credits whichever wakes first for it. Without, a process woken late on a busy
      // machine could find the other had taken all the credit (right for the ledger, and no test of two).
      const first = bothHold ? processes.workers.length : 0;
      if (bothHold)
        for (const worker of processes.workers) await worker.call('hold', { accountId, apiKeyId, amountNanos: amount });
      const results = await holdBoth({ accountId, apiKeyId, amountNanos: amount });
      expect(sumOf(results, (result) => result.admitted)).toBe(fits - first);
      expect(sumOf(results, (result) => result.refusals['GW_INSUFFICIENT_BALANCE/403'] ?? 0)).toBe(
        300 - (fits - first),
      );
      await giveBackUnused();
      const held = await accountState(accountId);
      expect(held).toMatchObject({ balanceNanos: creditsNanos, heldNanos: amount * BigInt(fits) });
      // One lease per process holds all of that process's holds.
      const holding = bothHold ? processes.workers.length : results.filter((result) => result.admitted > 0).length;
      expect(held.holds).toBe(holding);

      await expectConservation(accountId, creditsNanos, await settleBoth(seed));
    },
  );

  it("shows a charge to its own process's next read at once, and to another process's within a second", async () => {
    const [a] = processes.workers;
    const { key } = await a.call('createFundedKey', { credits: 5 });
    const balanceIn = {
      a: async () => {
        const read = await a.call('inject', {
          method: 'GET',
          url: '/api/compat/v1/balance',
          headers: { 'x-api-key': key },
        });
        return (JSON.parse(read.body) as { creditBalance: number }).creditBalance;
      },
      b: async () => {
        const read = await processes.gateway.app.inject({
          method: 'GET',
          url: '/api/compat/v1/balance',
          headers: { 'x-api-key': key },
        });
        return read.json<{ creditBalance: number }>().creditBalance;
      },
    };
    // Both processes have authenticated the key before: the reads below are what they cost warm.
    expect(await balanceIn.a()).toBe(5);
    expect(await balanceIn.b()).toBe(5);
    const answer = await a.call('inject', {
      method: 'POST',
      url: '/api/alpha/v1/embeddings',
      headers: { authorization: `Bearer ${key}` },
      payload: { model: 'sandbox-embedding', input: Array.from({ length: 128 }, (_, index) => `input ${index}`) },
      dropBody: true,
    });
    expect(answer.statusCode).toBe(200);
    // Process B (this one) has nothing of A's to wait for: it reads until A's settlement is written.
    const seenByB = (async () => {
      for (;;) {
        const balance = await balanceIn.b();
        if (balance < 5) return { balance, lagMs: Date.now() - answer.at };
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const readByA = await balanceIn.a();
    expect(readByA).toBeLessThan(5);
    const { balance, lagMs } = await seenByB;
    expect(balance).toBe(readByA);
    expect(lagMs).toBeLessThan(1_000);
  });

  it('has a key disabled, enabled and revoked through process A take effect in process B within a second', async () => {
    const [a, b] = processes.workers;
    const { accountId, keyId, key } = await processes.gateway.createFundedKey({ credits: 1 });
    // B authenticates the key (and caches it), then keeps re-authenticating it.
    const watching = await b.call('watchKey', { key, intervalMs: 20, timeoutMs: 20_000 });
    expect(watching.firstAttemptOk).toBe(true);

    const refusedAfterDisable = b.nextEvent('key-refused', 5_000);
    const disabled = await a.call('setActive', { accountId, keyId, isActive: false });
    const refusal = await refusedAfterDisable;
    expect(refusal.at - disabled.at).toBeLessThan(1_000);
    expect(refusal.acceptedCount).toBeGreaterThan(0);

    // Re-enabling must clear B's negative cache entry too (it would otherwise refuse for 5 s).
    const acceptedAfterEnable = b.nextEvent('key-accepted', 5_000);
    const enabled = await a.call('setActive', { accountId, keyId, isActive: true });
    expect((await acceptedAfterEnable).at - enabled.at).toBeLessThan(1_000);
    expect(await b.call('authenticate', { key })).toEqual({ ok: true });

    const refusedAfterRevoke = b.nextEvent('key-refused', 5_000);
    const revoked = await a.call('revoke', { accountId, keyId });
    expect((await refusedAfterRevoke).at - revoked.at).toBeLessThan(1_000);
    expect(await b.call('authenticate', { key })).toEqual({ ok: false, code: 'GW_INVALID_CREDENTIALS' });
    // And a hold through B's own ledger is refused as well.
    await expect(b.call('hold', { accountId, apiKeyId: keyId, amountNanos: 1n })).rejects.toMatchObject({
      code: 'GW_INVALID_CREDENTIALS',
    });
  });
});
