/**
 * Two gateway processes on one PostgreSQL database under a key's spend caps: no interleaving of their requests
 * may overspend a daily or total cap, and the books stay exact while both hold and settle at once. The balance
 * and cross-process visibility are multi-process.test.ts.
 */
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { apiKeys } from '../../src/storage/schema.ts';
import type { StormResult } from '../support/ledger-worker.ts';
import { useTwoGatewayProcesses } from '../support/two-gateway-processes.ts';

// On the run's PostgreSQL server (TEST_DATABASE_URL, or the embedded server the run started), as several
// gateway processes share one DATABASE_URL. The embedded default itself belongs to one process (its data
// directory is locked).
describe('two gateway processes on one PostgreSQL database, under spend caps', () => {
  const processes = useTwoGatewayProcesses();
  const { db, accountState, expectConservation, holdBoth, settleBoth, sumOf } = processes;

  it.each(['daily', 'total'] as const)(
    'admits exactly what fits under a %s cap across both processes; spend never exceeds it',
    async (cap) => {
      const capNanos = usdToNanos(2);
      const amount = usdToNanos(0.03);
      const { accountId, keyId } = await processes.gateway.createFundedKey({ credits: 100, limits: { [cap]: 2 } });
      const results = await holdBoth({ accountId, apiKeyId: keyId, amountNanos: amount });
      const fits = Number(capNanos / amount); // 66
      expect(sumOf(results, (result) => result.admitted)).toBe(fits);
      expect(sumOf(results, (result) => result.refusals['GW_SPEND_CAP_REACHED/429'] ?? 0)).toBe(300 - fits);
      for (const result of results) {
        for (const message of result.refusalMessages) expect(message).toContain(cap);
      }
      const settled = await settleBoth(cap === 'daily' ? 300 : 400);
      await expectConservation(accountId, usdToNanos(100), settled);
      const [key] = await db().select().from(apiKeys).where(eq(apiKeys.id, keyId));
      if (!key) throw new Error('key vanished');
      expect(key.heldNanos).toBe(0n);
      const spent = cap === 'daily' ? key.spentDayNanos : key.spentTotalNanos;
      expect(spent <= capNanos).toBe(true);
      expect(spent).toBe(settled.reduce((sum, result) => sum + result.settledCostNanos, 0n));
    },
  );

  it('keeps the books exact when both processes hold and settle at the same time', async () => {
    const creditsNanos = usdToNanos(5);
    const capNanos = usdToNanos(4);
    const amount = usdToNanos(0.05);
    const { accountId, keyId } = await processes.gateway.createFundedKey({ credits: 5, limits: { total: 4 } });
    let monitoring = true;
    let checks = 0;
    const monitor = (async () => {
      while (monitoring) {
        const state = await accountState(accountId);
        const [key] = await db().select().from(apiKeys).where(eq(apiKeys.id, keyId));
        expect(state.balanceNanos - state.heldNanos >= 0n).toBe(true);
        expect(key !== undefined && key.spentTotalNanos + key.heldNanos <= capNanos).toBe(true);
        checks += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const rounds: StormResult[] = [];
    try {
      // Each process settles its holds while the other may still be taking new ones; a second round
      // starts from whatever is left.
      rounds.push(...(await holdBoth({ accountId, apiKeyId: keyId, amountNanos: amount, settleSeed: 500 })));
      rounds.push(...(await holdBoth({ accountId, apiKeyId: null, amountNanos: amount, settleSeed: 600 })));
    } finally {
      monitoring = false;
      await monitor;
    }
    expect(checks).toBeGreaterThan(2);
    expect(sumOf(rounds, (result) => result.admitted)).toBeGreaterThan(0);
    await expectConservation(accountId, creditsNanos, rounds);
  });
});
