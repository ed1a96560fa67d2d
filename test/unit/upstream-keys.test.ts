import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.ts';
import { Secret } from '../../src/domain/secret.ts';
import { UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { ProviderBreakers } from '../../src/gateway/provider-breakers.ts';
import { dispatchWithFallback, type Resilience } from '../../src/gateway/upstream-dispatch.ts';
import { UpstreamKeys, type UpstreamKey } from '../../src/gateway/upstream-keys.ts';
import { RateLimitHeadroom } from '../../src/providers/shared/rate-limit-headroom.ts';

const row = { providerId: 'openai', upstreamModel: 'gpt-4o-mini' };
const { providers } = parseConfig(
  [
    'providers:',
    '  openai:',
    '    protocol: openai',
    '    baseUrl: https://api.example.com/v1',
    '    apiKeys:',
    '      - { id: one, key: sk-one-0000000000001111, weight: 1 }',
    '      - { id: two, key: sk-two-0000000000002222, weight: 3 }',
    '      - { id: off, key: sk-off-0000000000003333, weight: 0 }',
    '  single: { protocol: openai, baseUrl: "https://api.example.com/v1", apiKey: sk-single-000000004444 }',
    '  keyless: { protocol: openai, baseUrl: "https://api.example.com/v1" }',
    'models: []',
    '',
  ].join('\n'),
  'test.yaml',
  {},
);
const breakerSettings = { failures: 2, minAccounts: 1, cooldownMs: 60_000 };
const down = () => Promise.reject(new UpstreamUnreachableError('connect', 'connection refused'));

/** Counts the keys chosen over many draws. */
function countChoices(keys: UpstreamKeys, breakers: ProviderBreakers, draws = 4000): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let draw = 0; draw < draws; draw += 1) {
    const key = keys.choose(row, breakers)!;
    counts[key.id] = (counts[key.id] ?? 0) + 1;
  }
  return counts;
}

describe('upstream keys of a provider', () => {
  it('reads apiKeys from gateway.yaml beside apiKey, and the first key stands for the provider', () => {
    const openai = providers.get('openai')!;
    expect(openai.keys.map((key) => [key.id, key.weight])).toEqual([
      ['one', 1],
      ['two', 3],
      ['off', 0],
    ]);
    expect(openai.active).toBe(true);
    expect(openai.apiKey.reveal()).toBe('sk-one-0000000000001111');
    expect(() =>
      parseConfig(
        'providers:\n  p:\n    protocol: openai\n    baseUrl: https://x.example\n    apiKey: k\n    apiKeys: [{ id: default, key: k2 }]\nmodels: []\n',
        'dup.yaml',
        {},
      ),
    ).toThrow(/duplicate key id "default"/);
  });

  it('picks a key by weight, and never one of weight 0', () => {
    const keys = new UpstreamKeys(providers);
    const counts = countChoices(keys, new ProviderBreakers(breakerSettings, () => undefined));
    expect(counts.off).toBeUndefined();
    // Expected 1000 and 3000.
    expect(counts.one).toBeGreaterThan(700);
    expect(counts.one).toBeLessThan(1300);
    expect(counts.two).toBeGreaterThan(2700);
  });

  it('picks by the randomness given: the point within a key’s share', () => {
    const breakers = new ProviderBreakers(breakerSettings, () => undefined);
    expect(new UpstreamKeys(providers, () => 0.2).choose(row, breakers)?.id).toBe('one');
    expect(new UpstreamKeys(providers, () => 0.3).choose(row, breakers)?.id).toBe('two');
  });

  it('never shows more than the last 4 characters of a key, and prints no key', () => {
    const keys = new UpstreamKeys(providers);
    const ring = keys.keysOf('openai');
    expect(ring.map((key) => key.ending)).toEqual(['1111', '2222', '3333']);
    const printed = JSON.stringify(ring) + String(ring[0]!.target.apiKey);
    for (const secret of ['sk-one-0000000000001111', 'sk-two-0000000000002222']) expect(printed).not.toContain(secret);
  });

  it("one key's breaker opening does not stop the other: requests go on with the other key", async () => {
    const breakers = new ProviderBreakers(breakerSettings, () => undefined);
    const keys = new UpstreamKeys(providers);
    await breakers.run({ row, keyId: 'one', accountId: 'acct_a' }, () => Promise.resolve('served'));
    for (let failure = 0; failure < 2; failure += 1)
      await expect(breakers.run({ row, keyId: 'two', accountId: 'acct_a' }, down)).rejects.toBeInstanceOf(
        UpstreamUnreachableError,
      );
    expect(breakers.available(row, 'two')).toBe(false);
    expect(breakers.available(row, 'one')).toBe(true);
    expect(keys.available(row, breakers)).toBe(true);
    expect(countChoices(keys, breakers, 500)).toEqual({ one: 500 });
    expect(breakers.keyStates('openai')).toEqual(
      new Map([
        ['one', 'closed'],
        ['two', 'open'],
      ]),
    );
    // The row as metrics see it serves while one of its keys does.
    expect(breakers.states()).toEqual([{ ...row, state: 'closed' }]);
  });

  it('dispatch sends each attempt with the chosen key, through that key’s breaker, and keeps its id', async () => {
    const breakers = new ProviderBreakers(breakerSettings, () => undefined);
    const keys = new UpstreamKeys(providers, () => 0.9);
    const resilience: Resilience = {
      breakers,
      keys,
      events: { fallback: () => undefined, retry: () => undefined },
      retryBudgetMs: 0,
      maxRetries: 0,
      traced: false,
    };
    const sentWith: string[] = [];
    const attempt = (_row: typeof row, key: UpstreamKey | undefined) => {
      sentWith.push(key!.target.apiKey.reveal());
      return key!.id === 'two' ? down() : Promise.resolve('served');
    };
    const options = { modelId: 'm', accountId: 'acct_a', rows: [row], resilience, mayContinue: () => true, attempt };
    // Key two fails twice (its breaker opens); the third request goes with key one.
    for (let request = 0; request < 2; request += 1)
      await expect(dispatchWithFallback({ ...options, attempts: [] })).rejects.toBeInstanceOf(UpstreamUnreachableError);
    const attempts: never[] = [];
    const served = await dispatchWithFallback({ ...options, attempts });
    expect(served.key?.id).toBe('one');
    expect(sentWith).toEqual(['sk-two-0000000000002222', 'sk-two-0000000000002222', 'sk-one-0000000000001111']);
  });

  it('skips a key whose headroom is exhausted until its reset, and uses it again after', () => {
    let now = 1_000_000;
    const keys = new UpstreamKeys(providers, Math.random, () => now);
    const breakers = new ProviderBreakers(breakerSettings, () => undefined);
    const two = keys.keysOf('openai')[1]!;
    two.headroom.observe({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '6m0s' }, 200, now);
    expect(two.headroom.view(now)).toMatchObject({ remainingRequests: 0 });
    expect(countChoices(keys, breakers, 300)).toEqual({ one: 300 });
    now += 6 * 60_000 + 1;
    expect(countChoices(keys, breakers, 300).two).toBeGreaterThan(100);
  });

  it('with every key exhausted, still sends (the upstream says whether it has room)', () => {
    const now = 1_000_000;
    const keys = new UpstreamKeys(providers, Math.random, () => now);
    for (const key of keys.keysOf('openai'))
      key.headroom.observe({ 'anthropic-ratelimit-tokens-remaining': '0' }, 200, now);
    expect(keys.choose(row, new ProviderBreakers(breakerSettings, () => undefined))?.id).toMatch(/^(one|two)$/);
  });

  it('a runtime key joins the provider’s keys, leaves when removed, and a chosen key is kept to its end', () => {
    const keys = new UpstreamKeys(providers, () => 0.999);
    const breakers = new ProviderBreakers(breakerSettings, () => undefined);
    const runtime = {
      id: 'pk_new',
      providerId: 'openai',
      label: 'rotation',
      weight: 100,
      active: true,
      apiKey: new Secret('sk-new-0000000000005555'),
    };
    keys.replaceRuntime([runtime]);
    const chosen = keys.choose(row, breakers)!;
    expect(chosen.id).toBe('pk_new');
    expect(chosen.source).toBe('runtime');
    keys.replaceRuntime([]);
    expect(keys.keysOf('openai').map((key) => key.id)).toEqual(['one', 'two', 'off']);
    // The attempt that chose it still holds its settings and secret.
    expect(chosen.target.apiKey.reveal()).toBe('sk-new-0000000000005555');
    keys.replaceRuntime([{ ...runtime, active: false }]);
    expect(countChoices(keys, breakers, 200).pk_new).toBeUndefined();
  });

  it('a provider with its single apiKey has one unnamed key: records keep no key id', () => {
    const keys = new UpstreamKeys(providers);
    const [only] = keys.keysOf('single');
    expect(only).toMatchObject({ id: 'default', recorded: false, active: true });
    expect(keys.served(providers.get('single')!)).toBe(providers.get('single'));
  });

  it('a provider gateway.yaml gives no key has only its runtime keys, and is served while one of them is active', () => {
    const keys = new UpstreamKeys(providers);
    const breakers = new ProviderBreakers(breakerSettings, () => undefined);
    const keyless = providers.get('keyless')!;
    const keylessRow = { providerId: 'keyless', upstreamModel: 'gpt-4o-mini' };
    expect(keyless.active).toBe(false);
    expect(keys.keysOf('keyless')).toEqual([]);
    expect(keys.choose(keylessRow, breakers)).toBeUndefined();
    expect(keys.served(keyless)).toBe(keyless);
    const runtime = {
      id: 'pk_only',
      providerId: 'keyless',
      label: null,
      weight: 1,
      active: false,
      apiKey: new Secret('sk-keyless-00000000006666'),
    };
    keys.replaceRuntime([runtime]);
    expect(keys.served(keyless).active).toBe(false);
    keys.replaceRuntime([{ ...runtime, active: true }]);
    const served = keys.served(keyless);
    expect(served.active).toBe(true);
    expect(served.apiKey.reveal()).toBe('sk-keyless-00000000006666');
    // Its one key, named in records; never a key of its own with nothing in it.
    expect(keys.keysOf('keyless').map((key) => [key.id, key.source, key.recorded])).toEqual([
      ['pk_only', 'runtime', true],
    ]);
    expect(keys.choose(keylessRow, breakers)?.target.apiKey.reveal()).toBe('sk-keyless-00000000006666');
    keys.replaceRuntime([]);
    expect(keys.served(keyless).active).toBe(false);
  });
});

describe('rate-limit headroom', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads OpenAI, Anthropic and generic headers', () => {
    const openai = new RateLimitHeadroom();
    openai.observe({ 'x-ratelimit-remaining-requests': '59', 'x-ratelimit-remaining-tokens': '149984' }, 200, now);
    expect(openai.view(now)).toEqual({
      remainingRequests: 59,
      remainingTokens: 149984,
      observedAt: '2026-01-01T00:00:00.000Z',
    });
    const anthropic = new RateLimitHeadroom();
    anthropic.observe(
      { 'anthropic-ratelimit-requests-remaining': '0', 'anthropic-ratelimit-requests-reset': '2026-01-01T00:00:30Z' },
      200,
      now,
    );
    expect(anthropic.exhausted(now + 29_000)).toBe(true);
    expect(anthropic.exhausted(now + 30_000)).toBe(false);
    const generic = new RateLimitHeadroom();
    generic.observe({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now + 5_000) }, 429, now);
    expect(generic.exhausted(now + 4_000)).toBe(true);
  });

  it('a 429 passes the key over for its retry-after; an answer with room clears it', () => {
    const headroom = new RateLimitHeadroom();
    headroom.observe({ 'retry-after': '20' }, 429, now);
    expect(headroom.exhausted(now + 19_000)).toBe(true);
    headroom.observe({ 'x-ratelimit-remaining-requests': '10' }, 200, now + 1);
    expect(headroom.exhausted(now + 2)).toBe(false);
  });

  it('ignores answers without rate-limit headers, and numbers that are not counts', () => {
    const headroom = new RateLimitHeadroom();
    headroom.observe({ 'content-type': 'application/json' }, 200, now);
    expect(headroom.view(now)).toEqual({});
    headroom.observe({ 'x-ratelimit-remaining-requests': 'lots' }, 200, now);
    expect(headroom.exhausted(now)).toBe(false);
  });
});
