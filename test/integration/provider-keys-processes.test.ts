/**
 * A provider key added, reweighted and removed through the admin API while requests run on two compiled
 * gateway processes sharing one PostgreSQL database: no request fails because of the change, each process
 * learns of each change within a second, and once removed the key is used by neither process. The fake
 * upstream checks the key of every request it gets. Needs a build (npm run build).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKeyedOpenAiFake, type KeyedOpenAiFake } from '../fakes/keyed-openai-fake.ts';
import type { GatewayChild } from '../support/gateway-child.ts';
import { callChild as call, fundedAccount, startGatewayPair, type GatewayPair } from '../support/gateway-pair.ts';
import { adminHeaders, bearer } from '../support/http-helpers.ts';

const configuredKey = 'sk-config-key-0000000000aaaa';
const runtimeKey = 'sk-runtime-key-000000000bbbb';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface KeyView {
  id: string;
  weight: number;
  source: string;
  keyEnding: string;
}

describe('a provider key added, reweighted and removed at runtime on two processes under load', () => {
  let upstream: KeyedOpenAiFake;
  let pair: GatewayPair;

  beforeAll(async () => {
    upstream = await startKeyedOpenAiFake([configuredKey, runtimeKey]);
    pair = await startGatewayPair([
      'providers:',
      '  openai:',
      '    protocol: openai',
      `    baseUrl: "${upstream.url}/v1"`,
      `    apiKeys: [{ id: primary, key: ${configuredKey}, weight: 1 }]`,
      'models:',
      '  - id: keyed',
      '    pricing: { inputPerMTok: 1, outputPerMTok: 1 }',
      '    providers: [{ provider: openai, model: gpt-4o-mini }]',
    ]);
  }, 120_000);

  afterAll(async () => {
    await pair?.close();
    await upstream?.close();
  });

  const keysOn = async (child: GatewayChild): Promise<KeyView[]> => {
    const answer = await call(child, {
      method: 'GET',
      url: '/api/admin/v1/providers/openai/keys',
      headers: adminHeaders,
    });
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { keys: KeyView[] }).keys;
  };

  /** Waits until `holds` is true of `child`'s keys; answers how long that took. */
  const until = async (child: GatewayChild, holds: (keys: KeyView[]) => boolean): Promise<number> => {
    const started = Date.now();
    while (!holds(await keysOn(child))) {
      if (Date.now() - started > 10_000) throw new Error(`the change did not reach ${child.url}:\n${child.output()}`);
      await pause(20);
    }
    return Date.now() - started;
  };

  it('no request fails, both processes follow every change, and a removed key is used by neither', {
    timeout: 120_000,
  }, async () => {
    const [a, b] = pair.children;
    const { token } = await fundedAccount(a, 100);
    const created = await call(a, {
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(token),
      body: { name: 'load' },
    });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };

    // The load: four clients on each process, one request after the other, until told to stop.
    const failures: string[] = [];
    let answered = 0;
    let running = true;
    const loadClient = async (child: GatewayChild) => {
      while (running) {
        const response = await call(child, {
          method: 'POST',
          url: '/api/alpha/v1/chat/completions',
          headers: bearer(key),
          body: { model: 'keyed', max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] },
        });
        const text = await response.text();
        if (response.status !== 200) failures.push(`${response.status} ${text}`);
        answered += 1;
      }
    };
    const load = Promise.all([a, a, a, a, b, b, b, b].map(loadClient));
    await pause(300);

    // Added through a, weighted 3 to the configured key's 1: b learns of it within a second and uses it.
    const added = await call(a, {
      method: 'POST',
      url: '/api/admin/v1/providers/openai/keys',
      headers: adminHeaders,
      body: { key: runtimeKey, label: 'rotation', weight: 3 },
    });
    const addedText = await added.text();
    expect(added.status, addedText).toBe(201);
    expect(addedText).not.toContain(runtimeKey);
    const { id: runtimeKeyId, keyEnding } = JSON.parse(addedText) as KeyView;
    expect(keyEnding).toBe('bbbb');
    expect(await until(b, (keys) => keys.some((key) => key.id === runtimeKeyId))).toBeLessThan(1000);
    await pause(500);
    expect(upstream.usesOf(runtimeKey)).toBeGreaterThan(0);

    // Reweighted through b: a follows within a second.
    const reweighted = await call(b, {
      method: 'PATCH',
      url: `/api/admin/v1/providers/openai/keys/${runtimeKeyId}`,
      headers: adminHeaders,
      body: { weight: 10 },
    });
    expect(reweighted.status).toBe(200);
    expect(await until(a, (keys) => keys.find((key) => key.id === runtimeKeyId)?.weight === 10)).toBeLessThan(1000);
    await pause(300);

    // Removed through a: after a second, neither process sends it again.
    const removed = await call(a, {
      method: 'DELETE',
      url: `/api/admin/v1/providers/openai/keys/${runtimeKeyId}`,
      headers: adminHeaders,
    });
    expect(removed.status).toBe(204);
    expect(await until(b, (keys) => !keys.some((key) => key.id === runtimeKeyId))).toBeLessThan(1000);
    await pause(1000);
    const usesAtRemoval = upstream.usesOf(runtimeKey);
    const answeredAtRemoval = answered;
    await pause(1500);
    running = false;
    await load;

    expect(failures).toEqual([]);
    expect(upstream.refused()).toBe(0);
    expect(answered - answeredAtRemoval).toBeGreaterThan(20);
    expect(upstream.usesOf(runtimeKey)).toBe(usesAtRemoval);
    expect(upstream.usesOf(configuredKey)).toBeGreaterThan(0);

    // The usage records name the key each request was sent with (its id), never the key.
    const keyIds = await texts("SELECT DISTINCT route->>'keyId' AS text FROM generations");
    expect(new Set(keyIds)).toEqual(new Set(['primary', runtimeKeyId]));
    expect((await texts('SELECT route::text AS text FROM generations')).join('\n')).not.toContain(runtimeKey);
    // Audited, without the key.
    expect(
      await texts("SELECT action AS text FROM audit_log WHERE subject_type = 'provider-key' ORDER BY created_at"),
    ).toEqual(['provider-key.create', 'provider-key.update', 'provider-key.delete']);
    expect((await texts('SELECT concat(before, after, request) AS text FROM audit_log')).join('\n')).not.toContain(
      runtimeKey,
    );
    for (const child of pair.children) expect(child.output()).not.toContain(runtimeKey);
  });

  /** The `text` column of a query's rows. */
  async function texts(query: string): Promise<Array<string | null>> {
    return (await pair.client.query<{ text: string | null }>(query)).rows.map((row) => row.text);
  }
});
