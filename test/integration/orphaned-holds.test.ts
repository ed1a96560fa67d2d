/**
 * Holds of a gateway process killed with SIGKILL, on PostgreSQL shared by several gateway processes (the run's
 * server): a live gateway releases them once the dead process's heartbeat is older than
 * `ledger.orphanHoldSeconds`, never touches the holds of a live process, and releases each orphaned hold exactly
 * once while its account is busy. The same on the embedded default is orphaned-holds-embedded.test.ts.
 */
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreditLedger } from '../../src/billing/credit-ledger.ts';
import { usdToNanos } from '../../src/domain/money.ts';
import { LedgerRepository } from '../../src/storage/ledger-repository.ts';
import { accounts } from '../../src/storage/schema.ts';
import { describeKilledGatewayHolds } from '../support/killed-gateway-holds.ts';
import { randomCost, seededRandom } from '../support/ledger-worker.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

describeKilledGatewayHolds({ setup: 'PostgreSQL shared by several gateway processes', onPostgres: true });

describe('releasing orphaned holds while their accounts are busy', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => gateway?.close());

  // Regression: the sweep used to release hold by hold, locking an account and then the key of the next
  // hold; a concurrent hold or settlement on that key (locks key, then account) deadlocked with it on
  // PostgreSQL, failing the request or the settlement, and concurrent sweeps deadlocked each other.
  it('releases every orphaned hold exactly once, concurrently with live holds, settlements and other sweeps', async () => {
    const core = gateway.gateway.core;
    const repository = new LedgerRepository(core.storage);
    const live = core.services.ledger;
    const { accountId } = await gateway.createFundedKey({ credits: 1000 });
    const keyIds: string[] = [];
    for (let index = 0; index < 8; index++)
      keyIds.push((await core.services.apiKeys.create(accountId, { name: `key ${index}` })).id);
    const amount = usdToNanos(0.001);
    const random = seededRandom(77);
    let charged = 0n;
    let liveSettled = 0;
    for (let round = 0; round < 2; round++) {
      // A process that never heartbeated (killed before its first one) left 160 holds across all keys.
      const dead = new CreditLedger(repository, `inst_dead_${round}_${Date.now()}`, {
        reportFailure: () => undefined,
        reportLeaseFailure: () => undefined,
      });
      await Promise.all(
        Array.from({ length: 160 }, (_, index) =>
          dead.reserve({
            accountId,
            apiKeyId: index % 9 === 8 ? null : (keyIds[index % 9] ?? null),
            amountNanos: amount,
            modelId: 'sandbox-echo',
          }),
        ),
      );
      const busy = Promise.all(
        Array.from({ length: 120 }, async (_, index) => {
          const hold = await live.reserve({
            accountId,
            apiKeyId: keyIds[(index * 5) % keyIds.length] ?? null,
            amountNanos: amount,
            modelId: 'sandbox-echo',
          });
          const cost = randomCost(random, amount);
          await hold.settle({ costNanos: cost, modality: 'text', status: 'succeeded' });
          charged += cost;
          liveSettled += 1;
        }),
      );
      const sweeps = Promise.all([0, 1, 2].map(() => repository.releaseOrphanedHolds(core.instanceId, 0)));
      const [, released] = await Promise.all([busy, sweeps]);
      expect(released.reduce((sum, count) => sum + count, 0)).toBe(160);
    }
    await live.giveBackUnused();
    const [account] = await core.storage.db.select().from(accounts).where(eq(accounts.id, accountId));
    expect(account).toMatchObject({ heldNanos: 0n, balanceNanos: usdToNanos(1000) - charged });
    const [books] = await uncheckedRows<{ holds: string; keys_held: string; generations: string; charged: string }>(
      core.storage.db,
      sql`SELECT (SELECT count(*) FROM holds WHERE account_id = ${accountId})::text AS holds,
                 (SELECT COALESCE(sum(held_nanos), 0) FROM api_keys WHERE account_id = ${accountId})::text AS keys_held,
                 (SELECT count(*) FROM generations WHERE account_id = ${accountId})::text AS generations,
                 (SELECT COALESCE(sum(usd_cost_nanos), 0) FROM generations WHERE account_id = ${accountId})::text AS charged`,
    );
    expect(books).toEqual({ holds: '0', keys_held: '0', generations: String(liveSettled), charged: String(charged) });
  });
});
