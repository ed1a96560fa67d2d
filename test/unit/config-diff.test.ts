// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the configuration file's interpolation syntax
import { describe, expect, it } from 'vitest';
import { changesNothing, diffConfig } from '../../src/config/config-diff.ts';
import { ConfigError, parseConfig } from '../../src/config/load-config.ts';

const variables = { MAIN_KEY: 'sk-diff-start-7Hq2', ORG: 'org-diff-start-3Kd9' };

/** gateway.yaml with one keyed provider and the sandbox, then `extra` top-level sections. */
const file = ({ key = '${MAIN_KEY}', org = '${ORG}', price = 1, extra = '' } = {}) => `
providers:
  main: { protocol: openai, baseUrl: https://upstream.example/v1, apiKey: "${key}", headers: { x-org: "${org}" } }
  sandbox: { protocol: sandbox }
models:
  - id: chat
    pricing: { inputPerMTok: ${price}, outputPerMTok: 2 }
    providers: [{ provider: main, model: upstream-chat }]
  - id: echo
    providers: [{ provider: sandbox, model: echo }]
${extra}`;

const parse = (text: string) => parseConfig(text, 'gateway.yaml', variables);

describe('the diff of a reload', () => {
  it('is empty for the same file', () => {
    const diff = diffConfig(parse(file()), parse(file()));
    expect(changesNothing(diff)).toBe(true);
    expect(diff.needsRestart).toEqual([]);
  });

  it('names models added, removed and changed apart from their prices', () => {
    const next = file({ price: 3 })
      .replace(
        '  - id: echo\n    providers: [{ provider: sandbox, model: echo }]',
        '  - id: echo2\n    providers: [{ provider: sandbox, model: echo }]',
      )
      .replace('model: upstream-chat }', 'model: upstream-chat, priority: 2 }');
    const diff = diffConfig(parse(file()), parse(next));
    expect(diff.models).toEqual({ added: ['echo2'], removed: ['echo'], changed: ['chat'] });
    expect(diff.prices).toEqual([
      { modelId: 'chat', before: { inputPerMTok: 1, outputPerMTok: 2 }, after: { inputPerMTok: 3, outputPerMTok: 2 } },
    ]);
    expect(changesNothing(diff)).toBe(false);
  });

  it('names the provider settings whose credentials changed, never their values', () => {
    const diff = diffConfig(parse(file()), parse(file({ key: 'sk-diff-next-1Zx8', org: 'org-diff-next-5Wm4' })));
    expect(diff.providers).toEqual({
      added: [],
      removed: [],
      changed: [{ providerId: 'main', fields: ['apiKey', 'headers.x-org'] }],
    });
    const written = JSON.stringify(diff);
    for (const value of ['sk-diff-start-7Hq2', 'sk-diff-next-1Zx8', 'org-diff-start-3Kd9', 'org-diff-next-5Wm4'])
      expect(written).not.toContain(value);
  });

  it('names each of apiKeys added, removed or changed by its id, never its key', () => {
    const withKeys = (keys: string) =>
      file().replace('headers: { x-org: "${ORG}" } }', `headers: { x-org: "\${ORG}" }, apiKeys: [${keys}] }`);
    const diff = diffConfig(
      parse(withKeys('{ id: a, key: sk-diff-a-0001 }, { id: b, key: sk-diff-b-0002 }')),
      parse(withKeys('{ id: a, key: sk-diff-a-0001, weight: 4 }, { id: c, key: sk-diff-c-0003 }')),
    );
    expect(diff.providers.changed).toEqual([{ providerId: 'main', fields: ['apiKeys.a', 'apiKeys.b', 'apiKeys.c'] }]);
    expect(JSON.stringify(diff)).not.toMatch(/sk-diff-[abc]/);
  });

  it("names settings read only at start as gateway.yaml names them, a metrics token's change without its value", () => {
    const next = file({
      extra: [
        'accounts: { sessionTtlHours: 2 }',
        'ledger: { leaseMaxUsd: 3 }',
        'telemetry: { metricsToken: metrics-diff-9Lp2 }',
        'upstream: { maxConnectionsPerOrigin: 8, breakerFailures: 2, connectTimeoutMs: 500 }',
      ].join('\n'),
    });
    const diff = diffConfig(parse(file()), parse(next));
    expect(diff.needsRestart).toEqual([
      'accounts.sessionTtlHours',
      'ledger.leaseMaxUsd',
      'upstream.maxConnectionsPerOrigin',
      'telemetry.metricsToken',
    ]);
    expect(diff.settings).toEqual(['upstream.breakerFailures']);
    // The connect time-out is a setting of every provider, reloaded with them.
    expect(diff.providers.changed).toEqual([
      { providerId: 'main', fields: ['connectTimeoutMs'] },
      { providerId: 'sandbox', fields: ['connectTimeoutMs'] },
    ]);
    expect(JSON.stringify(diff)).not.toContain('metrics-diff-9Lp2');
  });
});

describe('a refused gateway.yaml', () => {
  it('names every problem the checks after the schema find, not only the first', () => {
    const text = file({
      extra: 'ledger: { heartbeatSeconds: 10, orphanHoldSeconds: 15 }\nserver: { trustProxy: [not-an-address] }',
    }).replace('provider: sandbox, model: echo', 'provider: nowhere, model: echo');
    let problems: readonly string[] = [];
    try {
      parse(text);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems = error.problems;
    }
    expect(problems).toEqual([
      'at models[1].providers[0].provider: unknown provider "nowhere"',
      'at ledger.orphanHoldSeconds: must be at least twice ledger.heartbeatSeconds (10)',
      'at server.trustProxy[0]: not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal: "not-an-address"',
    ]);
  });
});
