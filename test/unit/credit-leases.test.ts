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
