/**
 * A batch of ledger statements whose commit went through but whose answer was lost (the connection dropped on
 * the way back): each statement is applied once. Settlements sent again find their records and answer the
 * charge made; lease extensions are not sent again at all (each would hold the credit a second time).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PreparedStatement } from '../../src/storage/checked-rows.ts';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { LedgerRepository, type SettleInput } from '../../src/storage/ledger-repository.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const usd = 10n ** 9n;
const now = new Date('2026-05-04T10:00:00.000Z');

describe('ledger batches whose commit reply was lost', () => {
  let database: TestDatabase;
  let storage: Storage;
  let client: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.options);
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await storage?.close();
    await database?.drop();
  });

  /**
   * The ledger on a connection that loses the answer of the first batch (a statement of more than one item) of
   * `statement` after the database ran it, as a connection that drops on the way back does.
   */
  function losingFirstBatchReply(statement: string): { repository: LedgerRepository; lost: () => boolean } {
    let lost = false;
    const repository = new LedgerRepository({
      db: storage.db,
      prepared: async <Row>(prepared: PreparedStatement<Row>, values: unknown[]): Promise<Row[]> => {
        const rows = await storage.prepared(prepared, values);
        const items: unknown = JSON.parse(String(values[0]));
        if (prepared.name === statement && !lost && Array.isArray(items) && items.length > 1) {
          lost = true;
          throw new Error('Connection terminated unexpectedly');
        }
        return rows;
      },
    });
    return { repository, lost: () => lost };
  }

  async function account(id: string, balanceNanos: bigint): Promise<void> {
    await client.query('INSERT INTO accounts (id, email, balance_nanos) VALUES ($1, $2, $3)', [
      id,
      `${id}@example.com`,
      balanceNanos,
    ]);
  }

  async function sums(id: string) {
    const { rows } = await client.query<{ balance: string; held: string; records: string }>(
      `SELECT balance_nanos::text AS balance, held_nanos::text AS held,
              (SELECT count(*) FROM generations WHERE account_id = $1)::text AS records
         FROM accounts WHERE id = $1`,
      [id],
    );
    return { balance: BigInt(rows[0]!.balance), held: BigInt(rows[0]!.held), records: Number(rows[0]!.records) };
  }

  const settlement = (accountId: string, index: number): SettleInput => ({
    holdId: `hold_${accountId}_${index}`,
    claimNanos: usd / 10n,
    costNanos: usd / 10n,
    now,
    generation: {
      generationId: `gen_${accountId}_${index}`,
      accountId,
      apiKeyId: null,
      model: 'm',
      modality: 'text',
      status: 'succeeded',
      request: null,
      usage: null,
      durationMs: 1,
    },
  });

  it('answers each settlement of the batch with its charge, charged once', async () => {
    await account('acct_settle', usd);
    const inputs = Array.from({ length: 5 }, (_, index) => settlement('acct_settle', index));
    for (const input of inputs)
      await client.query(
        `INSERT INTO holds (id, account_id, amount_nanos, instance_id) VALUES ($1, 'acct_settle', $2, 'test')`,
        [input.holdId, usd / 10n],
      );
    await client.query(`UPDATE accounts SET held_nanos = $1 WHERE id = 'acct_settle'`, [usd / 2n]);
    const { repository, lost } = losingFirstBatchReply('gw_settle_batch');
    // One at a time runs: the first goes alone, the four that arrive meanwhile as one batch.
    const settled = await Promise.all(inputs.map((input) => repository.settle(input)));
    expect(lost()).toBe(true);
    expect(settled.map((each) => each.chargedNanos)).toEqual(inputs.map(() => usd / 10n));
    expect(await sums('acct_settle')).toEqual({ balance: usd / 2n, held: 0n, records: 5 });
  });

  it('fails the extensions of the batch instead of holding their credit twice', async () => {
    await account('acct_extend', usd);
    const { repository, lost } = losingFirstBatchReply('gw_lease_extend_batch');
    // Four run at once: the first four go alone, the five that arrive meanwhile as one batch.
    const extensions = Array.from({ length: 9 }, (_, index) =>
      repository.extendLease({
        leaseId: `lease_extend_${index}`,
        accountId: 'acct_extend',
        apiKeyId: null,
        minNanos: usd / 100n,
        wantNanos: usd / 100n,
        instanceId: 'test',
        now,
      }),
    );
    const outcomes = await Promise.allSettled(extensions);
    expect(lost()).toBe(true);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      ...Array.from({ length: 4 }, () => 'fulfilled'),
      ...Array.from({ length: 5 }, () => 'rejected'),
    ]);
    // Each lease holds what its one extension took: the batch's, applied once, and nothing more.
    const { rows } = await client.query<{ amount: string }>(
      `SELECT amount_nanos::text AS amount FROM holds WHERE account_id = 'acct_extend' ORDER BY id`,
    );
    expect(rows.map((row) => BigInt(row.amount))).toEqual(extensions.map(() => usd / 100n));
    expect((await sums('acct_extend')).held).toBe((usd / 100n) * 9n);
  });
});
