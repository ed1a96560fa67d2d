/**
 * Disabling an account through one gateway reaches another sharing its PostgreSQL database at once: the other
 * has the account's key and session cached, and refuses both from the event on (LISTEN/NOTIFY), not when its
 * cache would have expired. Enabling gives both back the same way. Two gateways, each with its own storage
 * (pool and LISTEN connection) and caches, as two processes have.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/config/environment.ts';
import { createGateway, type RunningGateway } from '../../src/main.ts';
import { bearer, keyHeaders, signup } from '../support/http-helpers.ts';
import { operatorSession } from '../support/operator-session.ts';
import { startTestGateway, testSecret, type TestGateway } from '../support/test-gateway.ts';

describe('disabling an account on one gateway process, seen by another on the same database', () => {
  let first: TestGateway;
  let second: RunningGateway;
  let dataDir: string;

  beforeAll(async () => {
    first = await startTestGateway();
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-second-'));
    second = await createGateway({
      environment: readEnvironment({ DATA_DIR: dataDir, GATEWAY_SECRET: testSecret }),
      config: first.config,
      storage: { kind: 'postgres', url: first.database.url },
      logger: pino({ level: 'silent' }),
    });
    await second.app.ready();
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const onSecond = (headers: Record<string, string>) =>
    second.app.inject({ method: 'GET', url: '/api/v1/account', headers });
  const completeOnSecond = (key: string) =>
    second.app.inject({
      method: 'POST',
      url: '/api/v1/text/completions',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] },
    });

  /** Polls until `check` holds, for at most a second: the event crosses the database, it is not instant. */
  async function withinASecond(check: () => Promise<boolean>): Promise<number> {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > 1_000) throw new Error('not seen within a second');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return Date.now() - started;
  }

  it("refuses the disabled account's cached key and session on the other process within a second, and accepts them again once enabled", async () => {
    const operator = await operatorSession(first);
    const user = await signup(first);
    const key = await first.gateway.core.services.apiKeys.create(user.account.id, { name: 'k' });
    await first.gateway.core.services.accounts.addCredits(user.account.id, 5, 'test');
    // The second process authenticates both, and caches them.
    expect((await onSecond(keyHeaders(key.key))).statusCode).toBe(200);
    expect((await onSecond(bearer(user.token))).statusCode).toBe(200);
    expect((await completeOnSecond(key.key)).statusCode).toBe(200);

    const disabled = await first.request({
      method: 'POST',
      url: `/api/operator/v1/accounts/${user.account.id}/disable`,
      headers: bearer(operator.token),
    });
    expect(disabled.statusCode, disabled.body).toBe(200);
    await withinASecond(async () => (await onSecond(keyHeaders(key.key))).statusCode === 401);
    await withinASecond(async () => (await onSecond(bearer(user.token))).statusCode === 401);
    expect((await completeOnSecond(key.key)).statusCode).toBe(401);

    const enabled = await first.request({
      method: 'POST',
      url: `/api/operator/v1/accounts/${user.account.id}/enable`,
      headers: bearer(operator.token),
    });
    expect(enabled.statusCode).toBe(200);
    // The refusal the second process cached is forgotten too, not kept for its negative lifetime.
    await withinASecond(async () => (await onSecond(keyHeaders(key.key))).statusCode === 200);
    await withinASecond(async () => (await onSecond(bearer(user.token))).statusCode === 200);
    expect((await completeOnSecond(key.key)).statusCode).toBe(200);
  });

  it("takes an operator's role away on the other process within a second", async () => {
    const operator = await operatorSession(first);
    const list = () =>
      second.app.inject({ method: 'GET', url: '/api/operator/v1/accounts', headers: bearer(operator.token) });
    expect((await list()).statusCode).toBe(200);
    await first.gateway.core.services.accounts.setRole(operator.accountId, 'user');
    await withinASecond(async () => (await list()).statusCode === 403);
  });
});
