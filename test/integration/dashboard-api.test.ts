/**
 * The account routes the dashboard reads: usage paged and filtered, one record, spend per day, archived media,
 * the priced catalog and the key list's spend per window. Over HTTP, as any account sees them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { generations, mediaAssets } from '../../src/storage/schema.ts';
import type { GenerationRecordView, MediaItemView } from '../../src/surfaces/account/account-schemas.ts';
import { bearer, expectEnvelope, keyHeaders, signup, type SessionBody } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

type RecordBody = GenerationRecordView;
type MediaBody = MediaItemView;

interface PageBody<T> {
  results: T[];
  total: number;
  offset: number;
  limit: number;
}

const pathOf = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

describe('dashboard account routes', () => {
  let gateway: TestGateway;
  let owner: SessionBody;
  let other: SessionBody;
  let firstKey: { id: string; key: string };
  let secondKey: { id: string; key: string };

  const get = (url: string, headers: Record<string, string>) => gateway.request({ method: 'GET', url, headers });
  const complete = async (key: string, model = 'sandbox-echo', text = 'hello dashboard') => {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/text/completions',
      headers: keyHeaders(key),
      payload: { model, messages: [{ role: 'user', content: text }] },
    });
    expect(response.statusCode, response.body).toBe(200);
  };
  const createKey = async (token: string, name: string, limits?: Record<string, number>) => {
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(token),
      payload: { name, ...(limits ? { limits } : {}) },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string; key: string }>();
  };

  beforeAll(async () => {
    gateway = await startTestGateway();
    owner = await signup(gateway);
    other = await signup(gateway);
    await gateway.gateway.core.services.accounts.addCredits(owner.account.id, 5, null);
    firstKey = await createKey(owner.token, 'first', { daily: 2 });
    secondKey = await createKey(owner.token, 'second');
    await complete(firstKey.key);
    await complete(firstKey.key);
    await complete(secondKey.key);
    const embedding = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/embeddings',
      headers: bearer(secondKey.key),
      payload: { model: 'sandbox-embedding', input: 'vectors please', encoding_format: 'float' },
    });
    expect(embedding.statusCode, embedding.body).toBe(200);
    await gateway.settled();
  });
  afterAll(async () => gateway?.close());

  describe('GET /api/v1/usage', () => {
    it('pages the records newest first, like the compat listing, and counts them all', async () => {
      const response = await get('/api/v1/usage?limit=2', bearer(owner.token));
      expect(response.statusCode, response.body).toBe(200);
      const page = response.json<PageBody<RecordBody>>();
      expect(page.total).toBe(4);
      expect(page.offset).toBe(0);
      expect(page.limit).toBe(2);
      expect(page.results).toHaveLength(2);
      const compat = (await get('/api/compat/v1/usage?limit=4', keyHeaders(firstKey.key))).json<PageBody<RecordBody>>();
      expect(page.results).toEqual(compat.results.slice(0, 2));
      const rest = (await get('/api/v1/usage?offset=2&limit=2', bearer(owner.token))).json<PageBody<RecordBody>>();
      expect(rest.results).toEqual(compat.results.slice(2, 4));
      expect(new Date(compat.results[0]!.createdAt).getTime()).toBeGreaterThanOrEqual(
        new Date(compat.results[3]!.createdAt).getTime(),
      );
    });

    it('filters by key, model and modality, each alone and together', async () => {
      const byKey = (await get(`/api/v1/usage?apiKeyId=${firstKey.id}`, bearer(owner.token))).json<
        PageBody<RecordBody>
      >();
      expect(byKey.total).toBe(2);
      expect(byKey.results.every((record) => record.apiKeyId === firstKey.id)).toBe(true);
      const byModel = (await get('/api/v1/usage?model=sandbox-embedding', bearer(owner.token))).json<
        PageBody<RecordBody>
      >();
      expect(byModel.total).toBe(1);
      expect(byModel.results[0]).toMatchObject({
        model: 'sandbox-embedding',
        modality: 'text',
        apiKeyId: secondKey.id,
      });
      const byModality = (await get('/api/v1/usage?modality=text', bearer(owner.token))).json<PageBody<RecordBody>>();
      expect(byModality.total).toBe(4);
      expect((await get('/api/v1/usage?modality=image', bearer(owner.token))).json<PageBody<RecordBody>>().total).toBe(
        0,
      );
      const together = (
        await get(`/api/v1/usage?apiKeyId=${secondKey.id}&model=sandbox-echo&modality=text`, bearer(owner.token))
      ).json<PageBody<RecordBody>>();
      expect(together.total).toBe(1);
      expect(together.results[0]).toMatchObject({ apiKeyId: secondKey.id, model: 'sandbox-echo' });
    });

    it("is readable by the account's key and shows nothing of another account, whatever the filter names", async () => {
      expect((await get('/api/v1/usage', keyHeaders(secondKey.key))).json<PageBody<RecordBody>>().total).toBe(4);
      const foreign = (await get(`/api/v1/usage?apiKeyId=${firstKey.id}`, bearer(other.token))).json<
        PageBody<RecordBody>
      >();
      expect(foreign).toEqual({ results: [], total: 0, offset: 0, limit: 20 });
    });

    it.each([
      ['limit=0', 'querystring.limit'],
      ['limit=101', 'querystring.limit'],
      ['offset=-1', 'querystring.offset'],
      ['limit=abc', 'querystring.limit'],
      ['modality=embedding', 'querystring.modality must be one of: text, image, video, audio'],
      ['apiKeyId=key%20with%20spaces', 'querystring.apiKeyId'],
      ['model=', 'querystring.model'],
      ['model=%00', 'querystring.model'],
    ])('answers 400 to %s', async (search, message) => {
      const body = expectEnvelope(await get(`/api/v1/usage?${search}`, bearer(owner.token)), {
        status: 400,
        code: 'GW_VALIDATION',
        path: '/api/v1/usage',
      });
      expect(body.errors.join(' ')).toContain(message);
    });

    it('needs a credential', async () => {
      expectEnvelope(await gateway.request({ method: 'GET', url: '/api/v1/usage' }), {
        status: 401,
        code: 'GW_UNAUTHENTICATED',
        path: '/api/v1/usage',
      });
    });
  });

  describe('GET /api/v1/usage/:generationId', () => {
    it("answers one of the account's records, as the listing shows it", async () => {
      const [newest] = (await get('/api/v1/usage?limit=1', bearer(owner.token))).json<PageBody<RecordBody>>().results;
      const response = await get(`/api/v1/usage/${newest!.id}`, keyHeaders(firstKey.key));
      expect(response.statusCode, response.body).toBe(200);
      const record = response.json<RecordBody>();
      expect(record).toEqual(newest);
      expect(Object.keys(record)).toEqual(
        expect.arrayContaining([
          'id',
          'userId',
          'modality',
          'model',
          'status',
          'request',
          'usage',
          'usdCost',
          'durationMs',
          'createdAt',
        ]),
      );
      expect(record.userId).toBe(owner.account.id);
      // The account's view: never how the generation reached its provider.
      const allowed = [
        'id',
        'userId',
        'apiKeyId',
        'modality',
        'model',
        'status',
        'request',
        'usage',
        'usdCost',
        'durationMs',
        // The version of the prices it was charged at: prices are the account's to know, providers are not.
        'priceVersion',
        'createdAt',
      ];
      expect(record.priceVersion).toMatch(/^price_/);
      expect(Object.keys(record).filter((key) => !allowed.includes(key))).toEqual([]);
      expect(response.body).not.toMatch(/"sandbox"|providerId|upstream/);
    });

    it("answers 404 for another account's record, for an unknown id and for one that cannot exist", async () => {
      const [newest] = (await get('/api/v1/usage?limit=1', bearer(owner.token))).json<PageBody<RecordBody>>().results;
      const foreign = expectEnvelope(await get(`/api/v1/usage/${newest!.id}`, bearer(other.token)), {
        status: 404,
        code: 'GW_NOT_FOUND',
        path: `/api/v1/usage/${newest!.id}`,
      });
      expect(foreign.errors[0]).toContain(newest!.id);
      expectEnvelope(await get('/api/v1/usage/gen_unknown', bearer(owner.token)), {
        status: 404,
        code: 'GW_NOT_FOUND',
        path: '/api/v1/usage/gen_unknown',
      });
      // An id no generation can have names nothing: 404, without a lookup.
      expectEnvelope(await get('/api/v1/usage/gen%2Ffoo', bearer(owner.token)), {
        status: 404,
        code: 'GW_NOT_FOUND',
        path: '/api/v1/usage/gen%2Ffoo',
      });
    });
  });

  describe('GET /api/v1/usage/daily', () => {
    it('sums charges per UTC day and model exactly, over the asked number of days', async () => {
      const account = await signup(gateway);
      const db = gateway.gateway.core.storage.db;
      const now = new Date();
      const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
      const at = (daysAgo: number, minutes: number) => new Date(dayStart - daysAgo * 86_400_000 + minutes * 60_000);
      const row = (id: string, { model, nanos, createdAt }: { model: string; nanos: bigint; createdAt: Date }) => ({
        id,
        accountId: account.account.id,
        modality: 'text',
        model,
        status: 'succeeded',
        usdCostNanos: nanos,
        createdAt,
      });
      await db.insert(generations).values([
        row(`gen_daily_a_${account.account.id}`, { model: 'model-a', nanos: 100_000_001n, createdAt: at(0, 1) }),
        row(`gen_daily_b_${account.account.id}`, { model: 'model-a', nanos: 200_000_002n, createdAt: at(0, 2) }),
        row(`gen_daily_c_${account.account.id}`, { model: 'model-b', nanos: 7n, createdAt: at(0, 3) }),
        // The last minute of yesterday, UTC, and the first of the day the 30-day window starts on.
        row(`gen_daily_d_${account.account.id}`, { model: 'model-a', nanos: 1n, createdAt: at(0, -1) }),
        row(`gen_daily_e_${account.account.id}`, { model: 'model-a', nanos: 3n, createdAt: at(29, 0) }),
        row(`gen_daily_f_${account.account.id}`, { model: 'model-a', nanos: 5n, createdAt: at(30, 0) }),
      ]);
      const isoDay = (daysAgo: number) => new Date(dayStart - daysAgo * 86_400_000).toISOString().slice(0, 10);

      const response = await get('/api/v1/usage/daily', bearer(account.token));
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({
        from: isoDay(29),
        to: isoDay(0),
        spend: [
          { date: isoDay(29), model: 'model-a', usdCost: 3e-9, generations: 1 },
          { date: isoDay(1), model: 'model-a', usdCost: 1e-9, generations: 1 },
          { date: isoDay(0), model: 'model-a', usdCost: 0.300000003, generations: 2 },
          { date: isoDay(0), model: 'model-b', usdCost: 7e-9, generations: 1 },
        ],
      });
      const week = (await get('/api/v1/usage/daily?days=1', bearer(account.token))).json<{
        from: string;
        spend: unknown[];
      }>();
      expect(week.from).toBe(isoDay(0));
      expect(week.spend).toHaveLength(2);
      expect(
        (await get('/api/v1/usage/daily?days=31', bearer(account.token))).json<{ spend: unknown[] }>().spend,
      ).toHaveLength(5);
      expect((await get('/api/v1/usage/daily', bearer(other.token))).json<{ spend: unknown[] }>().spend).toEqual([]);
    });

    it('matches the records of real calls', async () => {
      const daily = (await get('/api/v1/usage/daily?days=2', bearer(owner.token))).json<{
        spend: Array<{ model: string; usdCost: number; generations: number }>;
      }>();
      const records = (await get('/api/v1/usage?limit=100', bearer(owner.token))).json<PageBody<RecordBody>>().results;
      const nanos = (usd: number) => Math.round(usd * 1e9);
      for (const model of ['sandbox-echo', 'sandbox-embedding']) {
        const ofModel = records.filter((record) => record.model === model);
        const summed = daily.spend.filter((row) => row.model === model);
        expect(summed.reduce((sum, row) => sum + row.generations, 0)).toBe(ofModel.length);
        expect(summed.reduce((sum, row) => sum + nanos(row.usdCost), 0)).toBe(
          ofModel.reduce((sum, record) => sum + nanos(record.usdCost), 0),
        );
      }
    });

    it.each(['days=0', 'days=367', 'days=1.5', 'days=x'])('answers 400 to %s', async (search) => {
      const body = expectEnvelope(await get(`/api/v1/usage/daily?${search}`, bearer(owner.token)), {
        status: 400,
        code: 'GW_VALIDATION',
        path: '/api/v1/usage/daily',
      });
      expect(body.errors.join(' ')).toContain('querystring.days');
    });
  });

  describe('GET /api/v1/media', () => {
    let generationId: string;

    beforeAll(async () => {
      const response = await gateway.request({
        method: 'POST',
        url: '/api/v1/image/generations',
        headers: keyHeaders(secondKey.key),
        payload: {
          model: 'sandbox-image',
          content: [{ type: 'text', text: 'a lighthouse at dusk' }],
          numberOfImages: 2,
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      generationId = response.json<{ generationId: string }>().generationId;
    });

    it("lists the account's succeeded media with each output's type and a working signed link", async () => {
      const response = await get('/api/v1/media', bearer(owner.token));
      expect(response.statusCode, response.body).toBe(200);
      const page = response.json<PageBody<MediaBody>>();
      expect(page).toMatchObject({ total: 1, offset: 0, limit: 20 });
      const [item] = page.results;
      expect(item).toMatchObject({
        generationId,
        kind: 'image',
        model: 'sandbox-image',
        prompt: 'a lighthouse at dusk',
      });
      expect(Object.keys(item!).sort()).toEqual(['createdAt', 'generationId', 'kind', 'model', 'outputs', 'prompt']);
      expect(item!.outputs).toHaveLength(2);
      const job = (await get(`/api/v1/image/generations/async/${generationId}`, keyHeaders(secondKey.key))).json<{
        result: { images: Array<{ assetId: string }> };
      }>();
      expect(item!.outputs.map((output) => output.assetId)).toEqual(job.result.images.map((image) => image.assetId));
      for (const output of item!.outputs) {
        expect(output.mediaType).toBe('image/png');
        expect(output.downloadUrl).toMatch(
          /^http:\/\/127\.0\.0\.1:8080\/api\/v1\/media\/files\/.+\?expires=\d+&signature=/,
        );
        const download = await gateway.request({ method: 'GET', url: pathOf(output.downloadUrl) });
        expect(download.statusCode).toBe(200);
        expect(download.rawPayload.subarray(1, 4).toString()).toBe('PNG');
        expect(download.rawPayload.length).toBe(output.bytes);
      }
    });

    it('filters by kind and pages', async () => {
      expect(
        (await get('/api/v1/media?kind=image&limit=1', bearer(owner.token))).json<PageBody<MediaBody>>(),
      ).toMatchObject({ total: 1, limit: 1 });
      expect((await get('/api/v1/media?kind=video', bearer(owner.token))).json<PageBody<MediaBody>>()).toEqual({
        results: [],
        total: 0,
        offset: 0,
        limit: 20,
      });
      expect((await get('/api/v1/media?offset=1', bearer(owner.token))).json<PageBody<MediaBody>>()).toEqual({
        results: [],
        total: 1,
        offset: 1,
        limit: 20,
      });
    });

    it('shows nothing of another account, and never the provider', async () => {
      expect((await get('/api/v1/media', bearer(other.token))).json<PageBody<MediaBody>>()).toEqual({
        results: [],
        total: 0,
        offset: 0,
        limit: 20,
      });
      const body = (await get('/api/v1/media', bearer(owner.token))).body;
      expect(body).not.toMatch(/providerId|upstream|sandbox"/);
    });

    it.each([
      ['kind=text', 'querystring.kind must be one of: image, video, audio'],
      ['limit=0', 'querystring.limit'],
      ['offset=x', 'querystring.offset'],
    ])('answers 400 to %s', async (search, message) => {
      const body = expectEnvelope(await get(`/api/v1/media?${search}`, bearer(owner.token)), {
        status: 400,
        code: 'GW_VALIDATION',
        path: '/api/v1/media',
      });
      expect(body.errors.join(' ')).toContain(message);
    });

    it('leaves out an output from the moment its retention ends, before any sweep, and a job with none left', async () => {
      const { db } = gateway.gateway.core.storage;
      const listed = async () => (await get('/api/v1/media', bearer(owner.token))).json<PageBody<MediaBody>>();
      const retention = await db
        .select({ id: mediaAssets.id, expiresAt: mediaAssets.expiresAt })
        .from(mediaAssets)
        .where(eq(mediaAssets.jobId, generationId));
      const [first] = (await listed()).results[0]!.outputs;
      try {
        await db
          .update(mediaAssets)
          .set({ expiresAt: new Date(Date.now() - 1000) })
          .where(eq(mediaAssets.id, first!.assetId));
        const page = await listed();
        expect(page.total).toBe(1);
        expect(page.results[0]!.outputs.map((output) => output.assetId)).not.toContain(first!.assetId);
        expect(page.results[0]!.outputs).toHaveLength(1);
        await db
          .update(mediaAssets)
          .set({ expiresAt: new Date(Date.now() - 1000) })
          .where(eq(mediaAssets.jobId, generationId));
        expect(await listed()).toEqual({ results: [], total: 0, offset: 0, limit: 20 });
      } finally {
        // The other tests of the block list these outputs, whichever order they run in.
        for (const { id, expiresAt } of retention)
          await db.update(mediaAssets).set({ expiresAt }).where(eq(mediaAssets.id, id));
      }
    });
  });

  describe('GET /api/v1/account/models', () => {
    it('lists the active catalog with USD prices and capabilities, and without provider names', async () => {
      const response = await get('/api/v1/account/models', keyHeaders(firstKey.key));
      expect(response.statusCode, response.body).toBe(200);
      const models =
        response.json<
          Array<{
            modelId: string;
            name: string;
            pricing?: Record<string, unknown>;
            capabilities?: unknown;
            inputModalities: string[];
            outputModalities: string[];
          }>
        >();
      const listed = (await get('/api/v1/ai/models', keyHeaders(firstKey.key))).json<Array<{ modelId: string }>>();
      expect(models.map((model) => model.modelId).sort()).toEqual(listed.map((model) => model.modelId).sort());
      expect(models.find((model) => model.modelId === 'sandbox-echo')).toMatchObject({
        outputModalities: ['text'],
        pricing: { inputPerMTok: expect.any(Number) as unknown, outputPerMTok: expect.any(Number) as unknown },
      });
      expect(models.find((model) => model.modelId === 'sandbox-image')?.pricing).toEqual({ perImage: 0.001 });
      expect(response.body).not.toMatch(/providerIds|capabilitiesProviderId|"provider"/);
    });
  });

  describe('GET /api/v1/api-keys', () => {
    it("carries each key's spend in every window, against its caps where it has them", async () => {
      const response = await get('/api/v1/api-keys', bearer(owner.token));
      expect(response.statusCode, response.body).toBe(200);
      const keys =
        response.json<
          Array<{ id: string; spend: Record<string, { spent: number; limit?: number; remaining?: number }> }>
        >();
      const records = (await get(`/api/v1/usage?apiKeyId=${firstKey.id}`, bearer(owner.token))).json<
        PageBody<RecordBody>
      >().results;
      const spentNanos = records.reduce((sum, record) => sum + Math.round(record.usdCost * 1e9), 0);
      expect(spentNanos).toBeGreaterThan(0);
      const first = keys.find((key) => key.id === firstKey.id)!;
      expect(Object.keys(first.spend)).toEqual(['daily', 'weekly', 'monthly', 'total']);
      expect(Math.round(first.spend.daily!.spent * 1e9)).toBe(spentNanos);
      expect(Math.round(first.spend.daily!.remaining! * 1e9)).toBe(2e9 - spentNanos);
      expect(first.spend.daily!.limit).toBe(2);
      expect(first.spend.total).toEqual({ spent: first.spend.daily!.spent });
      const lookup = (await get('/api/compat/v1/api-key', keyHeaders(firstKey.key))).json<{ daily: unknown }>();
      expect(lookup.daily).toEqual(first.spend.daily);
      const second = keys.find((key) => key.id === secondKey.id)!;
      expect(
        Object.values(second.spend).every((window) => Object.keys(window).join() === 'spent' && window.spent > 0),
      ).toBe(true);
    });
  });
});
