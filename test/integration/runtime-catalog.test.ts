import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, priceVersions, runtimeModels } from '../../src/storage/schema.ts';
import { adminHeaders, expectEnvelope, keyHeaders } from '../support/http-helpers.ts';
import { waitForImageJob } from '../support/image-jobs.ts';
import { chargedRecords, chatAs } from '../support/charged-records.ts';
import { modelYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * The runtime catalog through the admin API, in one process: what it refuses changes nothing, what it accepts
 * serves the next request and is audited, a reload of gateway.yaml keeps it, and usage records name the price
 * version they were charged at (a media job: the one frozen at its submission).
 */
describe('the runtime catalog', () => {
  let gateway: TestGateway;
  let directory: string;
  let configPath: string;
  const logLines: Array<Record<string, unknown>> = [];

  const configText = (echoPrices = { input: 0.1, output: 0.2 }) =>
    [
      'providers:',
      '  sandbox: { protocol: sandbox }',
      'models:',
      modelYaml('sandbox-echo', { provider: 'sandbox', upstream: 'echo', prices: echoPrices }),
      modelYaml('file-only', { provider: 'sandbox', upstream: 'echo' }),
      '  - id: sandbox-image',
      '    outputModalities: [image]',
      '    pricing: { perImage: 0.001 }',
      '    providers: [{ provider: sandbox, model: image }]',
      'jobs: { taskPollMs: 20, idlePollMs: 20 }',
    ].join('\n');

  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'gw-runtime-catalog-'));
    configPath = path.join(directory, 'gateway.yaml');
    writeFileSync(configPath, configText());
    gateway = await startTestGateway({ configText: configText(), env: { GATEWAY_CONFIG: configPath }, logLines });
  });

  afterAll(async () => {
    await gateway?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const admin = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    gateway.request({
      method,
      url: `/api/admin/v1/catalog/${url}`,
      headers: adminHeaders,
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  const chat = (key: string, model: string) => chatAs(gateway, key, model);
  const records = (accountId: string) => chargedRecords(gateway, accountId);
  const versionCount = async () => {
    const [row] = await gateway.gateway.core.storage.db.select({ value: count() }).from(priceVersions);
    return row?.value ?? 0;
  };
  const auditCount = async () => {
    const [row] = await gateway.gateway.core.storage.db.select({ value: count() }).from(auditLog);
    return row?.value ?? 0;
  };

  it('gives every priced file model a version at start, and names it on the records charged at it', async () => {
    const listed = await admin('GET', 'models');
    expect(listed.statusCode, listed.body).toBe(200);
    const echo = listed.json().results.find((model: { id: string }) => model.id === 'sandbox-echo');
    expect(echo).toMatchObject({ source: 'file', inFile: true, active: true, served: true });
    expect(echo.priceVersion).toMatch(/^price_/);

    const { key, accountId } = await gateway.createFundedKey();
    expect((await chat(key, 'sandbox-echo')).statusCode).toBe(200);
    const [record] = await records(accountId);
    expect(record?.priceVersion).toBe(echo.priceVersion);

    const history = await admin('GET', 'prices/sandbox-echo');
    expect(history.json()).toMatchObject({
      total: 1,
      results: [{ id: echo.priceVersion, source: 'file', pricing: { inputPerMTok: 0.1, outputPerMTok: 0.2 } }],
    });
  });

  it('opens only to the admin token: a key, a session or nothing is refused and changes nothing', async () => {
    const { key } = await gateway.createFundedKey();
    const before = (await admin('GET', 'models')).json();
    for (const headers of [keyHeaders(key), { authorization: `Bearer ${key}` }, {}]) {
      for (const [method, url, payload] of [
        ['GET', 'models', undefined],
        ['PUT', 'prices/sandbox-echo', { inputPerMTok: 0 }],
        ['POST', 'disable/sandbox-echo', undefined],
        ['DELETE', 'models/sandbox-echo', undefined],
      ] as const) {
        const answer = await gateway.request({
          method,
          url: `/api/admin/v1/catalog/${url}`,
          headers,
          ...(payload === undefined ? {} : { payload }),
        });
        expect(answer.statusCode, `${method} ${url}`).toBe(401);
      }
    }
    expect((await admin('GET', 'models')).json()).toEqual(before);
  });

  it('refuses invalid entries and prices with 400 naming why, and changes nothing', async () => {
    const before = (await admin('GET', 'models')).json();
    const versions = await versionCount();
    const audited = await auditCount();
    const entry = (fields: Record<string, unknown>) => ({
      id: 'new-model',
      pricing: { inputPerMTok: 1 },
      providers: [{ provider: 'sandbox', model: 'echo' }],
      ...fields,
    });
    const refusals: Array<[string, string, unknown, string]> = [
      [
        'PUT',
        'models/new-model',
        entry({ providers: [{ provider: 'nowhere', model: 'echo' }] }),
        'unknown provider "nowhere"',
      ],
      ['PUT', 'models/new-model', entry({ pricing: { inputPerMTok: -1 } }), 'at pricing.inputPerMTok'],
      ['PUT', 'models/new-model', entry({ pricng: { inputPerMTok: 1 } }), 'at pricng: unknown field'],
      ['PUT', 'models/bad%20id', entry({ id: 'bad id' }), 'at id'],
      ['PUT', 'models/new-model', entry({ id: 'other-model' }), 'is not the model of the path'],
      ['PUT', 'models/new-model', entry({ providers: [] }), 'at providers'],
      [
        'PUT',
        'models/new-model',
        entry({
          providers: [
            {
              provider: 'sandbox',
              model: 'echo',
              capabilities: { params: { n: { type: 'range', min: 5, max: 1 } } },
            },
          ],
        }),
        'min is greater than max',
      ],
      ['PUT', 'prices/sandbox-echo', { inputPerMTok: 'cheap' }, 'at inputPerMTok'],
      ['PUT', 'prices/sandbox-echo', { perImage: 2_000_000 }, 'at perImage'],
      ['PUT', 'prices/sandbox-echo', { perToken: 1 }, 'at perToken: unknown field'],
    ];
    for (const [method, url, payload, why] of refusals) {
      const answer = await admin(method as 'PUT', url, payload);
      const body = expectEnvelope(answer, { status: 400, code: 'GW_VALIDATION', path: `/api/admin/v1/catalog/${url}` });
      expect(body.errors.join('\n'), `${url} ${JSON.stringify(payload)}`).toContain(why);
    }
    // Each problem is named once: the first in the message (errors[0]), the others after it.
    const unknownField = await admin('PUT', 'models/new-model', entry({ pricng: { inputPerMTok: 1 } }));
    expect(unknownField.json().errors).toEqual(['invalid model entry: at pricng: unknown field']);
    const twoRows = await admin(
      'PUT',
      'models/new-model',
      entry({
        providers: [
          { provider: 'nowhere', model: 'echo' },
          { provider: 'elsewhere', model: 'echo' },
        ],
      }),
    );
    expect(twoRows.json().errors).toEqual([
      'invalid model entry: at providers[0].provider: unknown provider "nowhere"',
      'at providers[1].provider: unknown provider "elsewhere"',
    ]);
    const unknownPrice = await admin('PUT', 'prices/sandbox-echo', { perToken: 1 });
    expect(unknownPrice.json().errors).toEqual(['invalid prices: at perToken: unknown field']);
    const missing = await admin('PUT', 'prices/no-such-model', { inputPerMTok: 1 });
    expect(missing.statusCode).toBe(404);

    expect((await admin('GET', 'models')).json()).toEqual(before);
    expect(await versionCount()).toBe(versions);
    expect(await auditCount()).toBe(audited);
    const { key } = await gateway.createFundedKey();
    expectEnvelope(await chat(key, 'new-model'), {
      status: 400,
      code: 'GW_MODEL_NOT_AVAILABLE',
      path: '/api/alpha/v1/chat/completions',
    });
  });

  it('serves a runtime entry, charges runtime prices under a new version, and audits each change', async () => {
    const { key, accountId } = await gateway.createFundedKey();
    const put = await admin('PUT', 'models/vendor/runtime-echo', {
      id: 'vendor/runtime-echo',
      pricing: { inputPerMTok: 1, outputPerMTok: 1 },
      providers: [{ provider: 'sandbox', model: 'echo' }],
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ id: 'vendor/runtime-echo', source: 'runtime', inFile: false, served: true });
    expect((await chat(key, 'vendor/runtime-echo')).statusCode).toBe(200);

    const priced = await admin('PUT', 'prices/vendor/runtime-echo', { inputPerMTok: 1000, outputPerMTok: 1000 });
    expect(priced.statusCode, priced.body).toBe(200);
    expect(priced.json().priceVersion).not.toBe(put.json().priceVersion);
    expect((await chat(key, 'vendor/runtime-echo')).statusCode).toBe(200);

    const [after, before] = await records(accountId);
    expect(before?.priceVersion).toBe(put.json().priceVersion);
    expect(after?.priceVersion).toBe(priced.json().priceVersion);
    expect(after!.usdCost).toBeGreaterThan(before!.usdCost * 500);

    const history = (await admin('GET', 'prices/vendor/runtime-echo')).json();
    expect(history.results.map((version: { id: string }) => version.id)).toEqual([
      priced.json().priceVersion,
      put.json().priceVersion,
    ]);
    expect(history.results[0]).toMatchObject({ source: 'runtime', actor: 'operator', current: true });
    expect(history.results[1]).toMatchObject({ current: false });

    const log = await gateway.request({
      method: 'GET',
      url: '/api/admin/v1/audit-log?action=catalog.price.set',
      headers: adminHeaders,
    });
    expect(log.json().results[0]).toMatchObject({
      actor: { kind: 'operator' },
      subject: { type: 'model', id: 'vendor/runtime-echo' },
      before: { source: 'runtime', priceVersion: put.json().priceVersion },
      after: {
        source: 'runtime',
        priceVersion: priced.json().priceVersion,
        entry: { pricing: { inputPerMTok: 1000 } },
      },
      request: { inputPerMTok: 1000, outputPerMTok: 1000 },
    });

    // Switched off, the model is refused; on again, it serves.
    expect((await admin('POST', 'disable/vendor/runtime-echo')).json()).toMatchObject({ active: false, served: false });
    const refused = expectEnvelope(await chat(key, 'vendor/runtime-echo'), {
      status: 400,
      code: 'GW_MODEL_NOT_AVAILABLE',
      path: '/api/alpha/v1/chat/completions',
    });
    expect(refused.errors).toEqual(['model "vendor/runtime-echo" is not available: the operator has switched it off']);
    expect((await admin('POST', 'enable/vendor/runtime-echo')).json()).toMatchObject({ active: true, served: true });
    expect((await chat(key, 'vendor/runtime-echo')).statusCode).toBe(200);

    // Deleted, a runtime-only model leaves the catalog; a second delete finds nothing.
    expect((await admin('DELETE', 'models/vendor/runtime-echo')).statusCode).toBe(204);
    expect((await admin('GET', 'models/vendor/runtime-echo')).statusCode).toBe(404);
    expect((await admin('DELETE', 'models/vendor/runtime-echo')).statusCode).toBe(404);
    const deleted = await gateway.request({
      method: 'GET',
      url: '/api/admin/v1/audit-log?action=catalog.model.delete',
      headers: adminHeaders,
    });
    expect(deleted.json().results[0]).toMatchObject({
      subject: { type: 'model', id: 'vendor/runtime-echo' },
      before: { source: 'runtime', active: true },
    });
    expect(deleted.json().results[0].after).toBeUndefined();
  });

  it("falls back to the file's entry and prices when a runtime entry over it is deleted", async () => {
    const fileVersion = (await admin('GET', 'models/file-only')).json().priceVersion;
    const put = await admin('PUT', 'models/file-only', {
      id: 'file-only',
      pricing: { inputPerMTok: 7 },
      providers: [{ provider: 'sandbox', model: 'echo' }],
    });
    expect(put.json()).toMatchObject({ source: 'runtime', inFile: true, entry: { pricing: { inputPerMTok: 7 } } });
    expect((await admin('DELETE', 'models/file-only')).statusCode).toBe(204);
    const back = (await admin('GET', 'models/file-only')).json();
    expect(back).toMatchObject({ source: 'file', entry: { pricing: { inputPerMTok: 1, outputPerMTok: 2 } } });
    // The file's prices again, as a version of their own after the runtime one.
    expect(back.priceVersion).not.toBe(fileVersion);
    expect(back.priceVersion).not.toBe(put.json().priceVersion);
    const history = (await admin('GET', 'prices/file-only')).json();
    expect(history.results.map((version: { source: string }) => version.source)).toEqual(['file', 'runtime', 'file']);
  });

  it('leaves out stored prices finer than a nano (written before they were refused), and says so', async () => {
    // As a release before the whole-nano check let the admin API store them: charged rounded on every unit.
    await gateway.gateway.core.storage.db
      .insert(runtimeModels)
      .values({ modelId: 'file-only', pricing: { inputPerMTok: 0.0000000015, outputPerMTok: 2 } });
    // Any change makes every process read the runtime rows again.
    expect((await admin('POST', 'disable/sandbox-image')).statusCode).toBe(200);
    expect((await admin('DELETE', 'models/sandbox-image')).statusCode).toBe(204);
    expect((await admin('GET', 'models/file-only')).json()).toMatchObject({
      entry: { pricing: { inputPerMTok: 1, outputPerMTok: 2 } },
    });
    expect(logLines.map((line) => line.msg)).toContain(
      'runtime prices of model "file-only" is ignored: at pricing.inputPerMTok: 1.5e-9 USD is not a whole number of nano-USD (0.000000001)',
    );
    expect((await admin('DELETE', 'models/file-only')).statusCode).toBe(204);
  });

  it('keeps runtime entries, prices and switches across a reload of gateway.yaml', async () => {
    expect(
      (
        await admin('PUT', 'models/kept-runtime', {
          id: 'kept-runtime',
          pricing: { inputPerMTok: 3 },
          providers: [{ provider: 'sandbox', model: 'echo' }],
        })
      ).statusCode,
    ).toBe(200);
    const priced = await admin('PUT', 'prices/sandbox-echo', { inputPerMTok: 5, outputPerMTok: 5 });
    expect(priced.statusCode).toBe(200);
    expect((await admin('POST', 'disable/file-only')).statusCode).toBe(200);

    // The file changes the echo model's own prices: the runtime prices still win over them.
    writeFileSync(configPath, configText({ input: 0.3, output: 0.4 }));
    const reload = await gateway.request({ method: 'POST', url: '/api/admin/v1/config/reload', headers: adminHeaders });
    expect(reload.statusCode, reload.body).toBe(200);
    await gateway.gateway.core.services.runtimeCatalog.refresh();

    const { key, accountId } = await gateway.createFundedKey();
    expect((await chat(key, 'kept-runtime')).statusCode).toBe(200);
    expect((await chat(key, 'sandbox-echo')).statusCode).toBe(200);
    expectEnvelope(await chat(key, 'file-only'), {
      status: 400,
      code: 'GW_MODEL_NOT_AVAILABLE',
      path: '/api/alpha/v1/chat/completions',
    });
    const echo = (await admin('GET', 'models/sandbox-echo')).json();
    expect(echo).toMatchObject({
      source: 'file',
      overrides: { pricing: true },
      entry: { pricing: { inputPerMTok: 5, outputPerMTok: 5 } },
      priceVersion: priced.json().priceVersion,
    });
    const [latest] = await records(accountId);
    expect(latest).toMatchObject({ model: 'sandbox-echo', priceVersion: priced.json().priceVersion });

    // Deleting the runtime prices brings the reloaded file's prices, as a new version.
    expect((await admin('DELETE', 'models/sandbox-echo')).statusCode).toBe(204);
    const fromFile = (await admin('GET', 'models/sandbox-echo')).json();
    expect(fromFile.entry.pricing).toEqual({ inputPerMTok: 0.3, outputPerMTok: 0.4 });
    expect(fromFile.priceVersion).not.toBe(priced.json().priceVersion);
    expect((await admin('DELETE', 'models/file-only')).statusCode).toBe(204);
  });

  it('names the new price version on the first request after a reload that changes a file price', async () => {
    const { key, accountId } = await gateway.createFundedKey();
    writeFileSync(configPath, configText({ input: 0.7, output: 0.9 }));
    try {
      // Answered, the reload serves the new prices: the request right after it is charged at them.
      const reload = await gateway.app.inject({
        method: 'POST',
        url: '/api/admin/v1/config/reload',
        headers: adminHeaders,
      });
      expect(reload.statusCode, reload.body).toBe(200);
      // Read in the same turn as the reload's answer, before a read of the catalog started after it could land.
      const served = gateway.gateway.core.services.catalog.resolve('sandbox-echo').priceVersion;
      expect(served).toBeDefined();
      expect((await chat(key, 'sandbox-echo')).statusCode).toBe(200);
      const echo = (await admin('GET', 'models/sandbox-echo')).json();
      expect(echo).toMatchObject({ source: 'file', entry: { pricing: { inputPerMTok: 0.7, outputPerMTok: 0.9 } } });
      const [record] = await records(accountId);
      expect(record).toMatchObject({ model: 'sandbox-echo', priceVersion: echo.priceVersion });
      expect(served).toBe(echo.priceVersion);
    } finally {
      writeFileSync(configPath, configText());
      await gateway.gateway.core.services.configReloader.reload('admin');
    }
  });

  it('charges a job submitted before a price change at its frozen price, and one after at the new one', async () => {
    const { key, accountId } = await gateway.createFundedKey();
    const submit = async (prompt: string) => {
      const answer = await gateway.request({
        method: 'POST',
        url: '/api/v1/image/generations/async',
        headers: keyHeaders(key),
        payload: { model: 'sandbox-image', content: [{ type: 'text', text: prompt }] },
      });
      expect(answer.statusCode, answer.body).toBeLessThan(300);
      return answer.json<{ generationId: string }>().generationId;
    };
    const frozenVersion = (await admin('GET', 'models/sandbox-image')).json().priceVersion;
    // Processing for two seconds: the price changes while it runs, before it is settled.
    const early = await submit('a lighthouse sandbox-slow-2');
    const priced = await admin('PUT', 'prices/sandbox-image', { perImage: 0.5 });
    expect(priced.statusCode, priced.body).toBe(200);
    const late = await submit('a lighthouse');
    expect((await waitForImageJob(gateway, { key, generationId: early })).status).toBe('succeeded');
    expect((await waitForImageJob(gateway, { key, generationId: late })).status).toBe('succeeded');

    const byId = new Map(
      (
        await gateway.request({
          method: 'GET',
          url: `/api/admin/v1/accounts/${accountId}/generations`,
          headers: adminHeaders,
        })
      )
        .json<{ results: Array<{ id: string; usdCost: number; priceVersion?: string }> }>()
        .results.map((record) => [record.id, record]),
    );
    expect(byId.get(early)).toMatchObject({ usdCost: 0.001, priceVersion: frozenVersion });
    expect(byId.get(late)).toMatchObject({ usdCost: 0.5, priceVersion: priced.json().priceVersion });
    const [row] = await gateway.gateway.core.storage.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.action, 'catalog.price.set'));
    expect(row).toBeDefined();
  });
});
