import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/domain/tokenizer.ts';
import { startLyingOpenAiFake, reportedRunawayTokens, type LyingFake } from '../fakes/lying-openai-fake.ts';
import { longestEventLoopBlockMs } from '../support/event-loop.ts';
import { heldNanosOf, keyHeaders, usageRecords, type UsageRecordBody } from '../support/http-helpers.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/** Prices high enough that one completion's reservation is about one dollar: 1,000 USD per million tokens. */
const lyingModel = (id: string, provider: string, upstream: string) =>
  [
    `  - id: ${id}`,
    '    limits: { maxOutputTokens: 1000 }',
    '    pricing: { inputPerMTok: 1000, outputPerMTok: 1000 }',
    `    providers: [{ provider: ${provider}, model: ${upstream} }]`,
  ].join('\n');

type Record = UsageRecordBody & { usage?: UsageRecordBody['usage'] & { unchargedUsdCost?: number } };

describe('money invariants against an upstream that lies, hangs or never stops', () => {
  let fake: LyingFake;
  let gateway: TestGateway;
  let address: string;

  beforeAll(async () => {
    fake = await startLyingOpenAiFake();
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        fakeProviderYaml('lying', 'openai', fake),
        // The same upstream with a short maximum generation time.
        `${fakeProviderYaml('impatient', 'openai', fake).slice(0, -2)}, timeoutMs: 1500, firstByteTimeoutMs: 1000 }`,
        'models:',
        lyingModel('runaway', 'lying', 'runaway'),
        lyingModel('cut', 'lying', 'cut'),
        lyingModel('endless', 'impatient', 'endless'),
        lyingModel('long-line', 'lying', 'long-line'),
        lyingModel('unlabeled-long-line', 'lying', 'unlabeled-long-line'),
        lyingModel('endless-event', 'lying', 'endless-event'),
        '  - id: embed-only',
        '    outputModalities: [embedding]',
        '    pricing: { inputPerMTok: 1 }',
        '    providers: [{ provider: lying, model: runaway }]',
        'upstream: { maxEventCharacters: 262144 }',
      ].join('\n'),
    });
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const post = (key: string, url: string, payload: object) =>
    gateway.request({ method: 'POST', url, headers: keyHeaders(key), payload });
  const balance = async (key: string) =>
    (await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: keyHeaders(key) })).json<{
      creditBalance: number;
    }>().creditBalance;
  const records = (key: string) => usageRecords(gateway, key) as Promise<Record[]>;
  const messages = [{ role: 'user', content: 'hello there' }];

  const calls: Array<[string, string, object]> = [
    ['alpha chat', '/api/alpha/v1/chat/completions', { model: 'runaway', messages }],
    ['alpha chat, streamed', '/api/alpha/v1/chat/completions', { model: 'runaway', messages, stream: true }],
    ['alpha responses', '/api/alpha/v1/responses', { model: 'runaway', input: 'hello there' }],
    ['alpha responses, streamed', '/api/alpha/v1/responses', { model: 'runaway', input: 'hello there', stream: true }],
    ['native (translated)', '/api/v1/text/completions', { model: 'runaway', messages }],
  ];

  it('sends the catalog output limit the reservation covers when the client sets none, on every path', async () => {
    const { key } = await gateway.createFundedKey({ credits: 100 });
    for (const [name, url, payload] of calls) {
      const before = fake.requests.length;
      const response = await post(key, url, payload);
      expect(response.statusCode, name).toBe(200);
      const sent = fake.requests[before]!.body as { max_tokens?: number; max_output_tokens?: number };
      expect(sent.max_tokens ?? sent.max_output_tokens, name).toBe(1000);
    }
  });

  it('never spends past a balance or a cap, whatever usage the upstream reports, and keeps the excess in the record', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 10, limits: { daily: 9 } });
    const statuses: number[] = [];
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(calls.map(([, url, payload]) => post(key, url, payload)));
      statuses.push(...answers.map((answer) => answer.statusCode));
    }
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(0);
    expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
    expect(statuses).toContain(429);
    const cap = (
      await gateway.request({ method: 'GET', url: '/api/compat/v1/api-key', headers: keyHeaders(key) })
    ).json<{ daily: { spent: number; remaining: number } }>().daily;
    expect(cap.spent).toBeLessThanOrEqual(9);
    expect(await balance(key)).toBeGreaterThanOrEqual(1);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    const billed = await records(key);
    expect(billed.length).toBe(statuses.filter((status) => status === 200).length);
    for (const record of billed) {
      // Charged: at most the reservation of about one dollar.
      expect(record.usdCost).toBeLessThan(1.1);
      const request = record.request as { surface: string; stream?: boolean };
      if (request.stream === true || request.surface === 'native') {
        // A stream is cut at the output limit it ignores: the upstream's report at its end is never read, and
        // what was delivered (the limit, and the event of a thousand words that reached it) is what is recorded.
        expect(record.usage?.completionTokens).toBeLessThanOrEqual(2_000);
        continue;
      }
      // Reported: five million output tokens, 5,000 USD.
      expect(record.usage?.completionTokens).toBe(reportedRunawayTokens);
      expect(record.usage?.unchargedUsdCost).toBeGreaterThan(4_000);
    }
  });

  it('refuses a reservation that does not fit with a 403 naming the largest output limit the balance covers, which then fits', async () => {
    const { key } = await gateway.createFundedKey({ credits: 0.5 });
    const refused = await post(key, '/api/alpha/v1/chat/completions', { model: 'runaway', messages, max_tokens: 1000 });
    expect(refused.statusCode).toBe(403);
    const message = refused.json<{ errors: string[] }>().errors[0]!;
    const largest = Number(
      /0\.5 USD is available, which covers an output limit of at most (\d+) tokens/.exec(message)?.[1],
    );
    expect(largest).toBeGreaterThan(400);
    expect(largest).toBeLessThan(500);
    const fitting = await post(key, '/api/alpha/v1/chat/completions', {
      model: 'runaway',
      messages,
      max_tokens: largest,
    });
    expect(fitting.statusCode).toBe(200);
    expect(await balance(key)).toBeGreaterThanOrEqual(0);
    const tooMany = await post(key, '/api/alpha/v1/chat/completions', {
      model: 'runaway',
      messages,
      max_tokens: largest + 1,
    });
    expect(tooMany.statusCode).toBe(403);
  });

  it('charges a stream cut mid-way what it delivered, as failed', async () => {
    const { key } = await gateway.createFundedKey({ credits: 10 });
    const native = await post(key, '/api/v1/text/completions', { model: 'cut', messages });
    expect(native.body).toContain('one two three'.split(' ')[2]);
    const [translated] = await records(key);
    const prompt = countTextTokens('hello there');
    expect(translated).toMatchObject({
      status: 'failed',
      usage: { promptTokens: prompt, completionTokens: countTextTokens('one two three'), countedByGateway: true },
    });
    expect(translated!.usdCost).toBeCloseTo(((prompt + countTextTokens('one two three')) * 1000) / 1e6, 9);

    const relayed = await post(key, '/api/alpha/v1/chat/completions', { model: 'cut', messages, stream: true });
    expect(relayed.body).not.toContain('[DONE]');
    const [passedThrough] = await records(key);
    expect(passedThrough).toMatchObject({
      status: 'failed',
      usage: { promptTokens: prompt, completionTokens: countTextTokens('one two three'), countedByGateway: true },
    });
    expect(passedThrough!.usdCost).toBeCloseTo(translated!.usdCost, 9);
  });

  it('cuts a generation that never ends at the maximum generation time, after the client left too, and settles what was delivered', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 10 });
    const controller = new AbortController();
    const response = await request(`${address}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model: 'endless', messages, stream: true }),
      signal: controller.signal,
    });
    expect(response.statusCode).toBe(200);
    for await (const _chunk of response.body) break;
    controller.abort();
    let settled: Record | undefined;
    for (let attempt = 0; attempt < 100 && !settled; attempt++) {
      [settled] = await records(key);
      if (!settled) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(settled).toMatchObject({ status: 'failed' });
    expect(settled!.usdCost).toBeGreaterThan(0);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    for (let attempt = 0; attempt < 50 && fake.openConnections() > 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.openConnections()).toBe(0);
  });

  it('refuses an event-stream line longer than the limit instead of buffering it, and hangs up on the upstream', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 10 });
    const native = await post(key, '/api/v1/text/completions', { model: 'long-line', messages });
    expect(native.statusCode).toBe(502);
    expect(native.json<{ errors: string[] }>().errors.join(' ')).toMatch(/larger than 262144 characters/);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(await balance(key)).toBe(10);
    for (let attempt = 0; attempt < 50 && fake.openConnections() > 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.openConnections()).toBe(0);
  });

  it('guards a stream whose answer claims no content type the same way, and refuses an event that never ends', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 10 });
    for (const [model, message] of [
      ['unlabeled-long-line', /larger than 262144 characters/],
      ['endless-event', /a stream event larger than|sent no event in its first megabyte/],
    ] as const) {
      for (const [url, payload] of [
        ['/api/v1/text/completions', { model, messages }],
        ['/api/alpha/v1/chat/completions', { model, messages, stream: true }],
      ] as const) {
        const response = await post(key, url, payload);
        expect(response.statusCode, `${model} ${url}`).toBe(502);
        expect(response.json<{ errors: string[] }>().errors.join(' '), `${model} ${url}`).toMatch(message);
      }
    }
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(await balance(key)).toBe(10);
    for (let attempt = 0; attempt < 50 && fake.openConnections() > 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.openConnections()).toBe(0);
  });

  it('answers chat with an embedding-only model with 400 on every text surface, billing nothing', async () => {
    const { key } = await gateway.createFundedKey({ credits: 10 });
    const before = fake.requests.length;
    for (const [url, payload] of [
      ['/api/v1/text/completions', { model: 'embed-only', messages }],
      ['/api/alpha/v1/chat/completions', { model: 'embed-only', messages }],
      ['/api/alpha/v1/responses', { model: 'embed-only', input: 'hi' }],
      ['/api/beta/v1/messages', { model: 'embed-only', max_tokens: 10, messages }],
      ['/api/gamma/v1beta/models/embed-only:generateContent', { contents: 'hi' }],
    ] as const) {
      const response = await post(key, url, payload);
      expect(response.statusCode, url).toBe(400);
      expect(response.json<{ errors: string[] }>().errors[0], url).toMatch(/model "embed-only" does not generate text/);
    }
    expect(fake.requests.length).toBe(before);
    expect(await records(key)).toEqual([]);
    expect(await balance(key)).toBe(10);
  });

  it('refuses output limits past the range money arithmetic is exact in, holding nothing', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 10 });
    for (const [url, payload] of [
      ['/api/alpha/v1/chat/completions', { model: 'runaway', messages, max_tokens: 2 ** 53 + 2 }],
      ['/api/alpha/v1/responses', { model: 'runaway', input: 'hi', max_output_tokens: 1e20 }],
    ] as const) {
      const response = await post(key, url, payload);
      expect(response.statusCode, url).toBe(400);
      expect(response.json<{ errors: string[] }>().errors[0], url).toBe(
        `the output token limit must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}`,
      );
    }
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(await records(key)).toEqual([]);
  });

  it('refuses an unknown field nested 5,000 deep on a pass-through with a 400, sending nothing and recording nothing', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 10 });
    const before = fake.requests.length;
    const payload = `{"model":"runaway","messages":[{"role":"user","content":"hi"}],"vendor_extension":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    const response = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { ...keyHeaders(key), 'content-type': 'application/json' },
      payload,
    });
    expect(response.statusCode).toBe(400);
    expect(fake.requests.length).toBe(before);
    expect(await records(key)).toEqual([]);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(await balance(key)).toBe(10);
  });

  it('refuses a zero-balance key sending a 10 MB prompt without spaces without blocking another client', async () => {
    const broke = await gateway.createFundedKey({ credits: 0 });
    const paying = await gateway.createFundedKey({ credits: 10 });
    const {
      result: [refused, served],
      blockedMs,
    } = await longestEventLoopBlockMs(() =>
      Promise.all([
        post(broke.key, '/api/alpha/v1/chat/completions', {
          model: 'runaway',
          messages: [{ role: 'user', content: 'a'.repeat(10_000_000) }],
        }),
        post(paying.key, '/api/alpha/v1/chat/completions', { model: 'runaway', messages }),
      ]),
    );
    expect(refused!.statusCode).toBe(403);
    expect(served!.statusCode).toBe(200);
    // Generous: parsing 10 MB of JSON takes tens of milliseconds; tokenizing it quadratically took minutes.
    expect(blockedMs).toBeLessThan(1_000);
  });
});
