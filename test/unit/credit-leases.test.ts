import { describe, expect, it } from 'vitest';
import { CreditLeases, LeasedCredit, type LeaseStore } from '../../src/billing/credit-leases.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A request that key-1's daily cap refuses waits while its lease gives back credit (its peers', or this
 * process's own), and the operator raises the cap in that wait: the lease is retired and the request moves
 * to the key's new lease, which admits it. The old lease used to answer the refusal it had read before the
 * key changed as well: the client was refused while the new lease's credit stayed promised to it, never
 * settled or released.
 */
describe('credit leases: a key changed while a refused request waits on a give-back', () => {
  const moments = [
    { name: 'other processes asked to give back', peers: true },
    { name: 'this process giving back its own, which finds nothing to return', peers: false },
  ];

  it.each(moments)('hands the request to the new lease, which admits it ($name)', async ({ peers }) => {
    let capRaised = false;
    let leases: CreditLeases | undefined;
    const raiseCap = () => {
      if (capRaised) return;
      capRaised = true;
      leases?.retireKey('key-1');
    };
    const store: LeaseStore = {
      extendLease: async (extension) => {
        if (extension.apiKeyId === 'key-1' && !capRaised)
          return { outcome: 'daily', grantedNanos: 0n, heldNanos: 1_000n };
        await sleep(20);
        return { outcome: 'ok', grantedNanos: extension.wantNanos, heldNanos: 0n };
      },
      shrinkLease: async (_leaseId, amountNanos) => {
        if (!peers) raiseCap();
        await sleep(5);
        // The row had already given it back (another process's sweep, say): nothing returns.
        return peers ? amountNanos : 0n;
      },
      release: async () => true,
      settleFromLease: () => Promise.reject(new Error('nothing is settled here')),
    };
    leases = new CreditLeases({
      repository: store,
      instanceId: 'test',
      clock: () => new Date(),
      onError: (error) => {
        throw error;
      },
      options: {
        maxLeaseNanos: 1_000_000n,
        idleMs: 60_000,
        horizonMs: 1_000,
        ...(peers
          ? {
              askPeers: async () => {
                raiseCap();
                await sleep(5);
              },
            }
          : {}),
      },
    });
    if (!peers) {
      // Credit of the account this process holds unused, in another key's lease: the refusal gives it back first.
      const other = await leases.admit('account-1', 'key-2', 100n);
      if (!(other instanceof LeasedCredit)) throw new Error(`key-2 refused: ${other}`);
      other.release();
    }

    const outcome = await leases.admit('account-1', 'key-1', 500n);

    expect(capRaised).toBe(true);
    expect(outcome).toBeInstanceOf(LeasedCredit);
    if (outcome instanceof LeasedCredit) outcome.release();
    await leases.giveBackUnused();
    expect(leases.holdings().leasedNanos).toBe(0n);
    await leases.close();
  });
});

/**
 * Settlements out of a lease that storage does not take: sent again a few times, and never leaving the lease
 * to promise their charge again (it used to, so a block of credit served request after request, uncharged,
 * while storage refused their settlements); and a lease whose row storage no longer has (swept as orphaned
 * while this process was silent) admits nothing more.
 */
describe('credit leases: settlements storage refuses, and a lease storage no longer holds', () => {
  const cost = (claimNanos: bigint) => ({
    claimNanos,
    costNanos: claimNanos,
    now: new Date(),
    generation: {
      generationId: 'gen_1',
      accountId: 'account-1',
      apiKeyId: 'key-1',
      model: 'm',
      modality: 'text' as const,
      status: 'succeeded',
      request: null,
      usage: null,
      durationMs: 1,
    },
  });

  function leasesOver(store: LeaseStore, errors: unknown[]): CreditLeases {
    return new CreditLeases({
      repository: store,
      instanceId: 'test',
      clock: () => new Date(),
      onError: (error) => errors.push(error),
      options: { maxLeaseNanos: 1_000n, idleMs: 60_000, horizonMs: 1_000, settlementRetryMs: [1, 1] },
    });
  }

  async function admitted(leases: CreditLeases, amount: bigint): Promise<LeasedCredit> {
    const credit = await leases.admit('account-1', 'key-1', amount);
    if (!(credit instanceof LeasedCredit)) throw new Error(`refused: ${credit}`);
    return credit;
  }

  it('sends a refused settlement again, and once it is not written its charge is not promised again', async () => {
    let granted = 0n;
    let attempts = 0;
    const errors: unknown[] = [];
    const leases = leasesOver(
      {
        extendLease: async (extension) => {
          // Exactly what the request is short of, so every promise of credit shows as an extension.
          granted += extension.minNanos;
          return { outcome: 'ok', grantedNanos: extension.minNanos, heldNanos: 0n };
        },
        shrinkLease: async (_leaseId, amountNanos) => amountNanos,
        release: async () => true,
        settleFromLease: () => {
          attempts++;
          return Promise.reject(new Error('the backend was terminated'));
        },
      },
      errors,
    );
    const first = await admitted(leases, 100n);
    await expect(first.settle(cost(100n))).rejects.toThrow('the backend was terminated');
    expect(attempts).toBe(3);
    expect(errors).toHaveLength(2);
    await admitted(leases, 100n);
    expect(granted).toBe(200n);
    await leases.close();
  });

  it('admits nothing more from a lease whose row no longer held a claim it settled', async () => {
    const leaseIds = new Set<string>();
    const leases = leasesOver(
      {
        extendLease: async (extension) => {
          leaseIds.add(extension.leaseId);
          return { outcome: 'ok', grantedNanos: extension.wantNanos, heldNanos: 0n };
        },
        shrinkLease: async () => 0n,
        release: async () => false,
        settleFromLease: async () => ({ held: false, chargedNanos: 0n, shortUsage: undefined }),
      },
      [],
    );
    const first = await admitted(leases, 100n);
    await first.settle(cost(100n));
    // The lease had credit left in memory; storage has none of it: the next request leases anew.
    const second = await admitted(leases, 100n);
    expect(leaseIds.size).toBe(2);
    second.release();
    await leases.close();
  });
});
