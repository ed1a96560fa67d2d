/**
 * A row a request needs, locked by another session that does not let go (an operator's transaction left open
 * in psql, a long maintenance statement): the request's statement gives up at the pool's lock time-out and the
 * request answers 503 in the envelope while the row is still locked, rather than waiting as long as the lock
 * lasts. Nothing is held or charged for it; a settlement that meets the lock is sent again and charged once.
 */
import { eq } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { accounts, apiKeys } from '../../src/storage/schema.ts';
import { expectEnvelope, heldNanosOf, keyHeaders, usageRecords } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const path = '/api/alpha/v1/chat/completions';
/** Long enough to outlast the test's lock time-out many times over, short enough to fail a waiting request cleanly. */
const waitingLimitMs = 20_000;

/** The SQLSTATE of the storage error a log line carries, if any. */
function errorCodeOf(line: Record<string, unknown>): unknown {
  const error = line.err;
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

describe('a request meeting a row another session keeps locked', () => {
  let gateway: TestGateway;
  let operator: pg.Client;
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    gateway = await startTestGateway({ storage: { lockTimeoutMs: 500 }, logLines });
    operator = new pg.Client({ connectionString: gateway.database.url });
    await operator.connect();
  });

  afterAll(async () => {
    await operator?.end();
    await gateway?.close();
  });

  const chat = (key: string) =>
    gateway.app.inject({
      method: 'POST',
      url: path,
      headers: keyHeaders(key),
      payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hello' }] },
    });

  /** The request's answer, or a note that it is still waiting after `waitingLimitMs`. */
  const answerOf = (request: ReturnType<typeof chat>) =>
    Promise.race([
      request,
      new Promise<string>((resolve) => setTimeout(resolve, waitingLimitMs, 'still waiting for the row')),
    ]);

  async function balanceOf(accountId: string): Promise<bigint> {
    const [row] = await gateway.gateway.core.storage.db
      .select({ balance: accounts.balanceNanos })
      .from(accounts)
      .where(eq(accounts.id, accountId));
    return row!.balance;
  }

  async function keySpentAndHeld(keyId: string): Promise<{ spent: bigint; held: bigint }> {
    const [row] = await gateway.gateway.core.storage.db
      .select({ spent: apiKeys.spentTotalNanos, held: apiKeys.heldNanos })
      .from(apiKeys)
      .where(eq(apiKeys.id, keyId));
    return row!;
  }

  for (const table of ['accounts', 'api_keys'] as const) {
    it(`answers 503 while the ${table} row is locked, holding and charging nothing`, async () => {
      const { key, keyId, accountId } = await gateway.createFundedKey({ credits: 1 });
      const rowId = table === 'accounts' ? accountId : keyId;
      await operator.query('BEGIN');
      try {
        await operator.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [rowId]);
        const answer = await answerOf(chat(key));
        expect(typeof answer === 'string' ? answer : 'answered').toBe('answered');
        if (typeof answer === 'string') return;
        const body = expectEnvelope(answer, { status: 503, code: 'GW_STORAGE_BUSY', path });
        expect(body.errors.join(' ')).toMatch(/time limit/);
        expect(answer.headers['retry-after']).toBe('1');
      } finally {
        await operator.query('ROLLBACK');
      }
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
      expect(await balanceOf(accountId)).toBe(usdToNanos(1));
      expect(await keySpentAndHeld(keyId)).toEqual({ spent: 0n, held: 0n });
      expect(await usageRecords(gateway, key)).toEqual([]);
      // The row free again, the next request is served and charged once.
      expect((await chat(key)).statusCode).toBe(200);
      const [record] = await usageRecords(gateway, key);
      const charged = usdToNanos(record!.usdCost);
      expect(charged).toBeGreaterThan(0n);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
      expect(await balanceOf(accountId)).toBe(usdToNanos(1) - charged);
      expect(await keySpentAndHeld(keyId)).toEqual({ spent: charged, held: 0n });
    });
  }

  it('charges once a request whose settlement met the lock, once the row is free', async () => {
    const { key, keyId, accountId } = await gateway.createFundedKey({ credits: 1 });
    expect((await chat(key)).statusCode).toBe(200); // leases credit: the next request is admitted in memory
    await gateway.settled();
    await operator.query('BEGIN');
    try {
      await operator.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
      const answer = await answerOf(chat(key));
      expect(typeof answer === 'string' ? answer : answer.statusCode).toBe(200);
      // Its settlement meets the lock, gives up at the time-out (and is sent again) while the row stays locked.
      await expect.poll(() => logLines.some((line) => errorCodeOf(line) === '55P03')).toBe(true);
    } finally {
      await operator.query('ROLLBACK');
    }
    const records = await usageRecords(gateway, key);
    expect(records).toHaveLength(2);
    const charged = records.reduce((sum, record) => sum + usdToNanos(record.usdCost), 0n);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(await balanceOf(accountId)).toBe(usdToNanos(1) - charged);
    expect(await keySpentAndHeld(keyId)).toEqual({ spent: charged, held: 0n });
  });

  it("bounds every session of the gateway's pool: 5 s on a lock, 30 s on a statement, by default", async () => {
    const defaults = await startTestGateway();
    try {
      const rows = await defaults.gateway.core.storage.prepared<{ lock_timeout: string; statement_timeout: string }>(
        'session-bounds',
        "SELECT current_setting('lock_timeout') AS lock_timeout, current_setting('statement_timeout') AS statement_timeout",
        [],
      );
      expect(rows).toEqual([{ lock_timeout: '5s', statement_timeout: '30s' }]);
    } finally {
      await defaults.close();
    }
  });
});
