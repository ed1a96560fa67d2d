import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer } from '../fakes/fake-server.ts';
import { writeJson } from '../fakes/wire.ts';
import { adminHeaders, expectEnvelope, keyHeaders, usageRecords } from '../support/http-helpers.ts';
import { modelYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/** Distinctive provider keys: neither may appear in an answer or a log line of a reload. */
const startKey = 'sk-reload-start-Z8qW3eR6tY1u';
const rotatedKey = 'sk-reload-rotated-M4nB7vC2xK9j';

const reloadUrl = '/api/admin/v1/config/reload';

/**
 * An OpenAI-protocol upstream that answers every chat completion with 1,000 prompt and 1,000 completion tokens,
 * and holds the ones whose last message is "hold" until `release()`.
 */
async function startGatedUpstream(): Promise<FakeServer & { release(): void; held(): number }> {
  const waiting: Array<() => void> = [];
  const server = await startFakeServer(async (request, response) => {
    const body = request.body as { model: string; messages: Array<{ content: string }> };
    if (body.messages.at(-1)?.content === 'hold') await new Promise<void>((resolve) => waiting.push(resolve));
    writeJson(response, {
      status: 200,
      body: {
        id: 'chatcmpl-reload',
        object: 'chat.completion',
        created: 1,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 },
      },
    });
  });
  return {
    ...server,
    release: () => {
      for (const resolve of waiting.splice(0)) resolve();
    },
    held: () => waiting.length,
  };
}

describe('reloading gateway.yaml', () => {
  let upstream: Awaited<ReturnType<typeof startGatedUpstream>>;
  let gateway: TestGateway;
  let directory: string;
  let configPath: string;
  const logLines: Array<Record<string, unknown>> = [];

  /** gateway.yaml with the sandbox and the gated upstream, the model `metered` at these prices, and `extraModels`. */
  const configText = ({
    prices = { input: 1, output: 2 },
    apiKey = `\${RELOAD_TEST_KEY}`,
    extra = '',
  }: {
    prices?: { input: number; output: number };
    apiKey?: string;
    extra?: string;
  } = {}) =>
    [
      'providers:',
      '  sandbox: { protocol: sandbox }',
      `  gated: { protocol: openai, baseUrl: "${upstream.url}/v1", apiKey: "${apiKey}" }`,
      'models:',
      modelYaml('metered', { provider: 'gated', upstream: 'gpt-4o-mini', prices }),
      modelYaml('sandbox-echo', { provider: 'sandbox', upstream: 'echo' }),
      extra,
    ].join('\n');

  const chat = (key: string, model: string, content: string) => ({
    method: 'POST' as const,
    url: '/api/alpha/v1/chat/completions',
    headers: keyHeaders(key),
    payload: { model, messages: [{ role: 'user', content }] },
  });
  const reload = () => gateway.request({ method: 'POST', url: reloadUrl, headers: adminHeaders });

  beforeAll(async () => {
    upstream = await startGatedUpstream();
    directory = mkdtempSync(path.join(tmpdir(), 'gw-reload-'));
    configPath = path.join(directory, 'gateway.yaml');
    writeFileSync(configPath, configText());
    gateway = await startTestGateway({
      upstreams: [upstream],
      configText: configText(),
      env: { GATEWAY_CONFIG: configPath, RELOAD_TEST_KEY: startKey },
      logLines,
    });
  });

  afterEach(async () => {
    // Each test starts from the first file, whatever the last one left running.
    writeFileSync(configPath, configText());
    await gateway.gateway.core.services.configReloader.reload('admin');
    logLines.length = 0;
  });

  afterAll(async () => {
    upstream.release();
    await gateway?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('makes a model added to the file callable on the next request, without a restart', async () => {
    const { key } = await gateway.createFundedKey();
    const before = await gateway.request(chat(key, 'late-echo', 'hello'));
    expectEnvelope(before, { status: 400, code: 'GW_MODEL_NOT_AVAILABLE', path: '/api/alpha/v1/chat/completions' });

    writeFileSync(configPath, configText({ extra: modelYaml('late-echo', { provider: 'sandbox', upstream: 'echo' }) }));
    const answer = await reload();
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({
      models: { added: ['late-echo'], removed: [], changed: [] },
      prices: [],
      providers: { added: [], removed: [], changed: [] },
      needsRestart: [],
    });

    // The operator's change is in the audit log, kept as the diff it answered.
    const log = await gateway.request({
      method: 'GET',
      url: '/api/admin/v1/audit-log?action=config.reload',
      headers: adminHeaders,
    });
    expect(log.statusCode, log.body).toBe(200);
    expect(log.json().results[0]).toMatchObject({
      actor: { kind: 'operator' },
      action: 'config.reload',
      subject: { type: 'config' },
      after: { configDiff: { models: { added: ['late-echo'] } } },
    });

    const after = await gateway.request(chat(key, 'late-echo', 'hello'));
    expect(after.statusCode, after.body).toBe(200);
    const listed = await gateway.request({ method: 'GET', url: '/api/alpha/v1/models', headers: keyHeaders(key) });
    expect(listed.body).toContain('late-echo');
  });

  it('charges a new price from the next request on, while a request in flight settles at its old price', async () => {
    // Two accounts, so that each record is told apart by its key.
    const first = await gateway.createFundedKey();
    const second = await gateway.createFundedKey();
    // 1,000 tokens each way: 0.001 + 0.002 USD at the first prices, 0.01 + 0.02 at the new ones.
    const inFlight = gateway.app.inject(chat(first.key, 'metered', 'hold'));
    await expect.poll(() => upstream.held()).toBe(1);

    writeFileSync(configPath, configText({ prices: { input: 10, output: 20 } }));
    // Not through `gateway.request`, which waits for every generation to settle, the held one included.
    const answer = await gateway.app.inject({ method: 'POST', url: reloadUrl, headers: adminHeaders });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json().prices).toEqual([
      {
        modelId: 'metered',
        before: { inputPerMTok: 1, outputPerMTok: 2 },
        after: { inputPerMTok: 10, outputPerMTok: 20 },
      },
    ]);

    const next = await gateway.app.inject(chat(second.key, 'metered', 'after the reload'));
    expect(next.statusCode, next.body).toBe(200);
    upstream.release();
    expect((await inFlight).statusCode).toBe(200);

    const [held] = await usageRecords(gateway, first.key);
    const [charged] = await usageRecords(gateway, second.key);
    expect(held?.usdCost).toBeCloseTo(0.003, 9);
    expect(charged?.usdCost).toBeCloseTo(0.03, 9);
  });

  it('changes nothing for a file that fails validation, and names every problem in the answer and the log', async () => {
    const { key } = await gateway.createFundedKey();
    const broken = configText({
      prices: { input: 10, output: 20 },
      extra: [
        '  - id: bad-price',
        '    pricing: { inputPerMTok: -1 }',
        '    providers: [{ provider: sandbox, model: echo }]',
        '  - id: misspelt',
        '    pricng: { inputPerMTok: 1 }',
        '    providers: [{ provider: sandbox, model: echo }]',
      ].join('\n'),
    });
    writeFileSync(configPath, broken);
    const answer = await reload();
    const body = expectEnvelope(answer, { status: 400, code: 'GW_VALIDATION', path: reloadUrl });
    expect(body.errors[0]).toBe('gateway.yaml failed validation: nothing changed');
    expect(body.errors.slice(1)).toEqual([
      'at models[2].pricing.inputPerMTok: must be >= 0',
      'at models[3].pricng: unknown field',
    ]);

    // A file that passes the schema but names an unknown provider is refused on its own check.
    writeFileSync(configPath, configText({ extra: modelYaml('late-echo', { provider: 'nowhere', upstream: 'e' }) }));
    const unknown = expectEnvelope(await reload(), { status: 400, code: 'GW_VALIDATION', path: reloadUrl });
    expect(unknown.errors.join('\n')).toContain('unknown provider "nowhere"');
    const refusal = logLines.findLast((line) => line.msg === 'configuration reload refused: nothing changed');
    expect(refusal).toMatchObject({ level: 40, trigger: 'admin' });
    expect(JSON.stringify(refusal)).toContain('unknown provider \\"nowhere\\"');

    expect((await gateway.request(chat(key, 'late-echo', 'hello'))).statusCode).toBe(400);
    await gateway.request(chat(key, 'metered', 'still at the first price'));
    const [record] = await usageRecords(gateway, key);
    expect(record?.usdCost).toBeCloseTo(0.003, 9);
  });

  it('refuses with 400 a file whose aliases do not resolve or contain themselves, and keeps serving', async () => {
    const { key } = await gateway.createFundedKey();
    writeFileSync(configPath, `${configText()}\nlimits: *missing\n`);
    const unresolved = expectEnvelope(await reload(), { status: 400, code: 'GW_VALIDATION', path: reloadUrl });
    expect(unresolved.errors.slice(1)).toEqual(['invalid YAML: alias *missing names no anchor set before it']);

    const looped = configText().replace('  - id: metered', '  - &entry\n    id: metered\n    again: *entry');
    writeFileSync(configPath, looped);
    const circular = expectEnvelope(await reload(), { status: 400, code: 'GW_VALIDATION', path: reloadUrl });
    expect(circular.errors.slice(1)).toEqual(['at models[0].again: an alias inside its own anchor']);
    expect((await gateway.request(chat(key, 'metered', 'still served'))).statusCode).toBe(200);
  });

  it('logs the diff at info and names a rotated key as changed without showing either key', async () => {
    const { key } = await gateway.createFundedKey();
    writeFileSync(
      configPath,
      `${configText({ apiKey: rotatedKey })}\nserver: { bodyLimitBytes: 2048 }\nupstream: { breakerCooldownMs: 5000 }\n`,
    );
    const answer = await reload();
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({
      providers: { changed: [{ providerId: 'gated', fields: ['apiKey'] }] },
      settings: ['upstream.breakerCooldownMs'],
      needsRestart: ['server.bodyLimitBytes'],
    });
    expect(upstream.requests.length).toBeGreaterThan(0);
    await gateway.request(chat(key, 'metered', 'with the rotated key'));
    expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${rotatedKey}`);
    // Settings read only at start keep their running value: a 2 KiB body limit would refuse this 4 KiB request.
    expect((await gateway.request(chat(key, 'sandbox-echo', 'x'.repeat(4096)))).statusCode).toBe(200);

    const reloaded = logLines.find((line) => line.msg === 'configuration reloaded');
    expect(reloaded).toMatchObject({
      level: 30,
      trigger: 'admin',
      diff: { providers: { changed: [{ providerId: 'gated', fields: ['apiKey'] }] } },
    });
    expect(logLines.find((line) => line.msg?.toString().includes('only after a restart'))).toMatchObject({
      needsRestart: ['server.bodyLimitBytes'],
    });
    const written = JSON.stringify(logLines) + answer.body;
    for (const secret of [startKey, rotatedKey]) {
      for (const form of [secret, Buffer.from(secret).toString('base64')]) expect(written).not.toContain(form);
    }
  });

  it('answers 401 without the admin token and reloads nothing', async () => {
    writeFileSync(configPath, configText({ extra: modelYaml('late-echo', { provider: 'sandbox', upstream: 'echo' }) }));
    const answer = await gateway.request({ method: 'POST', url: reloadUrl });
    expectEnvelope(answer, { status: 401, code: 'GW_UNAUTHENTICATED', path: reloadUrl });
    expect(gateway.gateway.core.services.catalog.find('late-echo')).toBeUndefined();
  });
});
