// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the configuration file's interpolation syntax
import { describe, expect, it } from 'vitest';
import { readEnvironment, EnvironmentError } from '../../src/config/environment.ts';
import { ConfigError, loadConfigFile, parseConfig } from '../../src/config/load-config.ts';
import { resolveSecret } from '../../src/config/secret.ts';
import { Catalog } from '../../src/catalog/catalog.ts';
import { shippedConfigPath } from '../support/test-gateway.ts';

const base = `
providers:
  main:
    protocol: openai
    baseUrl: \${MAIN_URL:-https://upstream.example/v1}
    apiKey: \${MAIN_KEY}
  sandbox:
    protocol: sandbox
models:
  - id: chat
    pricing: { inputPerMTok: 1, outputPerMTok: 2 }
    providers:
      - { provider: main, model: upstream-chat }
`;

function problemOf(text: string, variables: Record<string, string> = {}): string {
  try {
    parseConfig(text, 'gateway.yaml', variables);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected the configuration to be refused');
}

describe('gateway.yaml', () => {
  it('refuses a price that is not a whole number of nano-USD, naming it, and takes whole ones', () => {
    const priced = (pricing: string) =>
      `providers:\n  sandbox: { protocol: sandbox }\nmodels:\n  - id: m\n    pricing: ${pricing}\n    providers: [{ provider: sandbox, model: image }]\n`;
    expect(problemOf(priced('{ perImage: 1.5e-9 }'))).toBe(
      'gateway.yaml: at models[0].pricing.perImage: 1.5e-9 USD is not a whole number of nano-USD (0.000000001)',
    );
    expect(problemOf(priced('{ perImage: 1e-12 }'))).toContain('at models[0].pricing.perImage: 1e-12 USD');
    expect(problemOf(priced('{ perVideoSecondByResolution: { 480p: 0.05, 720p: 0.0000000004 } }'))).toContain(
      'at models[0].pricing.perVideoSecondByResolution.720p: 4e-10 USD',
    );
    expect(problemOf(priced('{ inputPerMTok: 0.1234567891 }'))).toContain('at models[0].pricing.inputPerMTok');
    for (const whole of ['{ perImage: 0.03 }', '{ perImage: 0 }', '{ inputPerMTok: 0.123456789, outputPerMTok: 1e-9 }'])
      expect(() => parseConfig(priced(whole), 'gateway.yaml', {})).not.toThrow();
  });

  it('interpolates ${VAR} and ${VAR:-default}, and a provider without a key is inactive', () => {
    const inactive = parseConfig(base, 'gateway.yaml', {});
    expect(inactive.providers.get('main')).toMatchObject({ baseUrl: 'https://upstream.example/v1', active: false });
    expect(inactive.providers.get('main')?.apiKey.reveal()).toBe('');
    expect(inactive.providers.get('sandbox')?.active).toBe(true);
    const active = parseConfig(base, 'gateway.yaml', { MAIN_KEY: 'sk-1', MAIN_URL: 'http://127.0.0.1:9/v1/' });
    expect(active.providers.get('main')).toMatchObject({ baseUrl: 'http://127.0.0.1:9/v1', active: true });
    expect(active.providers.get('main')?.apiKey.reveal()).toBe('sk-1');
  });

  it('names the file, the path inside it and the problem', () => {
    expect(problemOf(base.replace('inputPerMTok: 1', 'inputPerMTok: -1'))).toMatch(
      /^gateway\.yaml: at models\[0\]\.pricing\.inputPerMTok: must be >= 0/,
    );
    expect(problemOf(base.replace('protocol: openai', 'protocol: telnet'))).toMatch(
      /^gateway\.yaml: at providers\.main\.protocol/,
    );
    expect(problemOf(base.replace('provider: main,', 'provider: missing,'))).toBe(
      'gateway.yaml: at models[0].providers[0].provider: unknown provider "missing"',
    );
    expect(problemOf(`${base}  - id: chat\n    providers: [{ provider: main, model: x }]\n`)).toBe(
      'gateway.yaml: at models[1].id: duplicate model id "chat"',
    );
    expect(problemOf(base.replace('${MAIN_URL:-https://upstream.example/v1}', 'ftp://x'))).toContain(
      'at providers.main.baseUrl: not an http(s) URL',
    );
    expect(problemOf(`${base}unknownSection: 1\n`)).toBe('gateway.yaml: at unknownSection: unknown field');
    expect(problemOf('providers: [\n')).toContain('gateway.yaml: invalid YAML');
    expect(problemOf(`${base}ledger: { heartbeatSeconds: 10, orphanHoldSeconds: 15 }\n`)).toBe(
      'gateway.yaml: at ledger.orphanHoldSeconds: must be at least twice ledger.heartbeatSeconds (10)',
    );
    expect(problemOf(base.replace('apiKey: ${MAIN_KEY}', 'apiKey: ${MAIN KEY}'))).toContain(
      'malformed ${VAR} reference',
    );
    const badRange = base.replace(
      '{ provider: main, model: upstream-chat }',
      '{ provider: main, model: upstream-chat, capabilities: { params: { temperature: { type: range, min: 2, max: 1 } } } }',
    );
    expect(problemOf(badRange)).toContain(
      'at models[0].providers[0].capabilities.params.temperature: min is greater than max',
    );
  });

  it('refuses aliases it cannot resolve, too many of them and one inside its own anchor, naming each', () => {
    expect(problemOf(base.replace('pricing: { inputPerMTok: 1, outputPerMTok: 2 }', 'pricing: *prices'))).toBe(
      'gateway.yaml: invalid YAML: alias *prices names no anchor set before it',
    );
    const laughs = [
      `${base}x1: &x1 [a, a, a, a, a, a, a, a, a, a]`,
      `x2: &x2 [${Array(10).fill('*x1').join(', ')}]`,
      `x3: [${Array(20).fill('*x2').join(', ')}]`,
    ].join('\n');
    expect(problemOf(laughs)).toBe('gateway.yaml: invalid YAML: aliases expand past 100 values');
    const loop = base.replace(
      '{ provider: main, model: upstream-chat }',
      '&row { provider: main, model: upstream-chat, capabilities: { params: *row } }',
    );
    expect(problemOf(loop)).toBe(
      'gateway.yaml: at models[0].providers[0].capabilities.params: an alias inside its own anchor',
    );
    // An alias of an anchor set before it is plain YAML, used as many times as the file likes.
    const shared = base
      .replace(
        'pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
        'pricing: &prices { inputPerMTok: 1, outputPerMTok: 2 }',
      )
      .concat('  - id: chat-too\n    pricing: *prices\n    providers: [{ provider: main, model: other }]\n');
    expect(parseConfig(shared, 'gateway.yaml', {}).models[1]?.pricing).toEqual({ inputPerMTok: 1, outputPerMTok: 2 });
  });

  it('loads the shipped file: with no keys only the sandbox models are active', () => {
    const config = loadConfigFile(shippedConfigPath, {});
    const ids = new Catalog(config).list().map((model) => model.modelId);
    expect(ids.sort()).toEqual([
      'sandbox-echo',
      'sandbox-embedding',
      'sandbox-embedding-multimodal',
      'sandbox-image',
      'sandbox-image-layers',
      'sandbox-video',
      'seed-audio-1.0-multilingual',
      'seed-tts-1.0',
      'seed-tts-2.0',
    ]);
    const withOpenAi = new Catalog(loadConfigFile(shippedConfigPath, { OPENAI_API_KEY: 'sk-test' }));
    expect(withOpenAi.find('gpt-4o-mini')?.rows.map((row) => row.providerId)).toEqual(['openai']);
    expect(withOpenAi.find('claude-sonnet-4-5')).toBeUndefined();
    // Video models route to the one routing provider.
    const withRouter = new Catalog(loadConfigFile(shippedConfigPath, { OPENROUTER_API_KEY: 'sk-or-test' }));
    expect(withRouter.find('veo-3.1')?.rows.map((row) => [row.providerId, row.upstreamModel])).toEqual([
      ['openrouter', 'google/veo-3.1'],
    ]);
  });

  it('checks the media and jobs sections: S3 needs its bucket, an http(s) endpoint; defaults otherwise', () => {
    const base = 'providers: {}\nmodels: []\n';
    expect(problemOf(`${base}media: { store: s3 }`)).toContain('at media.s3: required when media.store is s3');
    expect(problemOf(`${base}media: { store: s3, s3: { bucket: media, endpoint: "ftp://x" } }`)).toContain(
      'at media.s3.endpoint: not an http(s) URL',
    );
    expect(problemOf(`${base}jobs: { claimSeconds: 1 }`)).toContain('jobs.claimSeconds');
    // The key's name in configuration files of earlier releases is still read.
    expect(parseConfig(`${base}jobs: { leaseSeconds: 7 }`, 'test.yaml', {}).jobs.claimSeconds).toBe(7);
    expect(parseConfig(`${base}jobs: { claimSeconds: 8, leaseSeconds: 7 }`, 'test.yaml', {}).jobs.claimSeconds).toBe(8);
    expect(problemOf(`${base}media: { retentionDays: -1 }`)).toContain('media.retentionDays');
    // A webhook claim that could run out while its attempt still waits would let two processes send it at once.
    expect(problemOf(`${base}webhooks: { claimSeconds: 5, timeoutMs: 5000 }`)).toContain(
      'at webhooks.claimSeconds: must be longer than webhooks.timeoutMs (5000 ms)',
    );
    expect(parseConfig(`${base}webhooks: { maxAttempts: 2 }`, 'test.yaml', {}).webhooks).toEqual({
      maxAttempts: 2,
      timeoutMs: 10_000,
      retryBaseMs: 5_000,
      claimSeconds: 60,
      concurrency: 8,
      idlePollMs: 1_000,
      retentionDays: 30,
    });
    const defaults = parseConfig(base, 'test.yaml', {});
    expect(defaults.media).toMatchObject({ store: 'fs', s3: undefined, linkTtlSeconds: 3600, retentionDays: 30 });
    expect(defaults.jobs).toMatchObject({
      concurrency: 16,
      claimSeconds: 30,
      maxAttempts: 3,
      maxJobSeconds: 900,
      syncWaitMs: 60_000,
      taskPollMs: 2_000,
    });
    const s3 = parseConfig(
      `${base}media: { store: s3, s3: { bucket: media, accessKeyId: "", secretAccessKey: "" } }`,
      'test.yaml',
      {},
    );
    expect(s3.media.s3).toEqual({
      bucket: 'media',
      region: 'us-east-1',
      endpoint: undefined,
      accessKeyId: undefined,
      secretAccessKey: undefined,
      forcePathStyle: false,
      prefix: '',
    });
  });

  it('ships image models priced per image or by quality, with layer decomposition only where the spec puts it', () => {
    const catalog = new Catalog(loadConfigFile(shippedConfigPath, { OPENAI_API_KEY: 'k', ARK_API_KEY: 'k' }));
    const images = catalog.list({ outputModalities: ['image'] });
    expect(images.map((model) => model.modelId).sort()).toEqual([
      'dola-seedream-5-0-pro',
      'gpt-image-1',
      'gpt-image-1-mini',
      'sandbox-image',
      'sandbox-image-layers',
      'seedream-4-0',
      'seedream-4-5',
    ]);
    for (const model of images)
      expect(model.pricing?.outputImageNanos ?? model.pricing?.outputImageByQualityNanos).toBeDefined();
    const layered = images
      .filter((model) => model.rows[0]?.capabilities?.image?.params?.layerDecomposition)
      .map((model) => model.modelId);
    expect(layered.sort()).toEqual(['dola-seedream-5-0-pro', 'sandbox-image-layers']);
    expect(catalog.find('seedream-4-0')?.pricing?.outputImageNanos).toBe(30_000_000n);
  });

  it('ships video models priced per second by resolution, and checks the per-second price keys', () => {
    const catalog = new Catalog(loadConfigFile(shippedConfigPath, { ARK_API_KEY: 'k' }));
    const videos = catalog.list({ outputModalities: ['video'] });
    expect(videos.map((model) => model.modelId).sort()).toEqual([
      'sandbox-video',
      'seedance-1-0-lite',
      'seedance-1-0-pro',
    ]);
    expect(catalog.find('seedance-1-0-pro')?.pricing?.videoOutputSecondByResolutionNanos).toEqual({
      '480p': 25_000_000n,
      '720p': 54_000_000n,
      '1080p': 123_000_000n,
    });
    const model = (pricing: string) =>
      `providers: { sandbox: { protocol: sandbox } }\nmodels:\n  - { id: m, outputModalities: [video], pricing: ${pricing}, providers: [{ provider: sandbox, model: video }] }\n`;
    expect(problemOf(model('{ perVideoSecondByResolution: { 8k: 1 } }'))).toContain('perVideoSecondByResolution');
    expect(problemOf(model('{ perVideoSecondByResolution: {} }'))).toContain('perVideoSecondByResolution');
    expect(problemOf(model('{ perVideoSecond: -1 }'))).toContain('perVideoSecond');
    expect(problemOf(model('{ perAudioSecond: .inf }'))).toContain('perAudioSecond');
  });

  it('gives audio, PDF and video embedding inputs only to the multimodal embedding models (two upstream, one sandbox)', () => {
    const everyKey = {
      OPENAI_API_KEY: 'k',
      ANTHROPIC_API_KEY: 'k',
      GEMINI_API_KEY: 'k',
      OPENROUTER_API_KEY: 'k',
      ARK_API_KEY: 'k',
      SPEECH_API_KEY: 'k',
    };
    const embedding = new Catalog(loadConfigFile(shippedConfigPath, everyKey)).list({
      outputModalities: ['embedding'],
    });
    const media = embedding.filter((model) => {
      const parts = (model.rows[0]?.capabilities?.inputs?.parts ?? []) as string[];
      return ['audioBase64', 'audioUrl', 'fileBase64', 'videoBase64'].some((part) => parts.includes(part));
    });
    expect(media.map((model) => model.modelId).sort()).toEqual([
      'gemini-embedding-2',
      'gemini-embedding-2-preview',
      'sandbox-embedding-multimodal',
    ]);
    expect(embedding.length).toBeGreaterThan(media.length);
  });

  it('refuses an embedding part type it does not know', () => {
    const config = base.replace(
      '{ provider: main, model: upstream-chat }',
      '{ provider: main, model: upstream-chat, capabilities: { inputs: { parts: [text, hologram] } } }',
    );
    expect(problemOf(config)).toContain('capabilities.inputs.parts');
  });

  it('fetches remote media only from public addresses unless the file says otherwise', () => {
    expect(parseConfig(base, 'gateway.yaml', {}).remoteMedia).toEqual({
      timeoutMs: 15_000,
      maxBytes: 32 * 1024 * 1024,
      maxRequestBytes: 64 * 1024 * 1024,
      allowPrivateAddresses: false,
    });
    expect(
      parseConfig(`${base}remoteMedia: { allowPrivateAddresses: true, maxBytes: 2048 }\n`, 'gateway.yaml', {})
        .remoteMedia,
    ).toMatchObject({ allowPrivateAddresses: true, maxBytes: 2048 });
    expect(problemOf(`${base}remoteMedia: { timeoutMs: 0 }\n`)).toContain('at remoteMedia.timeoutMs');
    expect(loadConfigFile(shippedConfigPath, {}).remoteMedia.allowPrivateAddresses).toBe(false);
  });

  it('reads the credit lease settings, refusing amounts that are negative, not finite or not a number', () => {
    const defaults = parseConfig(base, 'gateway.yaml', {});
    expect(defaults.ledger).toMatchObject({ leaseMaxNanos: 1_000_000_000n, leaseIdleMs: 2_000 });
    expect(
      parseConfig(`${base}ledger: { leaseMaxUsd: 0, leaseIdleMs: 500 }\n`, 'gateway.yaml', {}).ledger,
    ).toMatchObject({ leaseMaxNanos: 0n, leaseIdleMs: 500 });
    for (const value of ['-1', '.inf', '-.inf', '.nan', '"1"', '1e300'])
      expect(problemOf(`${base}ledger: { leaseMaxUsd: ${value} }\n`)).toContain('ledger.leaseMaxUsd');
    for (const value of ['0', '1.5', '-5', '.inf'])
      expect(problemOf(`${base}ledger: { leaseIdleMs: ${value} }\n`)).toContain('ledger.leaseIdleMs');
  });

  it("reads how long a read of an account's money waits for this process's settlements", () => {
    expect(parseConfig(base, 'gateway.yaml', {}).ledger.settlementWaitMs).toBe(500);
    expect(parseConfig(`${base}ledger: { settlementWaitMs: 0 }\n`, 'gateway.yaml', {}).ledger.settlementWaitMs).toBe(0);
    for (const value of ['-1', '1.5', '60001', '"5"'])
      expect(problemOf(`${base}ledger: { settlementWaitMs: ${value} }\n`)).toContain('ledger.settlementWaitMs');
  });

  it('reads how far past its hold media billed on delivered seconds may be charged: 1.1 times by default, from 1 to 10', () => {
    expect(parseConfig(base, 'gateway.yaml', {}).limits).toEqual({ maxDurationOverrun: 1.1 });
    expect(parseConfig(`${base}limits: { maxDurationOverrun: 1 }\n`, 'gateway.yaml', {}).limits).toEqual({
      maxDurationOverrun: 1,
    });
    for (const value of ['0.9', '11', '.inf', '.nan', '"2"'])
      expect(problemOf(`${base}limits: { maxDurationOverrun: ${value} }\n`)).toContain('limits.maxDurationOverrun');
  });

  it('reads upstream time limits, the stream event limit and per-model output limits, with defaults', () => {
    const defaults = parseConfig(base, 'gateway.yaml', {});
    expect([...defaults.providers.values()][0]).toMatchObject({
      timeoutMs: 600_000,
      firstByteTimeoutMs: 300_000,
      connectTimeoutMs: 10_000,
      maxEventCharacters: 8 * 1024 * 1024,
    });
    const tuned = parseConfig(
      `${base}upstream: { connectTimeoutMs: 500, maxEventCharacters: 4096 }\n`,
      'gateway.yaml',
      {},
    );
    expect([...tuned.providers.values()][0]).toMatchObject({ connectTimeoutMs: 500, maxEventCharacters: 4096 });
    expect(defaults.upstream.maxConnectionsPerOrigin).toBe(4096);
    expect(
      parseConfig(`${base}upstream: { maxConnectionsPerOrigin: 64 }\n`, 'gateway.yaml', {}).upstream
        .maxConnectionsPerOrigin,
    ).toBe(64);
    expect(problemOf(`${base}upstream: { maxEventCharacters: 10 }\n`)).toContain('at upstream.maxEventCharacters');
    const shipped = loadConfigFile(shippedConfigPath, {});
    const textModels = shipped.models.filter((model) => (model.outputModalities ?? ['text']).includes('text'));
    expect(textModels.length).toBeGreaterThan(5);
    expect(textModels.every((model) => (model.limits?.maxOutputTokens ?? 0) >= 4096)).toBe(true);
  });

  it('reads the breaker and retry-after settings and the telemetry section, with defaults', () => {
    const defaults = parseConfig(base, 'gateway.yaml', {});
    expect(defaults.upstream).toMatchObject({
      breakerFailures: 5,
      breakerCooldownMs: 30_000,
      retryBudgetMs: 2_000,
      maxRetries: 1,
    });
    expect(defaults.telemetry).toEqual({
      metrics: true,
      metricsToken: undefined,
      otlpEndpoint: undefined,
      serviceName: 'model-gateway',
    });
    const tuned = parseConfig(
      `${base}upstream: { breakerFailures: 2, breakerCooldownMs: 1000, retryBudgetMs: 0, maxRetries: 0 }\ntelemetry: { metrics: false, metricsToken: " t0k3n ", tracing: { otlpEndpoint: "http://127.0.0.1:4318", serviceName: gw } }\n`,
      'gateway.yaml',
      {},
    );
    expect(tuned.upstream).toMatchObject({
      breakerFailures: 2,
      breakerCooldownMs: 1000,
      retryBudgetMs: 0,
      maxRetries: 0,
    });
    expect(tuned.telemetry).toMatchObject({ metrics: false, otlpEndpoint: 'http://127.0.0.1:4318', serviceName: 'gw' });
    expect(tuned.telemetry.metricsToken?.reveal()).toBe('t0k3n');
    // An unset variable leaves tracing off rather than pointing it at nothing.
    expect(
      parseConfig(
        `${base}telemetry: { tracing: { otlpEndpoint: "\${OTEL_EXPORTER_OTLP_ENDPOINT:-}" } }\n`,
        'gateway.yaml',
        {},
      ).telemetry.otlpEndpoint,
    ).toBeUndefined();
    expect(problemOf(`${base}upstream: { breakerFailures: 0 }\n`)).toContain('at upstream.breakerFailures');
    expect(problemOf(`${base}upstream: { retryBudgetMs: -1 }\n`)).toContain('at upstream.retryBudgetMs');
    expect(problemOf(`${base}telemetry: { tracing: { otlpEndpoint: "collector:4318" } }\n`)).toContain(
      'at telemetry.tracing.otlpEndpoint',
    );
    expect(problemOf(`${base}telemetry: { logs: true }\n`)).toContain('telemetry');
  });

  it('has the documented input limits and abuse limits, and refuses headers allowed longer than the whole request', () => {
    const config = parseConfig(base, 'gateway.yaml', {});
    expect(config.server).toMatchObject({
      headersTimeoutMs: 30_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 72_000,
      maxJsonDepth: 64,
      trustProxy: [],
    });
    const proxied = parseConfig(
      `${base}server: { trustProxy: [" 10.0.0.0/8 ", 172.16.0.1, "fd00::/8", uniquelocal, loopback] }\n`,
      'gateway.yaml',
      {},
    );
    expect(proxied.server.trustProxy).toEqual(['10.0.0.0/8', '172.16.0.1', 'fd00::/8', 'uniquelocal', 'loopback']);
    for (const wrong of ['nginx', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/8', '10.0.0.0/', '300.1.1.1', '*']) {
      expect(problemOf(`${base}server: { trustProxy: ["${wrong}"] }\n`), wrong).toContain('at server.trustProxy[0]');
    }
    expect(config.accounts).toMatchObject({
      selfSignup: true,
      loginFailuresPerEmail: 10,
      loginFailuresPerAddress: 50,
      signupsPerAddress: 20,
      throttleWindowSeconds: 900,
      throttleMaxEntries: 100_000,
    });
    const shipped = loadConfigFile(shippedConfigPath, {});
    expect({ ...shipped.server, ...shipped.accounts }).toMatchObject({
      ...config.server,
      ...config.accounts,
      signupCreditsUsd: 1,
    });
    expect(problemOf(`${base}server:\n  headersTimeoutMs: 5000\n  requestTimeoutMs: 1000\n`)).toBe(
      'gateway.yaml: at server.headersTimeoutMs: must not be greater than server.requestTimeoutMs (1000)',
    );
    expect(problemOf(`${base}accounts:\n  selfSignup: maybe\n`)).toContain('accounts.selfSignup');
    expect(problemOf(`${base}accounts:\n  signupCredits: 1e-12\n`)).toBe(
      'gateway.yaml: at accounts.signupCredits: must be 0 or at least one nano-USD (0.000000001)',
    );
  });

  it('refuses a missing file with its path', () => {
    expect(() => loadConfigFile('/nonexistent/gateway.yaml', {})).toThrow(/\/nonexistent\/gateway\.yaml: cannot read/);
  });
});

describe('environment', () => {
  it('has the documented defaults', () => {
    const environment = readEnvironment({});
    expect(environment).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: undefined,
      adminToken: undefined,
      logLevel: 'info',
      publicBaseUrl: 'http://127.0.0.1:8080',
    });
  });

  it('requires a shared secret with PostgreSQL where the secret is used, and refuses nonsense', () => {
    // Read without one (`gateway migrate` uses none), the environment is refused by whatever asks for the secret.
    const withoutSecret = readEnvironment({ DATABASE_URL: 'postgres://localhost/db' });
    expect(() => resolveSecret(withoutSecret)).toThrow(EnvironmentError);
    expect(() => resolveSecret(withoutSecret)).toThrow('GATEWAY_SECRET is required when DATABASE_URL is set');
    expect(() => readEnvironment({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => readEnvironment({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
    expect(() => readEnvironment({ GATEWAY_SECRET: 'short' })).toThrow(/at least 32/);
    expect(
      readEnvironment({ DATABASE_URL: 'postgres://localhost/db', GATEWAY_SECRET: 'x'.repeat(32) }).databaseUrl,
    ).toBe('postgres://localhost/db');
  });
});
