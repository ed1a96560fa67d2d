import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, bearer, expectEnvelope, signup } from '../support/http-helpers.ts';
import { operatorSession } from '../support/operator-session.ts';
import { chargedRecords, chatAs } from '../support/charged-records.ts';
import { modelYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

interface ModelView {
  id: string;
  source: string;
  active: boolean;
  served: boolean;
  priceVersion?: string;
  entry: { pricing?: Record<string, number> };
}

interface PriceVersion {
  id: string;
  source: string;
  actor?: string;
  current: boolean;
  pricing: Record<string, number>;
}

/**
 * The catalog and prices through the operator API (`/api/operator/v1/catalog`): an operator's price applies to
 * the next request, whose record names the new price version; a price version and the audit log name the
 * operator account; a user's session is refused; a bad price changes nothing.
 */
describe('operator API: catalog and prices', () => {
  let gateway: TestGateway;
  let operator: { token: string; accountId: string };

  const configText = [
    'providers:',
    '  sandbox: { protocol: sandbox }',
    'models:',
    modelYaml('sandbox-echo', { provider: 'sandbox', upstream: 'echo', prices: { input: 0.1, output: 0.2 } }),
    modelYaml('other-echo', { provider: 'sandbox', upstream: 'echo' }),
  ].join('\n');

  beforeAll(async () => {
    gateway = await startTestGateway({ configText });
    operator = await operatorSession(gateway);
  });
  afterAll(async () => gateway?.close());

  type Call = { method: 'GET' | 'PUT' | 'POST' | 'DELETE'; url: string; payload?: unknown; token?: string };
  const callAs = ({ method, url, payload, token = operator.token }: Call) =>
    gateway.request({
      method,
      url: `/api/operator/v1/catalog/${url}`,
      headers: bearer(token),
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  const call = (method: Call['method'], url: string, payload?: unknown) => callAs({ method, url, payload });
  const chat = (key: string, model: string) => chatAs(gateway, key, model);
  const records = (accountId: string) => chargedRecords(gateway, accountId);
  const modelOf = async (id: string) => {
    const list = await call('GET', 'models');
    expect(list.statusCode, list.body).toBe(200);
    const found = list.json<{ results: ModelView[] }>().results.find((model) => model.id === id);
    expect(found, id).toBeDefined();
    return found!;
  };
  const historyOf = async (id: string) => {
    const page = await call('GET', `prices/${id}`);
    expect(page.statusCode, page.body).toBe(200);
    return page.json<{ results: PriceVersion[]; total: number }>();
  };
  const auditCount = async (action: string) => {
    const page = await gateway.request({
      method: 'GET',
      url: `/api/admin/v1/audit-log?action=${action}`,
      headers: adminHeaders,
    });
    return page.json<{ total: number }>().total;
  };

  it('lists the models with their source, switch and price version', async () => {
    const echo = await modelOf('sandbox-echo');
    expect(echo).toMatchObject({
      source: 'file',
      active: true,
      served: true,
      entry: { pricing: { inputPerMTok: 0.1 } },
    });
    expect(echo.priceVersion).toMatch(/^price_/);
  });

  it("charges the next request at the operator's price, under the new price version, named in the history and the audit log", async () => {
    const { key, accountId } = await gateway.createFundedKey();
    const before = await modelOf('sandbox-echo');
    expect((await chat(key, 'sandbox-echo')).statusCode).toBe(200);

    const priced = await call('PUT', 'prices/sandbox-echo', { inputPerMTok: 1000, outputPerMTok: 1000 });
    expect(priced.statusCode, priced.body).toBe(200);
    const view = priced.json<ModelView>();
    expect(view.priceVersion).not.toBe(before.priceVersion);
    expect((await chat(key, 'sandbox-echo')).statusCode).toBe(200);

    const [after, earlier] = await records(accountId);
    expect(earlier?.priceVersion).toBe(before.priceVersion);
    expect(after?.priceVersion).toBe(view.priceVersion);
    expect(after!.usdCost).toBeGreaterThan(earlier!.usdCost * 500);

    const history = await historyOf('sandbox-echo');
    expect(history.results[0]).toMatchObject({
      id: view.priceVersion,
      source: 'runtime',
      actor: operator.accountId,
      current: true,
      pricing: { inputPerMTok: 1000, outputPerMTok: 1000 },
    });
    expect(history.results[1]).toMatchObject({ id: before.priceVersion, source: 'file', current: false });

    const log = await gateway.request({
      method: 'GET',
      url: '/api/admin/v1/audit-log?action=catalog.price.set',
      headers: adminHeaders,
    });
    expect(log.json().results[0]).toMatchObject({
      actor: { kind: 'operator', accountId: operator.accountId },
      subject: { type: 'model', id: 'sandbox-echo' },
      before: { priceVersion: before.priceVersion },
      after: { priceVersion: view.priceVersion },
    });
  });

  it('refuses a bad price with 400 naming the field, and changes nothing', async () => {
    const before = await modelOf('other-echo');
    const versions = (await historyOf('other-echo')).total;
    const audited = await auditCount('catalog.price.set');
    const refused = await call('PUT', 'prices/other-echo', { inputPerMTok: -1, outputPerMTok: 2 });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json<{ error: { message: string } }>().error.message).toContain('inputPerMTok');
    // A price the ledger cannot hold exactly (finer than a nano-USD) is refused as the start and a reload refuse it.
    const subNano = await call('PUT', 'prices/other-echo', { inputPerMTok: 1, perImage: 1.5e-9 });
    expect(subNano.statusCode, subNano.body).toBe(400);
    expect(subNano.body).toContain('pricing.perImage: 1.5e-9 USD is not a whole number of nano-USD');
    expect(await modelOf('other-echo')).toEqual(before);
    expect((await historyOf('other-echo')).total).toBe(versions);
    expect(await auditCount('catalog.price.set')).toBe(audited);
  });

  it('refuses every catalog route to a user session with 403, and changes nothing', async () => {
    const user = await signup(gateway);
    const before = await modelOf('other-echo');
    for (const [method, url, payload] of [
      ['GET', 'models', undefined],
      ['GET', 'prices/other-echo', undefined],
      ['PUT', 'prices/other-echo', { inputPerMTok: 5 }],
      ['POST', 'disable/other-echo', undefined],
      ['PUT', 'models/other-echo', { id: 'other-echo', providers: [{ provider: 'sandbox', model: 'echo' }] }],
      ['DELETE', 'models/other-echo', undefined],
    ] as const) {
      expectEnvelope(await callAs({ method, url, payload, token: user.token }), {
        status: 403,
        code: 'GW_FORBIDDEN',
        path: `/api/operator/v1/catalog/${url}`,
      });
    }
    expect(await modelOf('other-echo')).toEqual(before);
  });

  it('switches a model off and on, and puts and deletes a runtime entry', async () => {
    const { key } = await gateway.createFundedKey();
    const off = await call('POST', 'disable/other-echo');
    expect(off.json<ModelView>()).toMatchObject({ active: false, served: false });
    expectEnvelope(await chat(key, 'other-echo'), {
      status: 400,
      code: 'GW_MODEL_NOT_AVAILABLE',
      path: '/api/alpha/v1/chat/completions',
    });
    const on = await call('POST', 'enable/other-echo');
    expect(on.json<ModelView>()).toMatchObject({ active: true, served: true });
    expect((await chat(key, 'other-echo')).statusCode).toBe(200);

    const put = await call('PUT', 'models/vendor/json-echo', {
      id: 'vendor/json-echo',
      name: 'JSON echo',
      pricing: { inputPerMTok: 3 },
      providers: [{ provider: 'sandbox', model: 'echo' }],
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json<ModelView>()).toMatchObject({ id: 'vendor/json-echo', source: 'runtime', served: true });
    expect((await chat(key, 'vendor/json-echo')).statusCode).toBe(200);
    const deleted = await call('DELETE', 'models/vendor/json-echo');
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(
      (await call('GET', 'models')).json<{ results: ModelView[] }>().results.map((model) => model.id),
    ).not.toContain('vendor/json-echo');
  });
});
