import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { CreditLeases, LeasedCredit, type LeaseStore } from '../../src/billing/credit-leases.ts';
import { LedgerWrites } from '../../src/billing/ledger-writes.ts';
import type { SettleInput } from '../../src/storage/ledger-repository.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Leases over `store` with room for a million nano-USD, asking other processes through `askPeers` if given. */
function leasesAskingPeers(store: LeaseStore, askPeers: ((accountId: string) => Promise<void>) | undefined) {
  return new CreditLeases({
    repository: store,
    writes: new LedgerWrites({ onRefused: () => undefined }),
    instanceId: 'test',
    clock: () => new Date(),
    onError: (error) => {
      throw error;
    },
    options: { maxLeaseNanos: 1_000_000n, idleMs: 60_000, horizonMs: 1_000, ...(askPeers ? { askPeers } : {}) },
  });
}

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
    leases = leasesAskingPeers(
      store,
      peers
        ? async () => {
            raiseCap();
            await sleep(5);
          }
        : undefined,
    );
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
 * Settlements out of a lease that storage does not take: sent again until written while storage refuses them for
 * a passing reason (they used to be given up after three tries, the request uncharged), and never leaving the
 * lease to promise their charge again (it used to, so a block of credit served request after request, uncharged,
 * while storage refused their settlements); and a lease whose row storage no longer has (swept as orphaned while
 * this process was silent) admits nothing more.
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

  function leasesOver(store: LeaseStore, writes: LedgerWrites): CreditLeases {
    return new CreditLeases({
      repository: store,
      writes,
      instanceId: 'test',
      clock: () => new Date(),
      onError: () => undefined,
      options: { maxLeaseNanos: 1_000n, idleMs: 60_000, horizonMs: 1_000 },
    });
  }

  const writesRecording = (refusals: string[]) =>
    new LedgerWrites({ retryMs: [1, 1], onRefused: (_error, next) => refusals.push(next) });

  async function admitted(leases: CreditLeases, amount: bigint): Promise<LeasedCredit> {
    const credit = await leases.admit('account-1', 'key-1', amount);
    if (!(credit instanceof LeasedCredit)) throw new Error(`refused: ${credit}`);
    return credit;
  }

  /** A lease store granting exactly what a request is short of, so every promise of credit shows as an extension. */
  function storeSettling(settleFromLease: LeaseStore['settleFromLease']): LeaseStore & { granted: () => bigint } {
    let granted = 0n;
    return {
      extendLease: async (extension) => {
        granted += extension.minNanos;
        return { outcome: 'ok', grantedNanos: extension.minNanos, heldNanos: 0n };
      },
      shrinkLease: async (_leaseId, amountNanos) => amountNanos,
      release: async () => true,
      settleFromLease,
      granted: () => granted,
    };
  }

  it('sends a settlement refused for a passing reason again until it is written, keeping the lease open', async () => {
    let attempts = 0;
    const refusals: string[] = [];
    const writes = writesRecording(refusals);
    const store = storeSettling(async (input) => {
      attempts++;
      if (attempts <= 4) throw new Error('Connection terminated unexpectedly');
      return { held: true, chargedNanos: input.claimNanos, shortUsage: undefined };
    });
    const leases = leasesOver(store, writes);
    const credit = await admitted(leases, 100n);
    let settled: bigint | undefined;
    const settling = credit.settle(cost(100n)).then((written) => {
      settled = written.chargedNanos;
    });
    // Sent, then sent again after each wait; past them, left for the hold reconciler's heartbeat.
    await expect.poll(() => writes.waiting).toBe(1);
    expect(refusals).toEqual(['sent again', 'sent again', 'left for the hold reconciler']);
    expect(settled).toBeUndefined();
    await writes.resend();
    expect(refusals).toHaveLength(4);
    expect(settled).toBeUndefined();
    await writes.resend();
    await settling;
    expect(settled).toBe(100n);
    expect(attempts).toBe(5);
    expect(writes.waiting).toBe(0);
    await leases.close();
  });

  it('gives up a settlement refused for good at once, and does not promise its charge again', async () => {
    let attempts = 0;
    const refusals: string[] = [];
    const store = storeSettling(() => {
      attempts++;
      const refusal = new pg.DatabaseError('new row violates check constraint', 0, 'error');
      refusal.code = '23514';
      return Promise.reject(refusal);
    });
    const leases = leasesOver(store, writesRecording(refusals));
    const first = await admitted(leases, 100n);
    await expect(first.settle(cost(100n))).rejects.toThrow('check constraint');
    expect(attempts).toBe(1);
    expect(refusals).toEqual([]);
    await admitted(leases, 100n);
    expect(store.granted()).toBe(200n);
    await leases.close();
  });

  it("takes a claim past the request's credit out of the lease's unpromised credit first, and never promises it again", async () => {
    const sent: SettleInput[] = [];
    const leases = leasesOver(
      {
        ...storeSettling(async (input) => {
          sent.push(input);
          return { held: true, chargedNanos: input.claimNanos, shortUsage: undefined };
        }),
        // A new lease takes four times its first request: 400, of which 100 is promised to each request.
        extendLease: async (extension) => ({ outcome: 'ok', grantedNanos: extension.wantNanos, heldNanos: 0n }),
      },
      writesRecording([]),
    );
    const first = await admitted(leases, 100n);
    const second = await admitted(leases, 100n);
    // 150 past its credit: the lease has 200 unpromised, and the row gives all of the claim.
    await first.settle(cost(250n));
    expect(sent[0]).toMatchObject({ claimNanos: 250n, shareNanos: 250n, promisedNanos: 100n });
    // 900 past its credit, 50 unpromised left: the row gives 150, storage charges the rest out of free credit if it can.
    await second.settle(cost(1_000n));
    expect(sent[1]).toMatchObject({ claimNanos: 1_000n, shareNanos: 150n, promisedNanos: 100n });
    expect(leases.holdings().leasedNanos).toBe(0n);
    // A claim within the request's credit comes out of the row whole, as it always did.
    const third = await admitted(leases, 100n);
    await third.settle(cost(40n));
    expect(sent[2]).not.toHaveProperty('shareNanos');
    expect(sent[2]).not.toHaveProperty('promisedNanos');
    // Its extension took the most one takes (the lease's recent admissions cover it): 1,000, of which 40 charged.
    expect(leases.holdings().leasedNanos).toBe(960n);
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
      writesRecording([]),
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

/**
 * A burst of requests a cap refuses while other processes hold the key's credit: one ask of the other processes
 * serves every request waiting when it is made. Each used to ask in turn, so the k-th refusal waited k asks.
 */
describe('credit leases: a burst of refusals asks the other processes once', () => {
  it('asks once for the requests waiting, and again for a request that came after the ask', async () => {
    let asks = 0;
    let extensions = 0;
    const store: LeaseStore = {
      extendLease: async () => {
        extensions++;
        // Another process's lease holds the key's day: this process holds none of it.
        return { outcome: 'daily', grantedNanos: 0n, heldNanos: 1_000n };
      },
      shrinkLease: async (_leaseId, amountNanos) => amountNanos,
      release: async () => true,
      settleFromLease: () => Promise.reject(new Error('nothing is settled here')),
    };
    let later: Promise<unknown> | undefined;
    const leases: CreditLeases = leasesAskingPeers(store, async () => {
      asks++;
      // A request arriving while the others give back has not been served by this ask.
      later ??= leases.admit('account-1', 'key-1', 100n);
      await sleep(5);
    });

    const burst = await Promise.all([1, 2, 3, 4, 5].map(() => leases.admit('account-1', 'key-1', 100n)));

    expect(burst).toEqual(['daily', 'daily', 'daily', 'daily', 'daily']);
    expect(await later).toBe('daily');
    expect(asks).toBe(2);
    // Each request was tried after the ask that served it: the first and the later one before and after their
    // asks, the four others once, after the first ask.
    expect(extensions).toBe(8);
    await leases.close();
  });
});
