import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer } from '../fakes/fake-server.ts';
import { fakeOpenAiKey, startOpenAiFake } from '../fakes/openai-fake.ts';
import { relayTo, startSwitchableUpstream, type SwitchableUpstream } from '../fakes/switchable-upstream.ts';
import { writeJson } from '../fakes/wire.ts';
import { adminHeaders, breakerStateOf, heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

interface AuditedRecord {
  status: string;
  route?: {
    providerId: string;
    fallbacks: Array<{ providerId: string; outcome: string; reason: string; status?: number }>;
  };
}

/**
 * An OpenAI-protocol provider in front of the faithful fake whose answer depends on what a request carries, as
 * a real provider's can: a request that mentions "poison" makes it fail with 500, one that mentions "flood"
 * gets 429 (no retry-after); every other request is passed to `target` and its answer relayed.
 */
async function startContentSensitiveUpstream(target: FakeServer): Promise<FakeServer> {
  return startFakeServer(async (incoming, response) => {
    const text = JSON.stringify(incoming.body ?? '');
    if (text.includes('poison'))
      return writeJson(response, {
        status: 500,
        body: {
          error: {
            message: 'The server had an error while processing your request.',
            type: 'server_error',
            param: null,
            code: null,
          },
        },
      });
    if (text.includes('flood'))
      return writeJson(response, {
        status: 429,
        body: {
          error: {
            message: 'Rate limit reached for requests',
            type: 'requests',
            param: null,
            code: 'rate_limit_exceeded',
          },
        },
      });
    await relayTo(target, incoming, response);
  });
}

describe('provider breakers that one tenant cannot trip for the others', () => {
  let openai: FakeServer;
  let sensitive: FakeServer;
  // The primary provider: content-sensitive, and taken down by the tests as a whole for an outage.
  let primary: SwitchableUpstream;
  let gateway: TestGateway;

  beforeAll(async () => {
    openai = await startOpenAiFake();
    sensitive = await startContentSensitiveUpstream(openai);
    primary = await startSwitchableUpstream(sensitive);
    gateway = await startTestGateway({
      upstreams: [primary, sensitive, openai],
      configText: [
        'providers:',
        `  primary: { protocol: openai, baseUrl: "${primary.url}/v1", apiKey: ${fakeOpenAiKey} }`,
        fakeProviderYaml('backup', 'openai', openai),
        'models:',
        '  - id: duo',
        '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
        '    providers:',
        '      - { provider: primary, model: gpt-4o-mini, priority: 1 }',
        '      - { provider: backup, model: gpt-4o-mini, priority: 2 }',
        '  - { id: solo, pricing: { inputPerMTok: 1, outputPerMTok: 2 }, providers: [{ provider: primary, model: gpt-4o-mini }] }',
        '  - id: vectors',
        '    outputModalities: [embedding]',
        '    pricing: { inputPerMTok: 0.01 }',
        '    providers:',
        '      - { provider: primary, model: text-embedding-3-small, priority: 1 }',
        '      - { provider: backup, model: text-embedding-3-small, priority: 2 }',
        // Three failures in a row open a row, from the default three accounts; nothing closes it during the tests.
        'upstream: { breakerFailures: 3, breakerCooldownMs: 600000 }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const chat = (key: string, model: string, content: string) =>
    gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: keyHeaders(key),
      payload: { model, messages: [{ role: 'user', content }] },
    });
  const embed = (key: string, input: string) =>
    gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/embeddings',
      headers: keyHeaders(key),
      payload: { model: 'vectors', input },
    });
  const primaryCalls = () => primary.requests.filter((call) => call.method === 'POST').length;
  const audited = async (accountId: string) =>
    (
      await gateway.request({
        method: 'GET',
        url: `/api/admin/v1/accounts/${accountId}/generations?limit=100`,
        headers: adminHeaders,
      })
    ).json<{ results: AuditedRecord[] }>().results;

  it("leaves a row to the other accounts, however often one account's requests make it fail (500 and 429)", async () => {
    const attacker = await gateway.createFundedKey({ credits: 5 });
    for (let round = 0; round < 4; round += 1) {
      // The two-row model falls back for it (the backup does not mind the content)...
      const fellBack = await chat(attacker.key, 'duo', `poison round ${round}`);
      expect(fellBack.statusCode, fellBack.body).toBe(200);
      // ... the single-row model relays the provider's own failures...
      const failed = await chat(attacker.key, 'solo', `poison round ${round}`);
      expect(failed.statusCode).toBe(500);
      expect(failed.headers['x-upstream-status']).toBe('500');
      const limited = await chat(attacker.key, 'solo', `flood round ${round}`);
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
      // ... and embeddings fall back too.
      expect((await embed(attacker.key, `poison round ${round}`)).statusCode).toBe(200);
    }
    expect(
      (await audited(attacker.accountId)).filter((record) =>
        record.route?.fallbacks.some((attempt) => attempt.providerId === 'primary' && attempt.status === 500),
      ),
    ).toHaveLength(8);

    for (let other = 0; other < 2; other += 1) {
      const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
      const calls = primaryCalls();
      // The same model, the single-row model sharing its row, and the embeddings: all served by the primary.
      for (const answer of [
        await chat(key, 'duo', 'hello there'),
        await chat(key, 'solo', 'hello there'),
        await embed(key, 'hello there'),
      ]) {
        expect(answer.statusCode, answer.body).toBe(200);
        expect(answer.headers['x-gateway-error-code']).toBeUndefined();
      }
      expect(primaryCalls() - calls).toBe(3);
      const records = await audited(accountId);
      expect(records).toHaveLength(3);
      for (const record of records) expect(record.route).toMatchObject({ providerId: 'primary', fallbacks: [] });
    }
    expect(await breakerStateOf(gateway, { providerId: 'primary', upstreamModel: 'gpt-4o-mini' })).toBe(0);
    expect(await breakerStateOf(gateway, { providerId: 'primary', upstreamModel: 'text-embedding-3-small' })).toBe(0);
  });

  it('moves traffic to the fallback row in a real outage, once three accounts have seen the row fail', async () => {
    primary.down = true;
    try {
      const calls = primaryCalls();
      for (let account = 0; account < 3; account += 1) {
        const { key } = await gateway.createFundedKey({ credits: 1 });
        const answer = await chat(key, 'duo', 'is anyone there');
        expect(answer.statusCode, answer.body).toBe(200);
      }
      expect(primaryCalls() - calls).toBe(3);
      expect(await breakerStateOf(gateway, { providerId: 'primary', upstreamModel: 'gpt-4o-mini' })).toBe(1);
      // Open: straight to the fallback, the primary not called.
      const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
      for (let request = 0; request < 3; request += 1)
        expect((await chat(key, 'duo', 'is anyone there')).statusCode).toBe(200);
      expect(primaryCalls() - calls).toBe(3);
      for (const record of await audited(accountId)) {
        expect(record.route).toMatchObject({
          providerId: 'backup',
          fallbacks: [{ providerId: 'primary', outcome: 'skipped', reason: 'breaker open' }],
        });
      }
    } finally {
      primary.down = false;
    }
  });

  it("relays a single-row model's own errors while its breaker is open, however many came before, and its answers once it serves", async () => {
    expect(await breakerStateOf(gateway, { providerId: 'primary', upstreamModel: 'gpt-4o-mini' })).toBe(1);
    primary.down = true;
    try {
      for (let account = 0; account < 4; account += 1) {
        const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
        for (let request = 0; request < 2; request += 1) {
          const calls = primaryCalls();
          const answer = await chat(key, 'solo', 'is anyone there');
          // The provider's own 503, its body as it came: not the gateway's GW_UPSTREAM_UNAVAILABLE.
          expect(answer.statusCode).toBe(503);
          expect(answer.headers['x-upstream-status']).toBe('503');
          expect(answer.headers['x-gateway-error-code']).toBeUndefined();
          expect(answer.headers['retry-after']).toBeUndefined();
          expect(answer.json()).toEqual({
            error: {
              message: 'The server is overloaded or not ready yet.',
              type: 'server_error',
              param: null,
              code: null,
            },
          });
          expect(primaryCalls() - calls).toBe(1);
        }
        expect(await heldNanosOf(gateway, accountId)).toBe(0n);
        expect((await audited(accountId)).map((record) => record.status)).toEqual(['failed', 'failed']);
      }
    } finally {
      primary.down = false;
    }
    // The breaker is still open (its cooldown has not passed), and the row is still the one called.
    expect(await breakerStateOf(gateway, { providerId: 'primary', upstreamModel: 'gpt-4o-mini' })).toBe(1);
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const poisoned = await chat(key, 'solo', 'poison again');
    expect(poisoned.statusCode).toBe(500);
    expect(poisoned.headers['x-upstream-status']).toBe('500');
    expect(poisoned.json()).toMatchObject({
      error: { message: 'The server had an error while processing your request.', type: 'server_error' },
    });
    const served = await chat(key, 'solo', 'back again');
    expect(served.statusCode, served.body).toBe(200);
    expect(served.json()).toMatchObject({ choices: [{ message: { content: 'Echo: back again' } }] });
  });
});
