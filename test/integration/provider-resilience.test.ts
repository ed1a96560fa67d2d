import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sleep, startFakeServer, type FakeServer } from '../fakes/fake-server.ts';
import { fakeOpenAiKey, startOpenAiFake } from '../fakes/openai-fake.ts';
import { relayTo, startSwitchableUpstream, type SwitchableUpstream } from '../fakes/switchable-upstream.ts';
import { adminHeaders, expectEnvelope, heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

interface AuditedRecord {
  id: string;
  status: string;
  route?: {
    providerId: string;
    upstreamModel: string;
    fallbacks: Array<{ providerId: string; outcome: string; reason: string; status?: number }>;
    requestId?: string;
    firstByteMs?: number;
  };
  durationMs?: number;
}

const cooldownMs = 600;

/** The faithful fake behind a healthy answer that takes `delay.ms` to start, so a test can keep a probe in flight. */
function startDelayedRelay(target: FakeServer, delay: { ms: number }): Promise<FakeServer> {
  return startFakeServer(async (incoming, response) => {
    await sleep(delay.ms);
    await relayTo(target, incoming, response);
  });
}

describe('provider resilience: breakers, fallbacks, retry-after, and the route of each record', () => {
  let openai: FakeServer;
  let primary: SwitchableUpstream;
  let delayed: FakeServer;
  const primaryDelay = { ms: 0 };
  let lonely: SwitchableUpstream;
  let gateway: TestGateway;
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    openai = await startOpenAiFake();
    delayed = await startDelayedRelay(openai, primaryDelay);
    primary = await startSwitchableUpstream(delayed);
    lonely = await startSwitchableUpstream(openai);
    const provider = (name: string, server: FakeServer) =>
      `  ${name}: { protocol: openai, baseUrl: "${server.url}/v1", apiKey: ${fakeOpenAiKey} }`;
    gateway = await startTestGateway({
      upstreams: [primary, delayed, lonely, openai],
      logLines,
      configText: [
        'providers:',
        provider('primary', primary),
        provider('lonely', lonely),
        provider('backup', openai),
        'models:',
        '  - id: resilient',
        '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
        '    providers:',
        '      - { provider: primary, model: gpt-4o-mini, priority: 1 }',
        '      - { provider: backup, model: gpt-4o-mini, priority: 2 }',
        '  - { id: alone, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, providers: [{ provider: lonely, model: gpt-4o-mini }] }',
        '  - { id: limited, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, providers: [{ provider: backup, model: fake-error-429 }] }',
        `upstream: { breakerFailures: 3, breakerCooldownMs: ${cooldownMs}, retryBudgetMs: 1500, maxRetries: 1 }`,
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const chat = (key: string, model: string, requestId?: string) =>
    gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { ...keyHeaders(key), ...(requestId ? { 'x-request-id': requestId } : {}) },
      payload: { model, messages: [{ role: 'user', content: 'are you there' }] },
    });
  const primaryCalls = () => primary.requests.filter((request) => request.method === 'POST').length;
  const audited = async (accountId: string) =>
    (
      await gateway.request({
        method: 'GET',
        url: `/api/admin/v1/accounts/${accountId}/generations?limit=100`,
        headers: adminHeaders,
      })
    ).json<{ results: AuditedRecord[] }>().results;

  it('opens the breaker of a row failing for three accounts, then serves from the fallback without waiting on it; after the cooldown one probe brings the row back', async () => {
    const accounts = await Promise.all([0, 1, 2].map(() => gateway.createFundedKey({ credits: 5 })));
    const { key } = accounts[0]!;
    primary.down = true;
    primary.failureDelayMs = 300;
    // Three failures in a row from three accounts (at once, within the window) open the breaker: each of
    // these waited on the primary, then fell back.
    await Promise.all(
      accounts.map(async (account) => {
        const started = Date.now();
        const answer = await chat(account.key, 'resilient');
        expect(answer.statusCode, answer.body).toBe(200);
        expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      }),
    );
    expect(primaryCalls()).toBe(3);
    // Open: straight to the fallback, the primary not called at all (so none waits its 300 ms failure; the
    // count says so without timing a loaded machine).
    for (let i = 0; i < 5; i++) expect((await chat(key, 'resilient')).statusCode).toBe(200);
    expect(primaryCalls()).toBe(3);

    // After the cooldown the primary is healthy again: one request probes it while the others go on to the fallback.
    await new Promise((resolve) => setTimeout(resolve, cooldownMs + 50));
    primary.down = false;
    primary.failureDelayMs = 0;
    // The probe's answer is slow enough that the others reach the row while it is in flight, however loaded the machine.
    primaryDelay.ms = 1_000;
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => chat(key, 'resilient')));
    primaryDelay.ms = 0;
    for (const answer of concurrent) expect(answer.statusCode).toBe(200);
    expect(primaryCalls()).toBe(4);
    // Closed again: the primary serves.
    for (let i = 0; i < 3; i++) expect((await chat(key, 'resilient')).statusCode).toBe(200);
    expect(primaryCalls()).toBe(7);

    const records = (await Promise.all(accounts.map((account) => audited(account.accountId)))).flat();
    const skipped = records.filter((record) =>
      record.route?.fallbacks.some((attempt) => attempt.reason === 'breaker open'),
    );
    expect(skipped.length).toBeGreaterThanOrEqual(5);
    for (const record of skipped)
      expect(record.route).toMatchObject({
        providerId: 'backup',
        upstreamModel: 'gpt-4o-mini',
        fallbacks: [{ providerId: 'primary', outcome: 'skipped', reason: 'breaker open' }],
      });
    const failedOver = records.filter((record) => record.route?.fallbacks.some((attempt) => attempt.status === 503));
    expect(failedOver).toHaveLength(3);
    expect(
      records.filter((record) => record.route?.providerId === 'primary' && record.route.fallbacks.length === 0),
    ).toHaveLength(4);

    const breakerLines = logLines
      .filter((line) => line.event === 'breaker' && line.providerId === 'primary')
      .map((line) => line.state);
    expect(breakerLines).toEqual(['open', 'half-open', 'closed']);
    expect(
      logLines.filter((line) => line.event === 'fallback' && line.model === 'resilient').length,
    ).toBeGreaterThanOrEqual(8);
  });

  it("keeps sending a single-row model's requests to its row once its breaker is open, relaying the provider's own errors", async () => {
    const accounts = await Promise.all([0, 1, 2].map(() => gateway.createFundedKey({ credits: 1 })));
    const { key, accountId } = accounts[0]!;
    lonely.down = true;
    lonely.failureDelayMs = 0;
    // Three accounts' failures open the row's breaker; with no other row, it is still the one called.
    for (const account of accounts) expect((await chat(account.key, 'alone')).statusCode).toBe(503);
    for (let i = 0; i < 2; i++) {
      const calls = lonely.requests.length;
      const relayed = await chat(key, 'alone');
      expect(relayed.statusCode).toBe(503);
      expect(relayed.headers['x-upstream-status']).toBe('503');
      expect(relayed.headers['x-gateway-error-code']).toBeUndefined();
      expect(relayed.json()).toMatchObject({
        error: { message: 'The server is overloaded or not ready yet.', type: 'server_error' },
      });
      expect(lonely.requests.length).toBe(calls + 1);
    }
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    // Every one of them went upstream, so every one is recorded.
    expect((await audited(accountId)).map((record) => record.status)).toEqual(['failed', 'failed', 'failed']);
    lonely.down = false;
  });

  it('tries a provider again after its retry-after once, within the budget, then relays its error', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const before = openai.requests.filter(
      (request) => (request.body as { model?: string } | undefined)?.model === 'fake-error-429',
    ).length;
    const started = Date.now();
    const answer = await chat(key, 'limited');
    // The fake asks for 1 s: one wait, one more try, then its 429 as it came, with the wait it asked for.
    expect(answer.statusCode).toBe(429);
    expect(answer.headers['retry-after']).toBe('1');
    // And to the millisecond, which the OpenAI and Anthropic SDKs read first.
    expect(answer.headers['retry-after-ms']).toBe('1000');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(
      openai.requests.filter((request) => (request.body as { model?: string } | undefined)?.model === 'fake-error-429')
        .length - before,
    ).toBe(2);
    expect(logLines.some((line) => line.event === 'retry' && line.model === 'limited')).toBe(true);
  });

  it('keeps the route of each record for the admin API and the log line, never for the account', async () => {
    const { key, accountId, keyId } = await gateway.createFundedKey({ credits: 1 });
    const started = Date.now();
    expect((await chat(key, 'resilient', 'req-route-1')).statusCode).toBe(200);
    const elapsedMs = Date.now() - started;
    const [record] = await audited(accountId);
    expect(record!.route).toMatchObject({
      providerId: 'primary',
      upstreamModel: 'gpt-4o-mini',
      fallbacks: [],
      requestId: 'req-route-1',
    });
    // The first byte is timed from the request's admission, the record's duration from its hold (taken after
    // it, slower on PostgreSQL under load): both lie within the whole request as the client timed it.
    expect(record!.route!.firstByteMs).toBeGreaterThanOrEqual(0);
    expect(record!.route!.firstByteMs).toBeLessThanOrEqual(elapsedMs);
    expect(record!.durationMs).toBeLessThanOrEqual(elapsedMs);
    const one = await gateway.request({
      method: 'GET',
      url: `/api/admin/v1/accounts/${accountId}/generations/${record!.id}`,
      headers: adminHeaders,
    });
    expect(one.json<AuditedRecord>().route).toEqual(record!.route);
    expectEnvelope(
      await gateway.request({
        method: 'GET',
        url: `/api/admin/v1/accounts/${accountId}/generations/gen_nope`,
        headers: adminHeaders,
      }),
      { status: 404, code: 'GW_NOT_FOUND', path: `/api/admin/v1/accounts/${accountId}/generations/gen_nope` },
    );

    const usage = await gateway.request({ method: 'GET', url: '/api/compat/v1/usage', headers: keyHeaders(key) });
    expect(usage.statusCode).toBe(200);
    expect(usage.body).not.toContain('"route"');
    expect(usage.body).not.toContain('primary');

    // The request's one line carries the record, once both the answer and the record are done; no line of its own.
    const line = await vi.waitFor(() => {
      const found = logLines.find((entry) => entry.msg === 'request completed' && entry.reqId === 'req-route-1');
      if (!found) throw new Error('no request line yet');
      return found;
    });
    expect(line).toMatchObject({ statusCode: 200, route: '/api/alpha/v1/chat/completions' });
    expect(line.generation).toMatchObject({
      generationId: record!.id,
      accountId,
      apiKeyId: keyId,
      model: 'resilient',
      modality: 'text',
      status: 'succeeded',
      providerId: 'primary',
      upstreamModel: 'gpt-4o-mini',
      requestId: 'req-route-1',
      fallbacks: [],
    });
    const carried = line.generation as { usdCost?: unknown; firstByteMs?: unknown };
    expect(typeof carried.usdCost).toBe('number');
    expect(typeof carried.firstByteMs).toBe('number');
    expect(
      logLines.filter(
        (entry) =>
          entry.event === 'generation' &&
          (entry.generation as { generationId?: string } | undefined)?.generationId === record!.id,
      ),
    ).toEqual([]);
  });

  it('shows the figures of this run in /metrics', async () => {
    const scraped = await gateway.request({ method: 'GET', url: '/metrics' });
    expect(scraped.statusCode).toBe(200);
    expect(scraped.headers['content-type']).toContain('text/plain');
    const metric = (name: string, labels: string) => {
      const line = scraped.body
        .split('\n')
        .find(
          (candidate) =>
            candidate.startsWith(`${name}{`) && labels.split(',').every((label) => candidate.includes(label)),
        );
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    // The chats of the tests above: 17 answered 200, 5 answered 503 (all relayed from the provider), one 429.
    expect(
      metric(
        'gateway_http_requests_total',
        'surface="alpha",route="/api/alpha/v1/chat/completions",method="POST",status="200"',
      ),
    ).toBe(17);
    expect(
      metric('gateway_http_requests_total', 'route="/api/alpha/v1/chat/completions",method="POST",status="503"'),
    ).toBe(5);
    expect(metric('gateway_http_request_duration_seconds_count', 'route="/api/alpha/v1/chat/completions"')).toBe(23);
    expect(metric('gateway_generations_total', 'model="resilient",modality="text",status="succeeded"')).toBe(17);
    expect(metric('gateway_generation_tokens_total', 'model="resilient",direction="input"')).toBeGreaterThan(0);
    expect(metric('gateway_generation_tokens_total', 'model="resilient",direction="output"')).toBeGreaterThan(0);
    expect(metric('gateway_generation_usd_total', 'model="resilient",modality="text"')).toBeGreaterThan(0);
    expect(
      metric('gateway_fallbacks_total', 'model="resilient",from="primary",to="backup",reason="breaker open"'),
    ).toBeGreaterThanOrEqual(5);
    expect(metric('gateway_upstream_retries_total', 'model="limited",provider="backup"')).toBe(1);
    expect(metric('gateway_upstream_first_byte_seconds_count', 'provider="primary"')).toBeGreaterThanOrEqual(4);
    expect(metric('gateway_provider_breaker_state', 'provider="primary",upstream_model="gpt-4o-mini"')).toBe(0);
    expect(metric('gateway_provider_breaker_state', 'provider="lonely",upstream_model="gpt-4o-mini"')).toBe(1);
    expect(scraped.body).toMatch(/^gateway_reservations_outstanding 0$/m);
    expect(scraped.body).toMatch(/^gateway_credit_leases \d+$/m);
    expect(scraped.body).toContain('gateway_process_resident_memory_bytes');
  });

  it('writes one line per answer with its route template, and counts scanned paths under one route label', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const answered = await chat(key, 'resilient', 'req-line-1');
    expect(answered.statusCode, answered.body).toBe(200);
    const requestLines = (requestId: string) =>
      logLines.filter((line) => line.msg === 'request completed' && line.reqId === requestId);
    await vi.waitFor(() => expect(requestLines('req-line-1')).toHaveLength(1));
    expect(requestLines('req-line-1')).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/api/alpha/v1/chat/completions',
        route: '/api/alpha/v1/chat/completions',
        statusCode: 200,
        responseTimeMs: expect.any(Number),
        generation: expect.objectContaining({ model: 'resilient', status: 'succeeded', requestId: 'req-line-1' }),
      }),
    ]);
    for (const path of ['/no/such/thing', '/api/v1/nope?x=1', `/${'a'.repeat(5000)}`]) {
      const missing = await gateway.request({
        method: 'GET',
        url: path,
        headers: { 'x-request-id': `scan-${path.length}` },
      });
      expect(missing.statusCode).toBe(404);
      expect(requestLines(`scan-${path.length}`)).toEqual([
        expect.objectContaining({ route: 'unmatched', statusCode: 404, path: path.split('?')[0] }),
      ]);
    }
    // The HEAD route Fastify adds for a GET one is metered once, under its own method.
    for (let probe = 0; probe < 2; probe += 1)
      expect((await gateway.request({ method: 'HEAD', url: '/livez' })).statusCode).toBe(200);
    const scraped = (await gateway.request({ method: 'GET', url: '/metrics' })).body;
    expect(scraped).toMatch(
      /^gateway_http_requests_total\{surface="other",route="unmatched",method="GET",status="404"\} [3-9]\d*$/m,
    );
    expect(scraped).toMatch(
      /^gateway_http_requests_total\{surface="other",route="\/livez",method="HEAD",status="200"\} 2$/m,
    );
    expect(scraped).not.toContain('no/such/thing');
  });
});

describe('metrics behind a token, with the database figures of holds and media jobs', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      configText: [
        'providers:',
        '  sandbox: { protocol: sandbox }',
        'models:',
        '  - { id: sandbox-image, outputModalities: [image], pricing: { perImage: 0.001 }, providers: [{ provider: sandbox, model: image }] }',
        'telemetry: { metricsToken: metrics-secret-token }',
        'jobs: { idlePollMs: 50 }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('needs the token, and counts the media job queue and the holds of the database', async () => {
    expectEnvelope(await gateway.request({ method: 'GET', url: '/metrics' }), {
      status: 401,
      code: 'GW_UNAUTHENTICATED',
      path: '/metrics',
    });
    expectEnvelope(
      await gateway.request({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong-token' } }),
      { status: 401, code: 'GW_UNAUTHENTICATED', path: '/metrics' },
    );
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const made = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations',
      headers: keyHeaders(key),
      payload: { model: 'sandbox-image', content: [{ type: 'text', text: 'a gauge' }] },
    });
    expect(made.statusCode, made.body).toBe(200);
    const scraped = await gateway.request({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: 'Bearer metrics-secret-token' },
    });
    expect(scraped.statusCode).toBe(200);
    // The queue's depth, both states always present; the finished job is not counted.
    expect(scraped.body).toMatch(/^gateway_media_jobs\{state="queued"\} 0$/m);
    expect(scraped.body).toMatch(/^gateway_media_jobs\{state="processing"\} 0$/m);
    expect(scraped.body).not.toMatch(/^gateway_media_jobs\{state="succeeded"\}/m);
    expect(scraped.body).toMatch(
      /^gateway_generations_total\{model="sandbox-image",modality="image",status="succeeded"\} 1$/m,
    );
    expect(scraped.body).toMatch(/^gateway_generation_usd_total\{model="sandbox-image",modality="image"\} 0\.001$/m);
    // Nothing is held once the job settled; the gauge lists what the database holds, by kind.
    expect(scraped.body).not.toMatch(/^gateway_holds\{kind="media-job"\} [1-9]/m);
  });
});
