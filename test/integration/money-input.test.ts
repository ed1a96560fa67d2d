import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, bearer, createKeyOverHttp, expectEnvelope, signup } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/** USD amounts below one nano-USD would be stored as 0 without a word: they are refused, naming the field. */
describe('USD amounts below the ledger resolution', () => {
  let gateway: TestGateway;
  let accountId: string;
  let session: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    ({ accountId } = await gateway.createFundedKey({ credits: 1 }));
    session = (await signup(gateway)).token;
  });
  afterAll(async () => gateway?.close());

  const grant = (amount: number) =>
    gateway.request({
      method: 'POST',
      url: `/api/admin/v1/accounts/${accountId}/credits`,
      headers: adminHeaders,
      payload: { amount },
    });

  it('a credit grant of 4e-10, -4e-10 or 0 answers 400 naming amount, and writes nothing', async () => {
    for (const amount of [4e-10, -4e-10, 0]) {
      const body = expectEnvelope(await grant(amount), {
        status: 400,
        code: 'GW_VALIDATION',
        path: `/api/admin/v1/accounts/${accountId}/credits`,
      });
      expect(body.errors[0]).toMatch(/^amount /);
    }
    const account = await gateway.request({
      method: 'GET',
      url: `/api/admin/v1/accounts/${accountId}`,
      headers: adminHeaders,
    });
    expect(account.json()).toMatchObject({ creditBalance: 1 });
  });

  it('a credit grant finer than a nano-USD answers 400 naming amount, rather than a rounded grant', async () => {
    for (const amount of [1.0000000004, 0.0000000015, -0.0000000015]) {
      const body = expectEnvelope(await grant(amount), {
        status: 400,
        code: 'GW_VALIDATION',
        path: `/api/admin/v1/accounts/${accountId}/credits`,
      });
      expect(body.errors).toEqual([`amount: ${amount} USD is not a whole number of nano-USD (0.000000001)`]);
    }
  });

  it('a credit grant of exactly one nano-USD is kept', async () => {
    const response = await grant(1e-9);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ creditBalance: 1.000000001 });
  });

  it('a key cap of 1e-12 answers 400 naming the cap, on creation and on change', async () => {
    const created = await gateway.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(session),
      payload: { name: 'tiny', limits: { daily: 1e-12 } },
    });
    expect(expectEnvelope(created, { status: 400, code: 'GW_VALIDATION', path: '/api/v1/api-keys' }).errors[0]).toMatch(
      /^limits\.daily /,
    );
    const key = await createKeyOverHttp(gateway, bearer(session));
    const url = `/api/v1/api-keys/${key.id}/usage-limit`;
    const changed = await gateway.request({
      method: 'PATCH',
      url,
      headers: bearer(session),
      payload: { total: 1e-12 },
    });
    expect(expectEnvelope(changed, { status: 400, code: 'GW_VALIDATION', path: url }).errors[0]).toMatch(/^total /);
    const admin = await gateway.request({
      method: 'POST',
      url: `/api/admin/v1/accounts/${accountId}/api-keys`,
      headers: adminHeaders,
      payload: { name: 'x', limits: { weekly: 5e-10 } },
    });
    expect(
      expectEnvelope(admin, {
        status: 400,
        code: 'GW_VALIDATION',
        path: `/api/admin/v1/accounts/${accountId}/api-keys`,
      }).errors[0],
    ).toMatch(/^limits\.weekly /);
  });

  it('a cap of 0 is still a cap: nothing may be spent', async () => {
    const key = await createKeyOverHttp(gateway, bearer(session), { name: 'frozen', limits: { daily: 0 } });
    expect(key.limits).toEqual({ daily: 0 });
  });

  it('opening credits below one nano-USD are refused naming credits', async () => {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/admin/v1/accounts',
      headers: adminHeaders,
      payload: { email: 'tiny@example.com', credits: 1e-12 },
    });
    expect(
      expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: '/api/admin/v1/accounts' }).errors[0],
    ).toMatch(/^credits /);
  });
});
