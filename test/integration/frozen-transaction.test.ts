/**
 * A process frozen in the middle of a transaction (stopped, paused, cut off without a FIN or RST) looks to the
 * server like a session idle in a transaction, holding the rows it locked. The server ends such a session after
 * the pool's idle-in-transaction time-out, so the account's row is free again for every other process's writes
 * (settlements, lease extensions, top-ups) and the frozen transaction's own change is rolled back.
 */
import { eq, sql } from 'drizzle-orm';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.ts';
import { AccountsRepository } from '../../src/storage/accounts-repository.ts';
import { preparedStatement } from '../../src/storage/checked-rows.ts';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { accounts } from '../../src/storage/schema.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const credits = 10_000_000_000n;

describe('a transaction left open by a frozen process', () => {
  let database: TestDatabase;
  let frozen: Storage;
  let other: Storage;

  beforeAll(async () => {
    database = await createTestDatabase();
    // The frozen process's pool ends its sessions idle in a transaction after 3 s; the other keeps the default.
    frozen = await openStorage({
      kind: 'postgres',
      url: database.url,
      poolSize: 2,
      idleInTransactionTimeoutMs: 3_000,
      onError: () => undefined,
    });
    other = await openStorage({ kind: 'postgres', url: database.url, poolSize: 2 });
  });

  afterAll(async () => {
    await frozen?.close();
    await other?.close();
    await database?.drop();
  });

  it("is ended by the server, so the account's row it locked is written by others, and its change is undone", {
    timeout: 30_000,
  }, async () => {
    const accountsOfOther = new AccountsRepository(other.db);
    const accountId = newId('acct');
    await accountsOfOther.create({
      id: accountId,
      email: `${accountId.toLowerCase()}@example.com`,
      passwordHash: null,
      creditsNanos: credits,
      grantId: newId('grant'),
      note: 'opening',
    });

    let locked: () => void = () => undefined;
    const rowLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    let thaw: () => void = () => undefined;
    const thawed = new Promise<void>((resolve) => {
      thaw = resolve;
    });
    // Takes the account's row, then stops sending anything, as a process stopped between two statements would.
    const frozenTransaction = frozen.db.transaction(async (transaction) => {
      await transaction
        .update(accounts)
        .set({ balanceNanos: sql`${accounts.balanceNanos} + 1000000000` })
        .where(eq(accounts.id, accountId));
      locked();
      await thawed;
    });
    frozenTransaction.catch(() => undefined);
    await rowLocked;

    let written = false;
    const topUp = accountsOfOther
      .addCredits({ accountId, amountNanos: 5n, grantId: newId('grant'), note: 'after the freeze' })
      .then((balance) => {
        written = true;
        return balance;
      });
    // The row is held: the write waits on it rather than going through.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(written).toBe(false);

    // The server ends the frozen session; the write goes through on the balance as it was before the freeze.
    // (Were the session left alone, the write would wait for good: the freeze ends after 15 s, to fail cleanly.)
    const outcome = await Promise.race([
      topUp.then((balance) => ({ balance })),
      new Promise((resolve) => setTimeout(resolve, 15_000, 'still waiting for the row')),
    ]);
    thaw();
    expect(outcome).toEqual({ balance: credits + 5n });
    await expect(frozenTransaction).rejects.toThrow();
    const [row] = await other.db
      .select({ balanceNanos: accounts.balanceNanos })
      .from(accounts)
      .where(eq(accounts.id, accountId));
    expect(row?.balanceNanos).toBe(credits + 5n);
  });

  it('is ended after 10 s by default', async () => {
    const setting = preparedStatement({
      name: 'frozen-transaction-setting',
      text: 'SHOW idle_in_transaction_session_timeout',
      row: Type.Object({ idle_in_transaction_session_timeout: Type.String() }),
    });
    const rows = await other.prepared(setting, []);
    expect(rows).toEqual([{ idle_in_transaction_session_timeout: '10s' }]);
  });
});
