import { newId } from '../domain/ids.ts';
import type {
  HoldOutcome,
  LeaseGrant,
  LedgerRepository,
  LedgerSettlement,
  SettleInput,
} from '../storage/ledger-repository.ts';
import type { LedgerWrites } from './ledger-writes.ts';

export interface LeaseOptions {
  /** Largest block one lease takes in one extension; a request needing more still gets exactly what it needs. */
  maxLeaseNanos: bigint;
  /** A lease admitting nothing for this long gives back what it holds unused. */
  idleMs: number;
  /** An extension is sized to cover this long of the lease's recent admissions. */
  horizonMs: number;
  /**
   * Where other processes share the database: asks them to give back the account's unused leased credit,
   * resolving once they have had the time to, so a request they would strand is tried once more.
   */
  askPeers?: (accountId: string) => Promise<void>;
}

type Refusal = Exclude<HoldOutcome, 'ok'>;

/** The ledger's statements a lease's life takes. */
export type LeaseStore = Pick<LedgerRepository, 'extendLease' | 'shrinkLease' | 'release' | 'settleFromLease'>;

interface Waiter {
  amount: bigint;
  /** Whether this process already gave back its unused credit of the account and tried again. */
  retried: boolean;
  /** Whether other processes were asked to give back theirs since this request began waiting. */
  askedPeers: boolean;
  resolve: (outcome: LeasedCredit | Refusal) => void;
  reject: (error: unknown) => void;
}

/**
 * A block of one account's credit (and of one key's cap headroom) that this process holds as one row of
 * `holds`. In memory: `available` is leased and promised to no request, `outstanding` is promised to
 * requests still running. The row holds at least their sum; it holds more only while settlements of
 * charges already taken out of `outstanding` are on their way to storage.
 */
class Lease {
  readonly id = newId('lease');
  available = 0n;
  outstanding = 0n;
  /** Settlements and give-backs sent to storage and not yet answered, and what they take off the row. */
  inStorage = 0;
  inStorageNanos = 0n;
  /** Whether storage has its row: a lease whose every extension was refused has none to delete. */
  stored = false;
  retired = false;
  extending = false;
  readonly waiters: Waiter[] = [];
  lastAdmitAt = Date.now();
  /** Admissions since `windowStart`, for sizing the next extension. */
  windowStart = Date.now();
  admittedInWindow = 0n;

  constructor(
    readonly accountId: string,
    readonly apiKeyId: string | null,
  ) {}

  get idle(): boolean {
    return this.outstanding === 0n && this.inStorage === 0 && this.waiters.length === 0 && !this.extending;
  }
}

/** Credit promised to one request out of a lease: it ends in one settlement or one release. */
export class LeasedCredit {
  constructor(
    private readonly leases: CreditLeases,
    private readonly lease: Lease,
    readonly amountNanos: bigint,
  ) {}

  settle(input: Omit<SettleInput, 'holdId'>): Promise<LedgerSettlement> {
    return this.leases.settle(this.lease, this.amountNanos, input);
  }

  release(): void {
    this.leases.release(this.lease, this.amountNanos);
  }
}

/**
 * Admission at memory speed: this process reserves blocks of an account's available balance and of its
 * key's cap headroom (one atomic statement per block), admits requests against a block in memory, and
 * settles each request out of its block in batched statements. Blocks grow with each account's rate of
 * admissions (up to `maxLeaseNanos` per extension, and never more than half of what is free beyond the
 * request that asked), and what a block holds unused goes back when it has been idle for `idleMs`, when
 * its key changes, and whenever a request of its account is refused. A process that dies leaves its blocks
 * as holds of a silent process, released by the orphan sweep: whatever it had not settled is lost in the
 * account's favour.
 */
export class CreditLeases {
  /** The lease admitting new requests, per account and key. */
  private readonly current = new Map<string, Lease>();
  /** Retired leases waiting for their last requests to end. */
  private readonly retiring = new Set<Lease>();
  /** Give-backs on their way to storage (a lease shrunk or closed), by account, each answering what went back. */
  private readonly givingBack = new Map<Promise<bigint>, string>();
  private timer: NodeJS.Timeout | undefined;

  private readonly repository: LeaseStore;
  private readonly writes: LedgerWrites;
  private readonly instanceId: string;
  private readonly options: LeaseOptions;
  private readonly clock: () => Date;
  private readonly onError: (error: unknown) => void;

  constructor(dependencies: {
    repository: LeaseStore;
    /** Where a settlement is sent, and sent again while storage refuses it: as a hold row's is. */
    writes: LedgerWrites;
    instanceId: string;
    options: LeaseOptions;
    clock: () => Date;
    onError: (error: unknown) => void;
  }) {
    const { options } = dependencies;
    this.repository = dependencies.repository;
    this.writes = dependencies.writes;
    this.instanceId = dependencies.instanceId;
    this.options = options;
    this.clock = dependencies.clock;
    this.onError = dependencies.onError;
    this.timer = setInterval(
      () => void this.giveBackIdle({ all: false }),
      Math.max(50, Math.floor(options.idleMs / 2)),
    );
    this.timer.unref();
  }

  /** Credit for one request, or which limit refused it. */
  admit(accountId: string, apiKeyId: string | null, amount: bigint): Promise<LeasedCredit | Refusal> {
    const lease = this.leaseFor(accountId, apiKeyId);
    if (lease.waiters.length === 0 && lease.available >= amount) return Promise.resolve(this.promise(lease, amount));
    return new Promise((resolve, reject) => {
      lease.waiters.push({ amount, retried: false, askedPeers: false, resolve, reject });
      void this.serveWaiters(lease);
    });
  }

  /** Leases this process holds, and the credit in them (promised to requests or not). */
  holdings(): { leases: number; leasedNanos: bigint } {
    let leasedNanos = 0n;
    for (const lease of this.current.values()) leasedNanos += lease.available + lease.outstanding;
    return { leases: this.current.size, leasedNanos };
  }

  /** Stops admitting on the leases of a key whose state or caps changed (`*`: every key); what they hold unused goes back. */
  retireKey(keyId: string): void {
    for (const lease of [...this.current.values()]) {
      if (keyId !== '*' && lease.apiKeyId !== keyId) continue;
      this.retire(lease);
    }
    void this.giveBackIdle({ all: true });
  }

  /** Gives back everything held unused, now (shutdown; tests that read the held sums). */
  async giveBackUnused(): Promise<void> {
    // A give-back already under way (another process asked for the account's credit) ends first, so
    // the lease it leaves empty closes in this pass rather than at the next idle check.
    await Promise.all(this.givingBack.keys());
    await this.giveBackIdle({ all: true });
  }

  /** Stops the idle timer and gives back what is unused; requests still running keep their credit. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const lease of [...this.current.values()]) this.retire(lease);
    await this.giveBackIdle({ all: true });
  }

  /**
   * The request's claim comes out of the lease's row (the rest of its share stays leased); the ledger charges
   * it within the balance and the key's caps as they stand then, so a cap lowered while requests run out of
   * a lease leased under the old one is honoured too. A claim past the credit promised to the request (a cost
   * no hold bounds, billing/settlement.ts) takes the lease's unpromised credit first, and the ledger charges the
   * rest, if it can, out of what the account and the key have free beyond every hold: each nano counted once.
   */
  settle(lease: Lease, amount: bigint, input: Omit<SettleInput, 'holdId'>): Promise<LedgerSettlement> {
    const claim = input.claimNanos;
    const beyond = claim > amount ? claim - amount : 0n;
    // What the settlement takes of the lease's row: its claim, or past the credit promised, as much as is unpromised.
    const taken = beyond === 0n ? claim : amount + (beyond < lease.available ? beyond : lease.available);
    lease.outstanding -= amount;
    lease.available += amount - taken;
    lease.inStorage++;
    lease.inStorageNanos += taken;
    // Until it is written the lease counts it in storage: the lease stays open, its row holding the charge.
    const settled = this.writes.write(() =>
      this.repository.settleFromLease({
        ...input,
        holdId: lease.id,
        ...(beyond > 0n ? { shareNanos: taken, promisedNanos: amount } : {}),
      }),
    );
    return settled.then(
      (settled) => {
        lease.inStorage--;
        lease.inStorageNanos -= taken;
        // The row no longer held the credit promised to the request: it was released while this process was
        // silent (its lease swept as orphaned). What memory counts as available is held by nothing either: the
        // lease admits no more. (A row short only of unpromised credit a share asked for is still held: it gave
        // what it had, the rest was claimed out of free credit.)
        if (!settled.held) this.forget(lease);
        this.afterChange(lease);
        return settled;
      },
      (error: unknown) => {
        // Refused for good (not for a passing reason, which is sent again until written): the charge stays out of
        // what the lease promises. Its row still holds it, given back when the lease closes (the request then
        // goes uncharged, once, as a hold row's is released); promised again, the same credit would serve request
        // after request while storage refuses their settlements.
        lease.inStorage--;
        lease.inStorageNanos -= taken;
        this.afterChange(lease);
        throw error;
      },
    );
  }

  /** A lease whose row storage no longer has: it admits nothing more, and the account's next request leases anew. */
  private forget(lease: Lease): void {
    lease.available = 0n;
    if (!lease.retired) this.retire(lease);
  }

  release(lease: Lease, amount: bigint): void {
    lease.outstanding -= amount;
    lease.available += amount;
    this.afterChange(lease);
  }

  private promise(lease: Lease, amount: bigint): LeasedCredit {
    lease.available -= amount;
    lease.outstanding += amount;
    lease.lastAdmitAt = Date.now();
    lease.admittedInWindow += amount;
    return new LeasedCredit(this, lease, amount);
  }

  private leaseFor(accountId: string, apiKeyId: string | null): Lease {
    const key = leaseKey(accountId, apiKeyId);
    let lease = this.current.get(key);
    if (!lease) {
      lease = new Lease(accountId, apiKeyId);
      this.current.set(key, lease);
    }
    return lease;
  }

  private retire(lease: Lease): void {
    lease.retired = true;
    const key = leaseKey(lease.accountId, lease.apiKeyId);
    if (this.current.get(key) === lease) this.current.delete(key);
    this.retiring.add(lease);
    // Requests still waiting go to the account's new lease, which reads the key afresh.
    for (const waiter of lease.waiters.splice(0))
      this.admit(lease.accountId, lease.apiKeyId, waiter.amount).then(waiter.resolve, waiter.reject);
  }

  /** Credit returned to a lease may serve its waiters; a retired lease with nothing running closes. */
  private afterChange(lease: Lease): void {
    if (lease.waiters.length > 0) void this.serveWaiters(lease);
    else if (lease.retired && lease.idle) void this.closeLease(lease);
  }

  /** Serves a lease's waiters in order, extending the lease (one statement at a time per lease) when short. */
  private async serveWaiters(lease: Lease): Promise<void> {
    if (lease.extending) return;
    lease.extending = true;
    try {
      while (lease.waiters.length > 0 && !lease.retired) {
        const waiter = lease.waiters[0]!;
        if (lease.available >= waiter.amount) {
          lease.waiters.shift();
          waiter.resolve(this.promise(lease, waiter.amount));
          continue;
        }
        const shortfall = waiter.amount - lease.available;
        let grant: LeaseGrant;
        try {
          grant = await this.repository.extendLease({
            leaseId: lease.id,
            accountId: lease.accountId,
            apiKeyId: lease.apiKeyId,
            minNanos: shortfall,
            wantNanos: this.extensionSize(lease, shortfall),
            instanceId: this.instanceId,
            now: this.clock(),
          });
        } catch (error) {
          // The extension may have been applied with its answer lost: the row may exist.
          lease.stored = true;
          // A retired lease has handed its waiters, this one included, to the account's new lease.
          if (lease.retired) break;
          lease.waiters.shift();
          waiter.reject(error);
          continue;
        }
        if (grant.outcome === 'ok') {
          lease.available += grant.grantedNanos;
          lease.stored = true;
        }
        if (lease.retired) break;
        if (grant.outcome === 'ok') continue;
        if (!waiter.retried && grant.outcome !== 'key_inactive') {
          // Credit this process holds unused for the account (in this and its other leases) may be what is
          // missing, and other processes may need it: give it back, then ask once more for all of it.
          waiter.retried = true;
          const gaveBack = await this.giveBackAccount(lease.accountId);
          // Retired meanwhile (its key changed): the waiter is the new lease's now, and this refusal stale.
          if (lease.retired) break;
          if (gaveBack) continue;
        }
        if (
          this.options.askPeers &&
          !waiter.askedPeers &&
          grant.outcome !== 'key_inactive' &&
          grant.heldNanos > this.heldHere(lease, grant.outcome)
        ) {
          // One ask serves every request waiting now: each is tried again after the others' give-back. Asked
          // once per waiter, the k-th refused request of a burst waited k asks (100 ms each between processes).
          for (const queued of lease.waiters) queued.askedPeers = true;
          await this.options.askPeers(lease.accountId);
          if (lease.retired) break;
          continue;
        }
        lease.waiters.shift();
        waiter.resolve(grant.outcome);
      }
    } finally {
      lease.extending = false;
    }
    if (lease.retired) this.afterChange(lease);
  }

  /** Enough to cover `horizonMs` of the lease's recent admissions, at least the shortfall, at most the cap. */
  private extensionSize(lease: Lease, shortfall: bigint): bigint {
    const now = Date.now();
    const elapsed = BigInt(Math.max(1, now - lease.windowStart));
    const recent = (lease.admittedInWindow * BigInt(this.options.horizonMs)) / elapsed;
    if (now - lease.windowStart >= this.options.horizonMs) {
      lease.windowStart = now;
      lease.admittedInWindow = 0n;
    }
    // At least a few requests of this size, so a new lease does not extend for each of its first requests.
    let want = recent > 4n * shortfall ? recent : 4n * shortfall;
    if (want > this.options.maxLeaseNanos) want = this.options.maxLeaseNanos;
    return want > shortfall ? want : shortfall;
  }

  /** What this process's leases hold of the row that refused: the key's for a cap, else the account's. */
  private heldHere(refused: Lease, outcome: Refusal): bigint {
    let held = 0n;
    for (const lease of [...this.current.values(), ...this.retiring]) {
      const counts =
        outcome === 'balance' ? lease.accountId === refused.accountId : lease.apiKeyId === refused.apiKeyId;
      if (counts) held += lease.available + lease.outstanding + lease.inStorageNanos;
    }
    return held;
  }

  /**
   * Gives back what the account's leases in this process hold unused, and waits for its give-backs already under
   * way (a key's leases retired when its caps changed, say): until they land, storage still counts that credit
   * as held. True when anything went back.
   */
  async giveBackAccount(accountId: string): Promise<boolean> {
    const underWay = [...this.givingBack].filter(([, account]) => account === accountId).map(([amount]) => amount);
    const leases = [...this.current.values(), ...this.retiring].filter(
      (lease) => lease.accountId === accountId && lease.available > 0n,
    );
    const returned = await Promise.all([...underWay, ...leases.map((lease) => this.shrink(lease))]);
    return returned.some((amount) => amount > 0n);
  }

  /** Gives back the unused credit of leases idle for `idleMs` (or of every lease, with `all`); closes those with nothing running. */
  private async giveBackIdle({ all }: { all: boolean }): Promise<void> {
    const now = Date.now();
    for (const lease of this.current.values()) {
      if ((all || now - lease.lastAdmitAt >= this.options.idleMs) && lease.idle) this.retire(lease);
    }
    const due = [...this.current.values()].filter((lease) => all || now - lease.lastAdmitAt >= this.options.idleMs);
    await Promise.all(
      [...due, ...this.retiring].map((lease) => {
        if (lease.retired && lease.idle) return this.closeLease(lease);
        return lease.waiters.length === 0 && !lease.extending ? this.shrink(lease) : undefined;
      }),
    );
  }

  /** Gives back a lease's unused credit; answers how much went back. */
  private shrink(lease: Lease): Promise<bigint> {
    if (lease.available === 0n) return Promise.resolve(0n);
    return this.underWay(lease, this.giveBack(lease)).finally(() => {
      if (lease.retired) this.afterChange(lease);
    });
  }

  /** Tracks a give-back of the lease's account until it lands. */
  private underWay(lease: Lease, giveBack: Promise<bigint>): Promise<bigint> {
    const tracked = giveBack.finally(() => this.givingBack.delete(tracked));
    this.givingBack.set(tracked, lease.accountId);
    return tracked;
  }

  private async giveBack(lease: Lease): Promise<bigint> {
    const amount = lease.available;
    lease.available = 0n;
    lease.inStorage++;
    lease.inStorageNanos += amount;
    try {
      return await this.repository.shrinkLease(lease.id, amount);
    } catch (error) {
      lease.available += amount;
      this.onError(error);
      return 0n;
    } finally {
      lease.inStorage--;
      lease.inStorageNanos -= amount;
    }
  }

  /** Deletes a retired lease with nothing running: the row and whatever it still holds go back. */
  private async closeLease(lease: Lease): Promise<void> {
    if (!this.retiring.delete(lease) || !lease.stored) return;
    const unused = lease.available;
    lease.available = 0n;
    await this.underWay(
      lease,
      this.repository.release(lease.id).then(
        (released) => (released ? unused : 0n),
        (error: unknown) => {
          this.onError(error);
          return 0n;
        },
      ),
    );
  }
}

function leaseKey(accountId: string, apiKeyId: string | null): string {
  return apiKeyId === null ? accountId : `${accountId}\u0000${apiKeyId}`;
}
