/**
 * The admin API of provider keys, in one process: what it refuses and why (naming the field or the thing),
 * what it shows of a key (never the key), and the headroom and breaker each key shows once used.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKeyedOpenAiFake, type KeyedOpenAiFake } from '../fakes/keyed-openai-fake.ts';
import { adminHeaders } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const configuredKey = 'sk-admin-config-00000000cccc';
const runtimeKey = 'sk-admin-runtime-0000000dddd';

describe('the admin API of provider keys', () => {
  let upstream: KeyedOpenAiFake;
  let gateway: TestGateway;
  const keysUrl = '/api/admin/v1/providers/openai/keys';

  beforeAll(async () => {
    upstream = await startKeyedOpenAiFake([configuredKey, runtimeKey]);
    gateway = await startTestGateway({
      upstreams: [upstream],
      configText: [
        'providers:',
        `  openai: { protocol: openai, baseUrl: "${upstream.url}/v1", apiKeys: [{ id: primary, key: ${configuredKey} }] }`,
        'models:',
        '  - { id: keyed, pricing: { inputPerMTok: 1, outputPerMTok: 1 }, providers: [{ provider: openai, model: gpt-4o-mini }] }',
      ].join('\n'),
    });
  });
  afterAll(async () => gateway?.close());

  const admin = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    gateway.request({ method, url, headers: adminHeaders, ...(payload ? { payload } : {}) });

  it('needs the admin token', async () => {
    expect((await gateway.request({ method: 'GET', url: keysUrl })).statusCode).toBe(401);
    const added = await gateway.request({
      method: 'POST',
      url: keysUrl,
      headers: { authorization: 'Bearer not-the-token' },
      payload: { key: runtimeKey },
    });
    expect(added.statusCode).toBe(401);
    expect(upstream.usesOf(runtimeKey)).toBe(0);
  });

  it('refuses what it cannot use, naming the field or the thing, and never echoes the key', async () => {
    const refusals: Array<[string, number, RegExp, object | undefined, 'POST' | 'PATCH' | 'DELETE' | 'GET']> = [
      ['/api/admin/v1/providers/nowhere/keys', 404, /provider \\"nowhere\\"/, { key: runtimeKey }, 'POST'],
      ['/api/admin/v1/providers/nowhere/keys', 404, /provider \\"nowhere\\"/, undefined, 'GET'],
      [keysUrl, 400, /key/, { key: `${runtimeKey}\r\nx-injected: 1` }, 'POST'],
      [keysUrl, 400, /key/, { key: 'short' }, 'POST'],
      [keysUrl, 400, /weight/, { key: runtimeKey, weight: -1 }, 'POST'],
      [`${keysUrl}/primary`, 409, /gateway\.yaml/, { weight: 2 }, 'PATCH'],
      [`${keysUrl}/primary`, 409, /gateway\.yaml/, undefined, 'DELETE'],
      [`${keysUrl}/pkey_missing`, 404, /no key \\"pkey_missing\\"/, { weight: 2 }, 'PATCH'],
      [`${keysUrl}/pkey_missing`, 404, /no key \\"pkey_missing\\"/, undefined, 'DELETE'],
    ];
    for (const [url, status, message, payload, method] of refusals) {
      const answer = await admin(method, url, payload);
      expect(answer.statusCode, `${method} ${url}: ${answer.body}`).toBe(status);
      expect(answer.body).toMatch(message);
      expect(answer.body).not.toContain(runtimeKey);
    }
    // Nothing was stored.
    expect((await admin('GET', keysUrl)).json<{ keys: unknown[] }>().keys).toHaveLength(1);
  });

  it('shows a key by its id and last 4 characters, with the headroom its upstream reported, and audits each change', async () => {
    const added = await admin('POST', keysUrl, { key: runtimeKey, label: 'second', weight: 1_000_000 });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.body).not.toContain(runtimeKey);
    const { id } = added.json<{ id: string }>();
    const { key } = await gateway.createFundedKey();
    const chat = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { authorization: `Bearer ${key}` },
      payload: { model: 'keyed', messages: [{ role: 'user', content: 'hello' }] },
    });
    expect(chat.statusCode, chat.body).toBe(200);
    expect(upstream.usesOf(runtimeKey)).toBe(1);
    const listed = await admin('GET', keysUrl);
    expect(listed.body).not.toContain(runtimeKey);
    expect(listed.body).not.toContain(configuredKey);
    expect(listed.json()).toEqual({
      providerId: 'openai',
      keys: [
        {
          id: 'primary',
          providerId: 'openai',
          weight: 1,
          active: true,
          source: 'config',
          keyEnding: 'cccc',
          breaker: 'closed',
          headroom: {},
        },
        {
          id,
          providerId: 'openai',
          label: 'second',
          weight: 1_000_000,
          active: true,
          source: 'runtime',
          keyEnding: 'dddd',
          breaker: 'closed',
          headroom: { remainingRequests: 9999, remainingTokens: 999999, observedAt: expect.any(String) },
        },
      ],
    });
    // Switched off: the next request goes with the configured key.
    const off = await admin('PATCH', `${keysUrl}/${id}`, { active: false, label: null });
    expect(off.json()).toMatchObject({ id, active: false });
    expect(off.json()).not.toHaveProperty('label');
    await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { authorization: `Bearer ${key}` },
      payload: { model: 'keyed', messages: [{ role: 'user', content: 'hello' }] },
    });
    expect(upstream.usesOf(runtimeKey)).toBe(1);
    expect((await admin('DELETE', `${keysUrl}/${id}`)).statusCode).toBe(204);
    const audit = await admin('GET', `/api/admin/v1/audit-log?limit=10`);
    const entries = audit
      .json<{ results: Array<{ action: string; subject: { type: string; id?: string } }> }>()
      .results.filter((entry) => entry.subject.type === 'provider-key');
    expect(entries.map((entry) => [entry.action, entry.subject.id])).toEqual([
      ['provider-key.delete', id],
      ['provider-key.update', id],
      ['provider-key.create', id],
    ]);
    expect(audit.body).not.toContain(runtimeKey);
  });
});

describe('a provider gateway.yaml gives no key', () => {
  const keylessKey = 'sk-admin-keyless-000000eeee';
  let upstream: KeyedOpenAiFake;
  let gateway: TestGateway;
  let key: string;
  const keysUrl = '/api/admin/v1/providers/keyless/keys';

  let directory: string;

  beforeAll(async () => {
    upstream = await startKeyedOpenAiFake([configuredKey, keylessKey]);
    const configText = [
      'providers:',
      `  openai: { protocol: openai, baseUrl: "${upstream.url}/v1", apiKeys: [{ id: primary, key: ${configuredKey} }] }`,
      `  keyless: { protocol: openai, baseUrl: "${upstream.url}/v1" }`,
      'models:',
      '  - { id: keyless-only, pricing: { inputPerMTok: 1, outputPerMTok: 1 }, providers: [{ provider: keyless, model: gpt-4o-mini }] }',
      '  - { id: keyless-first, pricing: { inputPerMTok: 1, outputPerMTok: 1 }, providers: [{ provider: keyless, model: gpt-4o-mini, priority: 1 }, { provider: openai, model: gpt-4o-mini, priority: 2 }] }',
    ].join('\n');
    // The file a reload reads again: the same as the gateway started with.
    directory = mkdtempSync(path.join(tmpdir(), 'gw-keyless-'));
    const configPath = path.join(directory, 'gateway.yaml');
    writeFileSync(configPath, configText);
    gateway = await startTestGateway({ upstreams: [upstream], configText, env: { GATEWAY_CONFIG: configPath } });
    ({ key } = await gateway.createFundedKey());
  });
  afterAll(async () => {
    await gateway?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const admin = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    gateway.request({ method, url, headers: adminHeaders, ...(payload ? { payload } : {}) });
  const chat = (model: string) =>
    gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { authorization: `Bearer ${key}` },
      payload: { model, messages: [{ role: 'user', content: 'hello' }] },
    });
  /** What a request to each model does now: its status, and which key the upstream saw for it. */
  async function served(): Promise<Record<string, string>> {
    const answers: Record<string, string> = {};
    for (const model of ['keyless-only', 'keyless-first']) {
      const [keyless, configured] = [upstream.usesOf(keylessKey), upstream.usesOf(configuredKey)];
      const answer = await chat(model);
      const by =
        upstream.usesOf(keylessKey) > keyless
          ? 'keyless'
          : upstream.usesOf(configuredKey) > configured
            ? 'openai'
            : '-';
      answers[model] = `${answer.statusCode} ${by}`;
    }
    return answers;
  }
  const unkeyed = { 'keyless-only': '400 -', 'keyless-first': '200 openai' };
  const keyed = { 'keyless-only': '200 keyless', 'keyless-first': '200 keyless' };

  it('serves nothing until a runtime key is added, then serves with it, and stops when it is switched off or removed', async () => {
    expect((await admin('GET', keysUrl)).json()).toEqual({ providerId: 'keyless', keys: [] });
    expect(await served()).toEqual(unkeyed);
    expect((await chat('keyless-only')).json()).toMatchObject({
      error: { message: expect.stringMatching(/keyless-only/) },
    });

    const added = await admin('POST', keysUrl, { key: keylessKey });
    expect(added.statusCode, added.body).toBe(201);
    const { id } = added.json<{ id: string }>();
    expect(await served()).toEqual(keyed);

    expect((await admin('PATCH', `${keysUrl}/${id}`, { active: false })).statusCode).toBe(200);
    expect(await served()).toEqual(unkeyed);
    expect((await admin('PATCH', `${keysUrl}/${id}`, { active: true })).statusCode).toBe(200);
    expect(await served()).toEqual(keyed);
    expect((await admin('DELETE', `${keysUrl}/${id}`)).statusCode).toBe(204);
    expect(await served()).toEqual(unkeyed);
    expect(upstream.refused()).toBe(0);
  });

  it('keeps serving its runtime key across a reload of gateway.yaml', async () => {
    const added = await admin('POST', keysUrl, { key: keylessKey });
    expect(added.statusCode, added.body).toBe(201);
    const reload = await admin('POST', '/api/admin/v1/config/reload');
    expect(reload.statusCode, reload.body).toBe(200);
    expect(reload.json()).toMatchObject({ providers: { added: [], removed: [], changed: [] } });
    expect(await served()).toEqual(keyed);
    expect((await admin('DELETE', `${keysUrl}/${added.json<{ id: string }>().id}`)).statusCode).toBe(204);
  });
});
