import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PendingSettlements } from '../../src/billing/pending-settlements.ts';

/** Whether `promise` has resolved once every callback queued now has run. */
async function hasResolved(promise: Promise<unknown>): Promise<boolean> {
  let resolved = false;
  void promise.then(() => (resolved = true));
  await vi.advanceTimersByTimeAsync(0);
  return resolved;
}

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((resolved, rejected) => {
    resolve = resolved;
    reject = rejected;
  });
  return { promise, resolve, reject };
}

describe('PendingSettlements', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('answers at once for an account with nothing pending', async () => {
    const pending = new PendingSettlements(500);
    expect(await hasResolved(pending.settled('acct_a'))).toBe(true);
  });

  it("waits for the account's settlements pending now, and only for that account's", async () => {
    const pending = new PendingSettlements(500);
    const first = deferred();
    const second = deferred();
    void pending.track('acct_a', first.promise);
    void pending.track('acct_a', second.promise).catch(() => undefined);
    void pending.track('acct_b', new Promise(() => undefined));
    const waiting = pending.settled('acct_a');
    first.resolve();
    expect(await hasResolved(waiting)).toBe(false);
    // A refused settlement is over too: what is written is what the read shows.
    second.reject(new Error('storage refused'));
    expect(await hasResolved(waiting)).toBe(true);
  });

  it("waits for every account's settlements pending now for a read across accounts, bounded like the others", async () => {
    const pending = new PendingSettlements(500);
    expect(await hasResolved(pending.settledAll())).toBe(true);
    const first = deferred();
    void pending.track('acct_a', first.promise);
    void pending.track('acct_b', new Promise(() => undefined));
    const waiting = pending.settledAll();
    first.resolve();
    expect(await hasResolved(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(500);
    expect(await hasResolved(waiting)).toBe(true);
  });

  it('answers after the bound when a settlement is never written', async () => {
    const pending = new PendingSettlements(500);
    void pending.track('acct_a', new Promise(() => undefined));
    const waiting = pending.settled('acct_a');
    await vi.advanceTimersByTimeAsync(499);
    expect(await hasResolved(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await hasResolved(waiting)).toBe(true);
  });

  it('does not wait for settlements sent after the read began', async () => {
    const pending = new PendingSettlements(500);
    const first = deferred();
    void pending.track('acct_a', first.promise);
    const waiting = pending.settled('acct_a');
    void pending.track('acct_a', new Promise(() => undefined));
    first.resolve();
    expect(await hasResolved(waiting)).toBe(true);
  });

  it('hands the settlement back unchanged, its refusal included', async () => {
    const pending = new PendingSettlements(500);
    await expect(pending.track('acct_a', Promise.resolve(true))).resolves.toBe(true);
    await expect(pending.track('acct_a', Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await hasResolved(pending.settled('acct_a'))).toBe(true);
  });

  it('drains the settlements of every account, those sent while it waits too, before a stop closes storage', async () => {
    const pending = new PendingSettlements(500);
    const first = deferred();
    const late = deferred();
    void pending.track('acct_a', first.promise);
    const draining = pending.drained(30_000);
    void pending.track('acct_b', late.promise);
    first.resolve();
    expect(await hasResolved(draining)).toBe(false);
    late.resolve();
    expect(await hasResolved(draining)).toBe(true);
  });

  it('stops waiting for a settlement storage never answers after the drain bound, not the read bound', async () => {
    const pending = new PendingSettlements(500);
    void pending.track('acct_a', new Promise(() => undefined));
    const draining = pending.drained(30_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await hasResolved(draining)).toBe(false);
    await vi.advanceTimersByTimeAsync(29_000);
    expect(await hasResolved(draining)).toBe(true);
  });
});
