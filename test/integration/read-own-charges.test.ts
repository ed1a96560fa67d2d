/**
 * A client's read of its account's money made the instant an answer ends shows that answer's charge: the
 * balance, the key lookup, the usage records, the dashboard's account and key pages, and the operator's reads
 * of the account first wait for the settlements the process is still writing for the account. Run on the test server (the embedded PostgreSQL,
 * or TEST_DATABASE_URL).
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, bearer, keyHeaders } from '../support/http-helpers.ts';
import { sandboxConfigYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

const inputs = Array.from({ length: 128 }, (_, index) => `input number ${index} to embed`);

describe('reading your own charges', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    // A wait long enough that only a settlement never written could end it: the waits below end when the
    // settlement does.
    gateway = await startTestGateway({ configText: sandboxConfigYaml('ledger:\n  settlementWaitMs: 30000\n') });
    // Writing a usage record of a listed account takes a second: an answer is out long before its settlement
    // is written, as under a busy database.
    await gateway.gateway.core.storage.db.execute(
      sql.raw(`
        CREATE TABLE slow_settlement_accounts (account_id text PRIMARY KEY);
        CREATE FUNCTION slow_settlement() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF EXISTS (SELECT 1 FROM slow_settlement_accounts WHERE account_id = NEW.account_id) THEN
            PERFORM pg_sleep(1);
          END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER slow_settlement BEFORE INSERT ON generations FOR EACH ROW EXECUTE FUNCTION slow_settlement();
      `),
    );
  });
  afterAll(async () => gateway?.close());

  async function slowAccount(): Promise<{ accountId: string; key: string }> {
    const account = await gateway.createFundedKey({ credits: 5, limits: { total: 4, daily: 3 } });
    await gateway.gateway.core.storage.db.execute(
      sql`INSERT INTO slow_settlement_accounts (account_id) VALUES (${account.accountId})`,
    );
    return account;
  }

  const embed = (key: string) =>
    gateway.app.inject({
      method: 'POST',
      url: '/api/alpha/v1/embeddings',
      headers: bearer(key),
      payload: { model: 'sandbox-embedding', input: inputs, encoding_format: 'float' },
    });

  const operator = () => adminHeaders;
  const reads: Array<{
    name: string;
    url: string | ((accountId: string) => string);
    headers: (key: string) => Record<string, string>;
  }> = [
    { name: 'balance', url: '/api/compat/v1/balance', headers: keyHeaders },
    { name: 'key lookup', url: '/api/compat/v1/api-key', headers: keyHeaders },
    { name: 'usage (compat)', url: '/api/compat/v1/usage', headers: keyHeaders },
    { name: 'account', url: '/api/v1/account', headers: bearer },
    { name: 'keys and their spend', url: '/api/v1/api-keys', headers: bearer },
    { name: 'usage records', url: '/api/v1/usage', headers: bearer },
    { name: 'daily spend', url: '/api/v1/usage/daily', headers: bearer },
    // The operator's reads of the account wait for its settlements too.
    { name: "operator's account", url: (accountId) => `/api/admin/v1/accounts/${accountId}`, headers: operator },
    {
      name: "operator's usage records",
      url: (accountId) => `/api/admin/v1/accounts/${accountId}/generations`,
      headers: operator,
    },
  ];

  it.each(reads)('the $name read right after a 200 for 128 embedding inputs shows its charge', async (read) => {
    const { key, accountId } = await slowAccount();
    const url = typeof read.url === 'string' ? read.url : read.url(accountId);
    const get = () => gateway.app.inject({ method: 'GET', url, headers: read.headers(key) });
    const before = (await get()).json();
    const answer = await embed(key);
    expect(answer.statusCode).toBe(200);
    const right = await get();
    expect(right.statusCode).toBe(200);
    await gateway.settled();
    const settled = (await get()).json();
    expect(settled).not.toEqual(before);
    expect(right.json()).toEqual(settled);
  });

  it('the balance read right after a streamed answer ends shows its charge', async () => {
    const { key } = await slowAccount();
    const balance = async () =>
      (await gateway.app.inject({ method: 'GET', url: '/api/compat/v1/balance', headers: keyHeaders(key) })).json<{
        creditBalance: number;
      }>().creditBalance;
    const streamed = await gateway.app.inject({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: bearer(key),
      payload: { model: 'sandbox-echo', stream: true, messages: [{ role: 'user', content: 'say something back' }] },
    });
    expect(streamed.statusCode).toBe(200);
    expect(streamed.body).toContain('data: [DONE]');
    const right = await balance();
    await gateway.settled();
    const settled = await balance();
    expect(settled).toBeLessThan(5);
    expect(right).toBe(settled);
  });

  it('a read of another account does not wait for this account’s settlements', async () => {
    const slow = await slowAccount();
    const other = await gateway.createFundedKey({ credits: 2 });
    const answer = await embed(slow.key);
    expect(answer.statusCode).toBe(200);
    const read = await gateway.app.inject({
      method: 'GET',
      url: '/api/compat/v1/balance',
      headers: keyHeaders(other.key),
    });
    // Answered while the slow account's settlement is still being written.
    const [written] = await uncheckedRows<{ records: number }>(
      gateway.gateway.core.storage.db,
      sql`SELECT count(*)::int AS records FROM generations WHERE account_id = ${slow.accountId}`,
    );
    expect(read.json()).toEqual({ creditBalance: 2 });
    expect(written?.records).toBe(0);
    await gateway.settled();
  });
});
