/**
 * A row a request needs, locked by another session that does not let go (an operator's transaction left open
 * in psql, a long maintenance statement): the request's statement gives up at the pool's lock time-out and the
 * request answers 503 in the envelope while the row is still locked, rather than waiting as long as the lock
 * lasts. Nothing is held or charged for it; a settlement that meets the lock is sent again and charged once,
 * in either mode of holding credit, keeping its hold meanwhile however long the lock lasts.
 */
import { eq } from 'drizzle-orm';
import pg from 'pg';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedStatement } from '../../src/storage/checked-rows.ts';
import { usdToNanos } from '../../src/domain/money.ts';
import { accounts, apiKeys } from '../../src/storage/schema.ts';
import { expectEnvelope, heldNanosOf, keyHeaders, usageRecords } from '../support/http-helpers.ts';
import { sandboxConfigYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const path = '/api/alpha/v1/chat/completions';
/** Long enough to outlast the test's lock time-out many times over, short enough to fail a waiting request cleanly. */
const waitingLimitMs = 20_000;

/** A small chat request of `key` through the gateway. */
function chatThrough(gateway: TestGateway, key: string) {
  return gateway.app.inject({
    method: 'POST',
    url: path,
    headers: keyHeaders(key),
    payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hello' }] },
  });
}

/** A gateway over its own database, and an operator's session on that database (which locks what the test says). */
interface Started {
  gateway: TestGateway;
  operator: pg.Client;
}

/** Starts them before the file's tests (handing them to `use`), and stops them after. */
function withOperator(start: () => Promise<TestGateway>, use: (started: Started) => void): void {
  let started: Partial<Started> = {};
  beforeAll(async () => {
    const gateway = await start();
    started = { gateway };
    const operator = new pg.Client({ connectionString: gateway.database.url });
    await operator.connect();
    started = { gateway, operator };
    use({ gateway, operator });
  });
  afterAll(async () => {
    await started.operator?.end();
    await started.gateway?.close();
  });
}

/** The SQLSTATE of the storage error a log line carries, if any. */
function errorCodeOf(line: Record<string, unknown>): unknown {
  const error = line.err;
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

describe('a request meeting a row another session keeps locked', () => {
  const logLines: Array<Record<string, unknown>> = [];
  let gateway: TestGateway;
  let operator: pg.Client;
  withOperator(
    () => startTestGateway({ storage: { lockTimeoutMs: 500 }, logLines }),
    (started) => ({ gateway, operator } = started),
  );
  const chat = (key: string) => chatThrough(gateway, key);

  /** The request's answer, or a note that it is still waiting after `waitingLimitMs`. */
  const answerOf = (request: ReturnType<typeof chat>) =>
    Promise.race([
      request,
      new Promise<string>((resolve) => setTimeout(resolve, waitingLimitMs, 'still waiting for the row')),
    ]);

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
      expect(await balanceOf(gateway, accountId)).toBe(usdToNanos(1));
      expect(await keySpentAndHeld(keyId)).toEqual({ spent: 0n, held: 0n });
      expect(await usageRecords(gateway, key)).toEqual([]);
      // The row free again, the next request is served and charged once.
      expect((await chat(key)).statusCode).toBe(200);
      const [record] = await usageRecords(gateway, key);
      const charged = usdToNanos(record!.usdCost);
      expect(charged).toBeGreaterThan(0n);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
      expect(await balanceOf(gateway, accountId)).toBe(usdToNanos(1) - charged);
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
    expect(await balanceOf(gateway, accountId)).toBe(usdToNanos(1) - charged);
    expect(await keySpentAndHeld(keyId)).toEqual({ spent: charged, held: 0n });
  });

  it("bounds every session of the gateway's pool: 5 s on a lock, 30 s on a statement, by default", async () => {
    const defaults = await startTestGateway();
    try {
      const bounds = preparedStatement({
        name: 'session-bounds',
        text: "SELECT current_setting('lock_timeout') AS lock_timeout, current_setting('statement_timeout') AS statement_timeout",
        row: Type.Object({ lock_timeout: Type.String(), statement_timeout: Type.String() }),
      });
      const rows = await defaults.gateway.core.storage.prepared(bounds, []);
      expect(rows).toEqual([{ lock_timeout: '5s', statement_timeout: '30s' }]);
    } finally {
      await defaults.close();
    }
  });
});

for (const mode of ['hold rows', 'credit leases'] as const) {
  describe(`with ${mode}, a settlement meeting a lock past its retries`, () => {
    const logLines: Array<Record<string, unknown>> = [];
    const ledger = `ledger: { heartbeatSeconds: 1, orphanHoldSeconds: 2${mode === 'hold rows' ? ', leaseMaxUsd: 0' : ''} }`;
    let gateway: TestGateway;
    let operator: pg.Client;
    withOperator(
      () => startTestGateway({ configText: sandboxConfigYaml(ledger), storage: { lockTimeoutMs: 500 }, logLines }),
      (started) => ({ gateway, operator } = started),
    );
    const chat = (key: string) => chatThrough(gateway, key);
    const lockTimeouts = () => logLines.filter((line) => errorCodeOf(line) === '55P03').length;

    it('keeps its hold, and is charged once the lock goes, while the process runs', { timeout: 90_000 }, async () => {
      const { key, keyId, accountId } = await gateway.createFundedKey({ credits: 1 });
      expect((await chat(key)).statusCode).toBe(200);
      await gateway.settled();
      const before = lockTimeouts();
      await operator.query('BEGIN');
      try {
        // Usage records cannot be written (reads go on): a hold is still taken, its settlement meets the lock.
        await operator.query('LOCK TABLE generations IN SHARE MODE');
        expect((await chat(key)).statusCode).toBe(200);
        // The first attempt and each of its retries gave up at the time-out; the hold is still there.
        await expect.poll(() => lockTimeouts() - before, { timeout: 40_000, interval: 200 }).toBeGreaterThanOrEqual(4);
        const [held] = await gateway.gateway.core.storage.db
          .select({ held: accounts.heldNanos })
          .from(accounts)
          .where(eq(accounts.id, accountId));
        expect(held!.held).toBeGreaterThan(0n);
      } finally {
        await operator.query('ROLLBACK');
      }
      // Sent again at a heartbeat of the hold reconciler, once the table is free.
      await expect
        .poll(async () => (await usageRecords(gateway, key)).length, { timeout: 20_000, interval: 200 })
        .toBe(2);
      const records = await usageRecords(gateway, key);
      const charged = records.reduce((sum, record) => sum + usdToNanos(record.usdCost), 0n);
      expect(charged).toBeGreaterThan(0n);
      expect(await heldNanosOf(gateway, accountId)).toBe(0n);
      expect(await balanceOf(gateway, accountId)).toBe(usdToNanos(1) - charged);
      const [spent] = await gateway.gateway.core.storage.db
        .select({ spent: apiKeys.spentTotalNanos, held: apiKeys.heldNanos })
        .from(apiKeys)
        .where(eq(apiKeys.id, keyId));
      expect(spent).toEqual({ spent: charged, held: 0n });
    });
  });
}

async function balanceOf(gateway: TestGateway, accountId: string): Promise<bigint> {
  const [row] = await gateway.gateway.core.storage.db
    .select({ balance: accounts.balanceNanos })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  return row!.balance;
}
