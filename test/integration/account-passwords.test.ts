/**
 * Passwords without SQL: the owner changes theirs (the current one required, throttled with failed logins, the
 * other sessions ended in every process), and the operator sets one on any account, one made without a password
 * included (admin API, operator console's API; the CLI's command is in cli-accounts.test.ts). Each change is in
 * the audit log without the password, and no log line carries one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/config/environment.ts';
import { createGateway, type RunningGateway } from '../../src/main.ts';
import {
  adminHeaders,
  bearer,
  createKeyOverHttp,
  expectEnvelope,
  keyHeaders,
  shippedConfigWith,
  signup,
  testPassword,
  uniqueEmail,
  type AccountBody,
} from '../support/http-helpers.ts';
import { operatorSession } from '../support/operator-session.ts';
import { startTestGateway, testSecret, type TestGateway } from '../support/test-gateway.ts';

const accounts = `
accounts:
  signupCredits: 0
  loginFailuresPerEmail: 3
  loginFailuresPerAddress: 50
  throttleWindowSeconds: 600
`;

const ownRoute = '/api/v1/account/password';

interface AuditEntryBody {
  action: string;
  actor: { kind: string; accountId?: string };
  accountId?: string;
  subject: { type: string; id?: string };
  request?: unknown;
}

describe('setting and changing passwords', () => {
  let gateway: TestGateway;
  /** A second gateway process on the same database, with caches of its own. */
  let second: RunningGateway;
  let dataDir: string;
  let client: pg.Client;
  const logLines: Array<Record<string, unknown>> = [];
  /** Every password sent in this file, right or wrong: none may reach a log line or the audit log. */
  const passwordsSent = new Set<string>([testPassword]);

  const password = (label: string) => {
    const made = `${label} ${Math.random().toString(36).slice(2)} passphrase`;
    passwordsSent.add(made);
    return made;
  };
  const login = (email: string, secret: string) =>
    gateway.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: secret } });
  const account = (headers: Record<string, string>) =>
    gateway.request({ method: 'GET', url: '/api/v1/account', headers });
  const changeOwn = (token: string, body: Record<string, unknown>, remoteAddress?: string) =>
    gateway.request({
      method: 'PUT',
      url: ownRoute,
      headers: bearer(token),
      payload: body,
      ...(remoteAddress ? { remoteAddress } : {}),
    });
  const adminSet = (accountId: string, body: Record<string, unknown>) =>
    gateway.request({
      method: 'PUT',
      url: `/api/admin/v1/accounts/${accountId}/password`,
      headers: adminHeaders,
      payload: body,
    });
  const auditOf = async (accountId: string): Promise<AuditEntryBody[]> => {
    const page = await gateway.request({
      method: 'GET',
      url: `/api/admin/v1/audit-log?accountId=${accountId}&action=account.password`,
      headers: adminHeaders,
    });
    expect(page.statusCode, page.body).toBe(200);
    return page.json<{ results: AuditEntryBody[] }>().results;
  };

  beforeAll(async () => {
    gateway = await startTestGateway({ configText: shippedConfigWith({ accounts }), logLines });
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-passwords-'));
    second = await createGateway({
      environment: readEnvironment({ DATA_DIR: dataDir, GATEWAY_SECRET: testSecret }),
      config: gateway.config,
      storage: { kind: 'postgres', url: gateway.database.url },
      logger: pino({ level: 'silent' }),
    });
    await second.app.ready();
    client = new pg.Client({ connectionString: gateway.database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await second?.close();
    await gateway?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("changes the owner's password: the current one required, the other sessions ended in every process, this one and the keys kept", async () => {
    const email = uniqueEmail('owner');
    const first = await signup(gateway, email);
    const other = (await login(email, testPassword)).json<{ token: string }>().token;
    const key = await createKeyOverHttp(gateway, bearer(first.token));
    // The other process has the other session cached.
    expect(
      (await second.app.inject({ method: 'GET', url: '/api/v1/account', headers: bearer(other) })).statusCode,
    ).toBe(200);

    const fresh = password('fresh');
    const changed = await changeOwn(first.token, { currentPassword: testPassword, newPassword: fresh });
    expect(changed.statusCode, changed.body).toBe(204);
    expect(changed.body).toBe('');

    expectEnvelope(await account(bearer(other)), {
      status: 401,
      code: 'GW_INVALID_CREDENTIALS',
      path: '/api/v1/account',
    });
    const started = Date.now();
    while (
      (await second.app.inject({ method: 'GET', url: '/api/v1/account', headers: bearer(other) })).statusCode !== 401
    ) {
      if (Date.now() - started > 1_000) throw new Error('the other process still takes the ended session');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect((await account(bearer(first.token))).statusCode).toBe(200);
    expect((await account(keyHeaders(key.key))).statusCode).toBe(200);
    expectEnvelope(await login(email, testPassword), {
      status: 401,
      code: 'GW_INVALID_CREDENTIALS',
      path: '/api/v1/auth/login',
    });
    expect((await login(email, fresh)).statusCode).toBe(200);

    const [entry, ...more] = await auditOf(first.account.id);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      action: 'account.password',
      actor: { kind: 'account', accountId: first.account.id },
      accountId: first.account.id,
      subject: { type: 'account', id: first.account.id },
    });
    expect(entry).not.toHaveProperty('request');
  });

  it('refuses a wrong current password with 403 and changes nothing', async () => {
    const email = uniqueEmail('wrong');
    const first = await signup(gateway, email);
    const other = (await login(email, testPassword)).json<{ token: string }>().token;
    const refused = await changeOwn(first.token, {
      currentPassword: password('not the password'),
      newPassword: password('never set'),
    });
    const body = expectEnvelope(refused, { status: 403, code: 'GW_FORBIDDEN', path: ownRoute });
    expect(body.errors[0]).toContain('current password is wrong');
    expect((await account(bearer(other))).statusCode).toBe(200);
    expect((await login(email, testPassword)).statusCode).toBe(200);
    expect(await auditOf(first.account.id)).toEqual([]);
  });

  it("holds a new password to signup's rules, and takes a session only", async () => {
    const session = await signup(gateway);
    for (const [body, field] of [
      [{ currentPassword: testPassword, newPassword: 'short' }, 'body.newPassword'],
      [{ currentPassword: testPassword, newPassword: 'x'.repeat(257) }, 'body.newPassword'],
      [{ newPassword: password('no current') }, 'body'],
      [{ currentPassword: testPassword, newPassword: password('extra'), password: 'other' }, 'body.password'],
    ] as const) {
      const answer = expectEnvelope(await changeOwn(session.token, body), {
        status: 400,
        code: 'GW_VALIDATION',
        path: ownRoute,
      });
      expect(answer.errors.join(' '), JSON.stringify(body)).toContain(field);
    }
    const key = await createKeyOverHttp(gateway, bearer(session.token));
    expectEnvelope(
      await gateway.request({
        method: 'PUT',
        url: ownRoute,
        headers: keyHeaders(key.key),
        payload: { currentPassword: testPassword, newPassword: password('by key') },
      }),
      { status: 403, code: 'GW_SESSION_REQUIRED', path: ownRoute },
    );
    expectEnvelope(
      await gateway.request({
        method: 'PUT',
        url: ownRoute,
        payload: { currentPassword: testPassword, newPassword: password('anonymous') },
      }),
      { status: 401, code: 'GW_UNAUTHENTICATED', path: ownRoute },
    );
    expect((await login(session.account.email, testPassword)).statusCode).toBe(200);
    expect(await auditOf(session.account.id)).toEqual([]);
  });

  it('counts wrong current passwords with failed logins of the email: past the limit both answer 429, a right one clears the count', async () => {
    const email = uniqueEmail('guessing');
    const session = await signup(gateway, email);
    // Two wrong ones, then the right one: the count starts again.
    for (let attempt = 0; attempt < 2; attempt++)
      expect(
        (await changeOwn(session.token, { currentPassword: `wrong ${attempt}`, newPassword: 'x'.repeat(9) }))
          .statusCode,
      ).toBe(403);
    const kept = password('kept');
    expect((await changeOwn(session.token, { currentPassword: testPassword, newPassword: kept })).statusCode).toBe(204);
    // A failed login and two wrong current passwords, from three addresses: the email's limit of 3 is reached.
    expect((await login(email, 'a wrong guess')).statusCode).toBe(401);
    for (let attempt = 0; attempt < 2; attempt++)
      expect(
        (
          await changeOwn(
            session.token,
            { currentPassword: `guess ${attempt}`, newPassword: 'y'.repeat(9) },
            `198.51.100.${attempt + 20}`,
          )
        ).statusCode,
      ).toBe(403);
    const throttled = await changeOwn(session.token, { currentPassword: kept, newPassword: password('too late') });
    expectEnvelope(throttled, { status: 429, code: 'GW_TOO_MANY_ATTEMPTS', path: ownRoute });
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    expectEnvelope(await login(email, kept), { status: 429, code: 'GW_TOO_MANY_ATTEMPTS', path: '/api/v1/auth/login' });
  });

  it('lets the operator set the password of an account made without one, and end the sessions of one that has one', async () => {
    const made = await gateway.request({
      method: 'POST',
      url: '/api/admin/v1/accounts',
      headers: adminHeaders,
      payload: { email: uniqueEmail('keyonly') },
    });
    expect(made.statusCode, made.body).toBe(201);
    const keyOnly = made.json<AccountBody>();
    const first = password('first');
    expect((await login(keyOnly.email, first)).statusCode).toBe(401);
    const set = await adminSet(keyOnly.id, { password: first });
    expect(set.statusCode, set.body).toBe(204);
    const signedIn = await login(keyOnly.email, first);
    expect(signedIn.statusCode, signedIn.body).toBe(200);

    // A forgotten password: the operator sets another, and every session of the account ends.
    const token = signedIn.json<{ token: string }>().token;
    const key = await createKeyOverHttp(gateway, bearer(token));
    const reset = password('reset');
    expect((await adminSet(keyOnly.id, { password: reset })).statusCode).toBe(204);
    expectEnvelope(await account(bearer(token)), {
      status: 401,
      code: 'GW_INVALID_CREDENTIALS',
      path: '/api/v1/account',
    });
    expect((await account(keyHeaders(key.key))).statusCode).toBe(200);
    expect((await login(keyOnly.email, first)).statusCode).toBe(401);
    expect((await login(keyOnly.email, reset)).statusCode).toBe(200);

    const route = `/api/admin/v1/accounts/${keyOnly.id}/password`;
    expectEnvelope(await adminSet(keyOnly.id, { password: 'short' }), {
      status: 400,
      code: 'GW_VALIDATION',
      path: route,
    });
    expectEnvelope(await adminSet(keyOnly.id, {}), { status: 400, code: 'GW_VALIDATION', path: route });
    expectEnvelope(await adminSet('acct_missing', { password: password('nobody') }), {
      status: 404,
      code: 'GW_NOT_FOUND',
      path: '/api/admin/v1/accounts/acct_missing/password',
    });
    const entries = await auditOf(keyOnly.id);
    expect(entries).toHaveLength(2);
    for (const entry of entries) {
      expect(entry).toMatchObject({ action: 'account.password', actor: { kind: 'operator' }, accountId: keyOnly.id });
      expect(entry.actor).not.toHaveProperty('accountId');
      expect(entry).not.toHaveProperty('request');
    }
  });

  it("lets an operator account set a password in the console's API, keeping its own session when the account is its own", async () => {
    const operator = await operatorSession(gateway);
    const user = await signup(gateway);
    const route = (accountId: string) => `/api/operator/v1/accounts/${accountId}/password`;
    const given = password('given');
    const set = await gateway.request({
      method: 'PUT',
      url: route(user.account.id),
      headers: bearer(operator.token),
      payload: { password: given },
    });
    expect(set.statusCode, set.body).toBe(204);
    expect((await account(bearer(user.token))).statusCode).toBe(401);
    expect((await login(user.account.email, given)).statusCode).toBe(200);
    const [entry] = await auditOf(user.account.id);
    expect(entry).toMatchObject({ actor: { kind: 'operator', accountId: operator.accountId } });

    // Its own account: its other session ends, the one that asked stays.
    const operatorEmail = (await account(bearer(operator.token))).json<AccountBody>().email;
    const otherOwn = (await login(operatorEmail, testPassword)).json<{ token: string }>().token;
    const own = password('own');
    expect(
      (
        await gateway.request({
          method: 'PUT',
          url: route(operator.accountId),
          headers: bearer(operator.token),
          payload: { password: own },
        })
      ).statusCode,
    ).toBe(204);
    expect((await account(bearer(operator.token))).statusCode).toBe(200);
    expect((await account(bearer(otherOwn))).statusCode).toBe(401);

    // A user's session is no operator's.
    expectEnvelope(
      await gateway.request({
        method: 'PUT',
        url: route(operator.accountId),
        headers: bearer(user.token),
        payload: { password: password('usurped') },
      }),
      { status: 401, code: 'GW_INVALID_CREDENTIALS', path: route(operator.accountId) },
    );
    const stranger = await signup(gateway);
    expectEnvelope(
      await gateway.request({
        method: 'PUT',
        url: route(operator.accountId),
        headers: bearer(stranger.token),
        payload: { password: password('usurped') },
      }),
      { status: 403, code: 'GW_FORBIDDEN', path: route(operator.accountId) },
    );
    expect((await login(operatorEmail, own)).statusCode).toBe(200);
  });

  it('keeps no password, nor its hash, in the audit log or any log line', async () => {
    const { rows } = await client.query<{ row: string }>('SELECT row_to_json(audit_log)::text AS row FROM audit_log');
    const hashes = await client.query<{ password_hash: string }>(
      'SELECT password_hash FROM accounts WHERE password_hash IS NOT NULL',
    );
    expect(rows.length).toBeGreaterThan(5);
    const log = logLines.map((line) => JSON.stringify(line)).join('\n');
    expect(log).toContain('/password');
    for (const secret of [...passwordsSent, ...hashes.rows.map((row) => row.password_hash)]) {
      for (const { row } of rows) expect(row).not.toContain(secret);
      expect(log.includes(secret), 'a log line holds a password').toBe(false);
    }
  });
});
