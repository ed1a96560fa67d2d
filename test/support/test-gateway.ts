import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { readEnvironment } from '../../src/config/environment.ts';
import { loadConfigFile, parseConfig, type GatewayConfig } from '../../src/config/load-config.ts';
import { createGateway, type RunningGateway } from '../../src/main.ts';
import { fakeAnthropicKey, startAnthropicFake } from '../fakes/anthropic-fake.ts';
import { fakeArkKey } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeGeminiKey, startGeminiFake } from '../fakes/gemini-fake.ts';
import { fakeOpenAiKey, startOpenAiFake } from '../fakes/openai-fake.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';

export const testAdminToken = 'test-admin-token-0123456789abcdef';
export const testSecret = 'test-secret-0123456789abcdef0123456789abcdef';
export const shippedConfigPath = path.resolve(import.meta.dirname, '../../gateway.yaml');

export interface TestGateway {
  gateway: RunningGateway;
  app: FastifyInstance;
  database: TestDatabase;
  config: GatewayConfig;
  /** An in-process request; resolves once the answer is complete and every generation in flight has settled. */
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** Resolves once no generation is settling (answers end before their settlement is written). */
  settled(): Promise<void>;
  /** A new account with the given credits and one API key (optionally with caps, in USD). */
  createFundedKey(options?: {
    credits?: number;
    limits?: Record<string, number>;
    email?: string;
  }): Promise<{ accountId: string; keyId: string; key: string }>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  /** Fake upstreams the gateway talks to, closed after it by `close()`. */
  upstreams?: FakeServer[];
  /** gateway.yaml text; defaults to the shipped gateway.yaml. */
  configText?: string;
  /** Extra environment variables (provider keys for `${VAR}`, ...). */
  env?: Record<string, string>;
  adminToken?: string | null;
  /** Collects the gateway's log lines (info and above), parsed; otherwise the gateway logs nothing. */
  logLines?: Array<Record<string, unknown>>;
  /** The built dashboard to serve; defaults to web/dist. */
  dashboardDir?: string;
  /** Time limits of the storage's sessions, shortened (the defaults of src/storage/session-limits.ts otherwise). */
  storage?: { lockTimeoutMs?: number; statementTimeoutMs?: number };
  /** Another gateway's database, shared as processes share one (it is not dropped at close); else one of its own. */
  sharedDatabase?: TestDatabase;
}

let emailCounter = 0;
let clientCounter = 0;

/**
 * Each in-process request comes from its own client address unless the test names one (`remoteAddress`), so
 * the per-address login and signup throttles act only where a test means them to.
 */
function nextClientAddress(): string {
  const n = ++clientCounter;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-test-'));
  const adminToken = options.adminToken === null ? undefined : (options.adminToken ?? testAdminToken);
  const environment = readEnvironment({
    DATA_DIR: dataDir,
    GATEWAY_SECRET: testSecret,
    ...(adminToken ? { GATEWAY_ADMIN_TOKEN: adminToken } : {}),
    ...options.env,
  });
  const config = options.configText
    ? parseConfig(options.configText, 'test-gateway.yaml', environment.variables)
    : loadConfigFile(shippedConfigPath, environment.variables);
  const database = options.sharedDatabase ?? (await createTestDatabase());
  const logger = options.logLines
    ? pino(
        { level: 'info' },
        { write: (line: string) => options.logLines!.push(JSON.parse(line) as Record<string, unknown>) },
      )
    : pino({ level: 'silent' });
  const gateway = await createGateway({
    environment,
    config,
    storage: { ...database.options, ...options.storage },
    logger,
    dashboardDir: options.dashboardDir,
  });
  await gateway.app.ready();
  const services = gateway.core.services;
  // Settlements finish just after the answers they bill; tests read balances and records once they are in.
  const settled = () => gateway.core.work.idle(10_000);
  return {
    gateway,
    app: gateway.app,
    database,
    config,
    request: async (injectOptions) => {
      const response = await gateway.app.inject({ remoteAddress: nextClientAddress(), ...injectOptions });
      await settled();
      return response;
    },
    settled,
    createFundedKey: async ({ credits = 10, limits, email } = {}) => {
      const account = await services.accounts.createAccount({
        email: email ?? `user${++emailCounter}-${Date.now()}@example.com`,
        creditsUsd: credits,
      });
      const key = await services.apiKeys.create(account.id, { name: 'test key', limits });
      return { accountId: account.id, keyId: key.id, key: key.key };
    },
    close: async () => {
      await gateway.close();
      await Promise.all((options.upstreams ?? []).map((upstream) => upstream.close()));
      if (!options.sharedDatabase) await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** gateway.yaml text with the built-in sandbox alone, serving `sandbox-echo` (text) and `sandbox-embedding`, then `extra` sections. */
export function sandboxConfigYaml(extra = ''): string {
  return [
    'providers:',
    '  sandbox: { protocol: sandbox }',
    'models:',
    modelYaml('sandbox-echo', { provider: 'sandbox', upstream: 'echo', prices: { input: 0.1, output: 0.2 } }),
    '  - id: sandbox-embedding',
    '    outputModalities: [embedding]',
    '    pricing: { inputPerMTok: 0.01 }',
    '    providers: [{ provider: sandbox, model: embedding }]',
    extra,
  ].join('\n');
}

/** One catalog entry of gateway.yaml text: a priced model (USD per million tokens) served by one provider row. */
export function modelYaml(
  id: string,
  {
    provider,
    upstream,
    prices = { input: 1, output: 2 },
  }: { provider: string; upstream: string; prices?: { input: number; output: number } },
): string {
  return `  - id: ${id}\n    pricing: { inputPerMTok: ${prices.input}, outputPerMTok: ${prices.output} }\n    providers: [{ provider: ${provider}, model: ${upstream} }]\n`;
}

const fakeFamilies = {
  openai: { basePath: '/v1', apiKey: fakeOpenAiKey },
  anthropic: { basePath: '/v1', apiKey: fakeAnthropicKey },
  gemini: { basePath: '/v1beta', apiKey: fakeGeminiKey },
  ark: { basePath: '/api/v3', apiKey: fakeArkKey },
} as const;

/** One provider entry of gateway.yaml text pointing at a fake upstream of that protocol, with its key. */
export function fakeProviderYaml(name: string, protocol: keyof typeof fakeFamilies, fake: FakeServer): string {
  const family = fakeFamilies[protocol];
  return `  ${name}: { protocol: ${protocol}, baseUrl: "${fake.url}${family.basePath}", apiKey: ${family.apiKey} }`;
}

export interface FamilyGateway extends TestGateway {
  fakes: { openai: FakeServer; anthropic: FakeServer; gemini: FakeServer };
}

/**
 * A gateway in front of one fake of each upstream family (providers `openai`, `anthropic`, `gemini` and the
 * sandbox), with models `via-openai`, `via-anthropic`, `via-gemini` and `via-sandbox` priced at 1 and 2 USD per
 * million tokens, and any `extraModels` catalog entries.
 */
export async function startFamilyGateway(extraModels: string[] = []): Promise<FamilyGateway> {
  const [openai, anthropic, gemini] = await Promise.all([startOpenAiFake(), startAnthropicFake(), startGeminiFake()]);
  const gateway = await startTestGateway({
    upstreams: [openai, anthropic, gemini],
    configText: [
      'providers:',
      fakeProviderYaml('openai', 'openai', openai),
      fakeProviderYaml('anthropic', 'anthropic', anthropic),
      fakeProviderYaml('gemini', 'gemini', gemini),
      '  sandbox: { protocol: sandbox }',
      'models:',
      modelYaml('via-openai', { provider: 'openai', upstream: 'gpt-4o-mini' }),
      modelYaml('via-anthropic', { provider: 'anthropic', upstream: 'claude-sonnet-4-5-20250929' }),
      modelYaml('via-gemini', { provider: 'gemini', upstream: 'gemini-2.5-flash' }),
      modelYaml('via-sandbox', { provider: 'sandbox', upstream: 'echo' }),
      ...extraModels,
    ].join('\n'),
  });
  return { ...gateway, fakes: { openai, anthropic, gemini } };
}
