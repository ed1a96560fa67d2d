/**
 * Settlements this process has sent to storage and not yet seen written, by account. An answer goes out
 * while its settlement is still on its way (the hold covers the cost meanwhile); a read of the account's
 * money waits for them here, so the client's next read shows what its last answer cost.
 */
export class PendingSettlements {
  private readonly byAccount = new Map<string, Set<Promise<unknown>>>();

  constructor(private readonly maxWaitMs: number) {}

  /** Counts `settlement` as pending for the account until it is written or refused. */
  track<T>(accountId: string, settlement: Promise<T>): Promise<T> {
    let pending = this.byAccount.get(accountId);
    if (!pending) {
      pending = new Set();
      this.byAccount.set(accountId, pending);
    }
    const tracked = settlement.then(
      () => undefined,
      () => undefined,
    );
    pending.add(tracked);
    void tracked.then(() => {
      pending.delete(tracked);
      if (pending.size === 0 && this.byAccount.get(accountId) === pending) this.byAccount.delete(accountId);
    });
    return settlement;
  }

  /**
   * Resolves once every settlement of the account pending now is written or refused, or after `maxWaitMs`,
   * whichever comes first: a database slow to write makes a read answer with what is settled, not hang.
   */
  async settled(accountId: string): Promise<void> {
    const pending = this.byAccount.get(accountId);
    if (!pending) return;
    await within(Promise.all(pending), this.maxWaitMs);
  }

  /**
   * Resolves once every settlement pending now, of every account, is written or refused, or after `maxWaitMs`:
   * a read across accounts (an operator's) shows every answer this process has already given.
   */
  async settledAll(): Promise<void> {
    if (this.byAccount.size === 0) return;
    await within(this.allPending(), this.maxWaitMs);
  }

  /**
   * Resolves once every settlement pending, of every account (those sent while it waits too), is written or
   * refused, or after `timeoutMs`: a process that stops waits here before it closes storage, so an answer it
   * gave is not left unsettled by the queue of a busy database.
   */
  async drained(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.byAccount.size > 0 && Date.now() < deadline) {
      await within(this.allPending(), deadline - Date.now());
    }
  }

  /** Every settlement pending now, of every account, written or refused. */
  private allPending(): Promise<unknown> {
    return Promise.all([...this.byAccount.values()].flatMap((pending) => [...pending]));
  }
}

/** Waits for `work`, or `timeoutMs`, whichever ends first. */
async function within(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  try {
    await Promise.race([work, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
