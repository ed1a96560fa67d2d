import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { isAlias, LineCounter, parseDocument, visit, type Document } from 'yaml';
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { isWholeNanoUsd, ONE_NANO_USD, usdToNanos } from '../domain/money.ts';
import { Secret } from '../domain/secret.ts';
import { ConfigFileSchema, type ConfigFile, type ModelEntry, type Protocol, type VoiceEntry } from './config-schema.ts';

/** A configuration that cannot be used: `problems` names each one found, the message joins them. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(file: string, problems: readonly string[]) {
    super(`${file}: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

export interface ProviderConfig {
  id: string;
  protocol: Protocol;
  baseUrl: string;
  /** A `Secret` from the moment the file is read: it prints as `[redacted]` wherever the row is logged or thrown. */
  apiKey: Secret;
  /**
   * The provider's upstream keys from the file: `apiKey` (id `default`) when set, then `apiKeys`; those that
   * resolved empty are left out. Requests pick one by weight (gateway/upstream-keys.ts).
   */
  keys: readonly ConfiguredKey[];
  /** Longest a generation may take, first byte to last; past it the upstream is cut and what was delivered is billed. */
  timeoutMs: number;
  /** Longest wait for the answer's headers, and for each next chunk of its body. */
  firstByteTimeoutMs: number;
  connectTimeoutMs: number;
  /** A stream event (or any line of one) larger than this breaks the protocol (502) instead of being buffered whole. */
  maxEventCharacters: number;
  /** Headers sent on every request to the provider; each value is a `Secret`, as any may be a credential. */
  headers: Readonly<Record<string, Secret>>;
  /** Media jobs of this provider one process runs at once. */
  maxConcurrentJobs: number;
  /** A provider whose key resolved empty is inactive; the built-in sandbox needs no key. */
  active: boolean;
}

/** One upstream key of a provider as the file declares it. */
export interface ConfiguredKey {
  id: string;
  apiKey: Secret;
  weight: number;
}

/** The id of the key a provider's single `apiKey` stands for. */
export const defaultKeyId = 'default';

export interface GatewayConfig {
  sourcePath: string;
  providers: ReadonlyMap<string, ProviderConfig>;
  models: readonly ModelEntry[];
  /** The text-to-speech voices; each names the catalog model (its `resourceId`) that speaks it. */
  voices: readonly VoiceEntry[];
  /**
   * `trustProxy`: the load balancers in front, whose `X-Forwarded-For` gives the client's address (the sign-in
   * limits per address, the request log line); empty, the connection's own address is the client's.
   */
  server: {
    bodyLimitBytes: number;
    shutdownGraceMs: number;
    drainDelayMs: number;
    trustProxy: string[];
  } & ServerInputLimits;
  accounts: { maxApiKeys: number; signupCreditsUsd: number; sessionTtlSeconds: number } & AccountAbuseLimits;
  /** Per-key rate limits: what to do while Redis (REDIS_URL) is unreachable, and the prefix of their counters there. */
  rateLimits: { redisFailure: 'open' | 'closed'; redisKeyPrefix: string };
  ledger: {
    orphanHoldSeconds: number;
    heartbeatSeconds: number;
    leaseMaxNanos: bigint;
    leaseIdleMs: number;
    /** How long a read of an account's balance, spend or usage waits for this process's settlements of it. */
    settlementWaitMs: number;
  };
  usage: { maxPageSize: number };
  /**
   * How far past its hold a job billed on the seconds delivered (video, audio made with reference) may be charged:
   * this many times the held duration at most, and never past the length measured in the delivered file.
   */
  limits: { maxDurationOverrun: number };
  /**
   * Connections kept open to one provider origin at most (more requests wait for one); failures in a row that
   * open a provider row's breaker, the distinct accounts they must come from, and for how long it stays open;
   * what one request may wait in all for `retry-after`.
   */
  upstream: {
    maxConnectionsPerOrigin: number;
    breakerFailures: number;
    breakerMinAccounts: number;
    breakerCooldownMs: number;
    retryBudgetMs: number;
    maxRetries: number;
  };
  telemetry: TelemetryConfig;
  /** Media that clients name by URL and the gateway fetches (embedding inputs). */
  remoteMedia: { timeoutMs: number; maxBytes: number; maxRequestBytes: number; allowPrivateAddresses: boolean };
  media: MediaConfig;
  jobs: JobsConfig;
  webhooks: WebhooksConfig;
}

export interface TelemetryConfig {
  /** `GET /metrics` (Prometheus text format) is served. */
  metrics: boolean;
  /** When set, `/metrics` needs `Authorization: Bearer <token>`. */
  metricsToken: Secret | undefined;
  /** OpenTelemetry traces go to this OTLP/HTTP endpoint; unset, tracing is off and costs nothing. */
  otlpEndpoint: string | undefined;
  serviceName: string;
}

export interface S3StoreConfig {
  bucket: string;
  region: string;
  endpoint: string | undefined;
  /** Where clients reach the bucket, when the gateway reaches it elsewhere: download links are presigned for it. */
  publicEndpoint?: string;
  accessKeyId: string | undefined;
  /** Revealed only to the S3 client. */
  secretAccessKey: Secret | undefined;
  forcePathStyle: boolean;
  /** Prepended to every object key. */
  prefix: string;
}

/** Where generated media is archived, how long its links live and how long it is kept. */
export interface MediaConfig {
  store: 'fs' | 's3';
  s3: S3StoreConfig | undefined;
  linkTtlSeconds: number;
  /** 0 keeps archived media for ever. */
  retentionDays: number;
  /** Provider output URLs are downloaded within these bounds. */
  downloadTimeoutMs: number;
  maxDownloadBytes: number;
}

/** The media job workers of one process. */
export interface JobsConfig {
  /** Jobs one process runs at once; 0 runs none (a process that only takes requests). */
  concurrency: number;
  /** A job whose worker has not renewed its claim on it for this long is taken over by another. */
  claimSeconds: number;
  /** Tries of a transient upstream failure before the job fails. */
  maxAttempts: number;
  /** First retry delay; doubled at each further try. */
  retryBaseMs: number;
  /** A job not finished this long after submission fails. */
  maxJobSeconds: number;
  /** How often an idle worker looks for due jobs when no notification woke it. */
  idlePollMs: number;
  /** How long `POST /api/v1/image/generations` waits for its job before answering 202. */
  syncWaitMs: number;
  /** How often a running task-based job (video) reads its upstream task. */
  taskPollMs: number;
}

/** The webhook deliveries of one process (docs/webhooks.md). */
export interface WebhooksConfig {
  /** Attempts of one delivery in all before it is given up. */
  maxAttempts: number;
  /** One attempt's whole time, connection to answer. */
  timeoutMs: number;
  /** First retry delay; doubled at each further attempt. */
  retryBaseMs: number;
  /** A delivery whose process has not finished its attempt this long after claiming it is taken over. */
  claimSeconds: number;
  /** Deliveries one process sends at once; 0 sends none. */
  concurrency: number;
  /** How often an idle sender looks for due deliveries. */
  idlePollMs: number;
  /** Ended deliveries and their log are kept this long; 0 keeps them for ever. */
  retentionDays: number;
}

/** How long a client may take to send a request, and how deep its JSON may nest. */
export interface ServerInputLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxJsonDepth: number;
  multipart: MultipartLimits;
}

/**
 * Most parts, text fields, bytes of one text field, files and bytes of one file a multipart form may carry;
 * checked while the body streams in, so parsing stops at the first part past one.
 */
export interface MultipartLimits {
  maxParts: number;
  maxFields: number;
  maxFieldBytes: number;
  maxFiles: number;
  maxFileBytes: number;
}

/** Guessing passwords and mass signups, limited per email and per client address within a fixed window. */
export interface AccountAbuseLimits {
  selfSignup: boolean;
  loginFailuresPerEmail: number;
  loginFailuresPerAddress: number;
  signupsPerAddress: number;
  throttleWindowSeconds: number;
  /** Accepted and no longer applied: the counters expire with their window (`accounts.throttleMaxEntries`). */
  throttleMaxEntries: number;
}

export const configDefaults = {
  bodyLimitBytes: 10 * 1024 * 1024,
  shutdownGraceMs: 10_000,
  drainDelayMs: 0,
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 72_000,
  maxJsonDepth: 64,
  // Sized for the alpha videos form: six fields at most, a prompt of 32,000 characters (up to 4 bytes each).
  multipartMaxParts: 16,
  multipartMaxFields: 16,
  multipartMaxFieldBytes: 128 * 1024,
  multipartMaxFiles: 0,
  multipartMaxFileBytes: 8 * 1024 * 1024,
  loginFailuresPerEmail: 10,
  loginFailuresPerAddress: 50,
  signupsPerAddress: 20,
  throttleWindowSeconds: 900,
  throttleMaxEntries: 100_000,
  maxApiKeys: 20,
  signupCreditsUsd: 0,
  sessionTtlHours: 24 * 30,
  orphanHoldSeconds: 120,
  heartbeatSeconds: 15,
  leaseMaxUsd: 1,
  leaseIdleMs: 2_000,
  settlementWaitMs: 500,
  maxPageSize: 100,
  maxDurationOverrun: 1.1,
  providerTimeoutMs: 600_000,
  providerFirstByteTimeoutMs: 300_000,
  upstreamConnectTimeoutMs: 10_000,
  upstreamMaxConnectionsPerOrigin: 4096,
  breakerFailures: 5,
  breakerMinAccounts: 3,
  breakerCooldownMs: 30_000,
  retryBudgetMs: 2_000,
  maxRetries: 1,
  maxEventCharacters: 8 * 1024 * 1024,
  remoteMediaTimeoutMs: 15_000,
  remoteMediaMaxBytes: 32 * 1024 * 1024,
  remoteMediaMaxRequestBytes: 64 * 1024 * 1024,
  maxConcurrentJobs: 8,
  webhookMaxAttempts: 8,
  webhookTimeoutMs: 10_000,
  webhookRetryBaseMs: 5_000,
  webhookClaimSeconds: 60,
  webhookConcurrency: 8,
  webhookIdlePollMs: 1_000,
  webhookRetentionDays: 30,
  linkTtlSeconds: 3_600,
  retentionDays: 30,
  mediaDownloadTimeoutMs: 60_000,
  mediaMaxDownloadBytes: 64 * 1024 * 1024,
  jobConcurrency: 16,
  jobClaimSeconds: 30,
  jobMaxAttempts: 3,
  jobRetryBaseMs: 1_000,
  maxJobSeconds: 900,
  jobIdlePollMs: 1_000,
  syncWaitMs: 60_000,
  taskPollMs: 2_000,
} as const;

export function loadConfigFile(path: string, variables: Readonly<Record<string, string | undefined>>): GatewayConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [`cannot read the configuration file (${(error as Error).message})`]);
  }
  return parseConfig(text, path, variables);
}

export function parseConfig(
  text: string,
  path: string,
  variables: Readonly<Record<string, string | undefined>>,
): GatewayConfig {
  // Errors name the line and column only: yaml's pretty errors quote the source line, which may hold a key.
  const lines = new LineCounter();
  const document = parseDocument(text, { prettyErrors: false, lineCounter: lines });
  if (document.errors.length > 0) {
    const problems = document.errors.map((error) => {
      const { line, col } = lines.linePos(error.pos[0]);
      return `${error.message} at line ${line}, column ${col}`;
    });
    throw new ConfigError(
      path,
      problems.map((problem) => `invalid YAML: ${problem}`),
    );
  }
  const raw = interpolate(documentValue(document, path), '', { variables, file: path, within: new Set() });
  if (!Value.Check(ConfigFileSchema, raw)) throw new ConfigError(path, schemaProblems(ConfigFileSchema, raw));
  return build(raw, path);
}

/** What keeps `value` from matching `schema`, each problem at its path as the configuration's errors name them. */
export function schemaProblems(schema: TSchema, value: unknown, at = ''): string[] {
  return (
    [...Value.Errors(schema, value)]
      // An unknown field is reported twice: once on the field ("schema is false") and once on its parent.
      .filter((error) => error.keyword !== 'additionalProperties')
      .map(
        (error) =>
          `at ${displayPath(`${at}${error.instancePath}`)}: ${error.keyword === 'boolean' ? 'unknown field' : error.message}`,
      )
  );
}

function displayPath(pointer: string): string {
  if (pointer === '') return '(root)';
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((segment, index) => (/^\d+$/.test(segment) ? `[${segment}]` : index === 0 ? segment : `.${segment}`))
    .join('');
}

const placeholder = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** The most values aliases may add to the file: YAML's "billion laughs" expands a few lines past any memory. */
const maxAliasCount = 100;

/**
 * The document as plain data, or the file refused for its aliases: one naming no anchor before it, or aliases
 * expanding past `maxAliasCount` values. The YAML library throws for either; refused here, a reload answers 400
 * naming them and a start says so, instead of failing on the library's error.
 */
function documentValue(document: Document, file: string): unknown {
  const anchors = new Set<string>();
  const unresolved: string[] = [];
  // In document order: an alias names an anchor set before it.
  visit(document, {
    Node: (_key, node) => {
      if (isAlias(node)) {
        if (!anchors.has(node.source))
          unresolved.push(`invalid YAML: alias *${node.source} names no anchor set before it`);
      } else if (node.anchor) anchors.add(node.anchor);
    },
  });
  if (unresolved.length > 0) throw new ConfigError(file, unresolved);
  try {
    return document.toJS({ maxAliasCount }) ?? {};
  } catch (error) {
    // Every alias resolves: what is left to refuse is their count.
    if (error instanceof ReferenceError)
      throw new ConfigError(file, [`invalid YAML: aliases expand past ${maxAliasCount} values`]);
    throw error;
  }
}

/**
 * `${VAR}` and `${VAR:-default}` references replaced by the environment's values inside every string value,
 * throughout the document; an unset variable becomes "". `within` holds the collections around `value`: an
 * alias inside its own anchor makes a value that contains itself, refused rather than walked without end.
 */
function interpolate(
  value: unknown,
  at: string,
  source: { variables: Readonly<Record<string, string | undefined>>; file: string; within: Set<object> },
): unknown {
  const { variables, file, within } = source;
  if (typeof value === 'string') {
    if (value.includes('${') && !/\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}/.test(value)) {
      // The value is not quoted: it may be a credential.
      throw new ConfigError(file, [`at ${at || '(root)'}: malformed \${VAR} reference`]);
    }
    return value.replace(
      placeholder,
      (_match, name: string, fallback: string | undefined) => variables[name] || fallback || '',
    );
  }
  if (value === null || typeof value !== 'object') return value;
  if (within.has(value)) throw new ConfigError(file, [`at ${at || '(root)'}: an alias inside its own anchor`]);
  within.add(value);
  try {
    if (Array.isArray(value)) return value.map((item, index) => interpolate(item, `${at}[${index}]`, source));
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolate(item, at ? `${at}.${key}` : key, source)]),
    );
  } finally {
    within.delete(value);
  }
}

/**
 * Records a problem of the file and goes on, so that the checks after its shape name every problem they find at
 * once (a file whose shape fails is refused before them, with every problem of its shape).
 */
export type Fail = (at: string, problem: string) => void;

/**
 * Each price of a model in whole nano-USD: the ledger holds nothing finer, so a price of 1.5e-9 would be charged
 * as 2e-9 on every unit (a third more) and one below a nano as nothing (free). Refused, naming the field.
 */
export function checkWholeNanoPrices(pricing: ModelEntry['pricing'], at: string, fail: Fail): void {
  for (const [field, price] of Object.entries(pricing ?? {})) {
    const prices = typeof price === 'number' ? { '': price } : (price ?? {});
    for (const [key, usd] of Object.entries(prices)) {
      if (usd !== undefined && !isWholeNanoUsd(usd))
        fail(
          `${at}pricing.${field}${key ? `.${key}` : ''}`,
          `${usd} USD is not a whole number of nano-USD (0.000000001)`,
        );
    }
  }
}

/**
 * The checks of model entries beyond their schema: ids unique, prices in whole nano-USD, each row's provider
 * configured, each range's bounds in order. The start, a reload and a runtime catalog change (catalog/runtime-catalog.ts) run these.
 * `at` names each model in problems: `models[3].` gives `models[3].providers[0].provider`.
 */
export function checkModels(
  models: readonly ModelEntry[],
  { providers, at }: { providers: ReadonlyMap<string, unknown>; at: (index: number) => string },
  fail: Fail,
): void {
  const seen = new Set<string>();
  models.forEach((model, index) => {
    const modelAt = at(index);
    if (seen.has(model.id)) fail(`${modelAt}id`, `duplicate model id "${model.id}"`);
    seen.add(model.id);
    checkWholeNanoPrices(model.pricing, modelAt, fail);
    model.providers.forEach((row, rowIndex) => {
      if (!providers.has(row.provider))
        fail(`${modelAt}providers[${rowIndex}].provider`, `unknown provider "${row.provider}"`);
      for (const [scope, params] of Object.entries({
        params: row.capabilities?.params,
        'image.params': row.capabilities?.image?.params,
        'video.params': row.capabilities?.video?.params,
      })) {
        for (const [name, constraint] of Object.entries(params ?? {})) {
          if ((constraint.type === 'range' || constraint.type === 'int') && constraint.min > constraint.max) {
            fail(`${modelAt}providers[${rowIndex}].capabilities.${scope}.${name}`, 'min is greater than max');
          }
        }
      }
    });
  });
}

function build(file: ConfigFile, path: string): GatewayConfig {
  const problems: string[] = [];
  const fail: Fail = (at, problem) => {
    problems.push(`at ${at}: ${problem}`);
  };
  const config = buildChecked(file, path, fail);
  if (problems.length > 0) throw new ConfigError(path, problems);
  return config;
}

function buildChecked(file: ConfigFile, path: string, fail: Fail): GatewayConfig {
  const providers = new Map<string, ProviderConfig>();
  for (const [id, entry] of Object.entries(file.providers)) {
    const keys = configuredKeys(id, entry, fail);
    const apiKey = keys[0]?.apiKey.reveal() ?? '';
    const baseUrl = entry.baseUrl?.trim().replace(/\/+$/, '') ?? '';
    if (entry.protocol !== 'sandbox') {
      if (!baseUrl) fail(`providers.${id}.baseUrl`, 'required for this protocol');
      else if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol))
        fail(`providers.${id}.baseUrl`, `not an http(s) URL: "${baseUrl}"`);
    }
    providers.set(id, {
      id,
      protocol: entry.protocol,
      baseUrl,
      apiKey: keys[0]?.apiKey ?? new Secret(''),
      keys,
      timeoutMs: entry.timeoutMs ?? configDefaults.providerTimeoutMs,
      firstByteTimeoutMs: entry.firstByteTimeoutMs ?? configDefaults.providerFirstByteTimeoutMs,
      connectTimeoutMs: file.upstream?.connectTimeoutMs ?? configDefaults.upstreamConnectTimeoutMs,
      maxEventCharacters: file.upstream?.maxEventCharacters ?? configDefaults.maxEventCharacters,
      headers: Object.fromEntries(
        Object.entries(entry.headers ?? {}).map(([name, value]) => [name, new Secret(value)]),
      ),
      maxConcurrentJobs: entry.maxConcurrentJobs ?? configDefaults.maxConcurrentJobs,
      active: entry.protocol === 'sandbox' || apiKey !== '',
    });
  }
  checkModels(file.models, { providers, at: (index) => `models[${index}].` }, fail);
  const heartbeatSeconds = file.ledger?.heartbeatSeconds ?? configDefaults.heartbeatSeconds;
  const orphanHoldSeconds = file.ledger?.orphanHoldSeconds ?? configDefaults.orphanHoldSeconds;
  // A live process must heartbeat at least twice within the orphan window, or others would release its holds.
  if (orphanHoldSeconds < 2 * heartbeatSeconds)
    fail('ledger.orphanHoldSeconds', `must be at least twice ledger.heartbeatSeconds (${heartbeatSeconds})`);
  const headersTimeoutMs = file.server?.headersTimeoutMs ?? configDefaults.headersTimeoutMs;
  const requestTimeoutMs = file.server?.requestTimeoutMs ?? configDefaults.requestTimeoutMs;
  // Node refuses a server whose headers may take longer than the whole request.
  if (headersTimeoutMs > requestTimeoutMs)
    fail('server.headersTimeoutMs', `must not be greater than server.requestTimeoutMs (${requestTimeoutMs})`);
  const signupCredits = file.accounts?.signupCredits ?? configDefaults.signupCreditsUsd;
  if (signupCredits !== 0 && signupCredits < ONE_NANO_USD)
    fail('accounts.signupCredits', 'must be 0 or at least one nano-USD (0.000000001)');
  return {
    sourcePath: path,
    providers,
    models: file.models,
    voices: checkedVoices(file, fail),
    server: {
      bodyLimitBytes: file.server?.bodyLimitBytes ?? configDefaults.bodyLimitBytes,
      shutdownGraceMs: file.server?.shutdownGraceMs ?? configDefaults.shutdownGraceMs,
      drainDelayMs: file.server?.drainDelayMs ?? configDefaults.drainDelayMs,
      headersTimeoutMs,
      requestTimeoutMs,
      keepAliveTimeoutMs: file.server?.keepAliveTimeoutMs ?? configDefaults.keepAliveTimeoutMs,
      maxJsonDepth: file.server?.maxJsonDepth ?? configDefaults.maxJsonDepth,
      multipart: {
        maxParts: file.server?.multipart?.maxParts ?? configDefaults.multipartMaxParts,
        maxFields: file.server?.multipart?.maxFields ?? configDefaults.multipartMaxFields,
        maxFieldBytes: file.server?.multipart?.maxFieldBytes ?? configDefaults.multipartMaxFieldBytes,
        maxFiles: file.server?.multipart?.maxFiles ?? configDefaults.multipartMaxFiles,
        maxFileBytes: file.server?.multipart?.maxFileBytes ?? configDefaults.multipartMaxFileBytes,
      },
      trustProxy: trustedProxies(file, fail),
    },
    accounts: {
      maxApiKeys: file.accounts?.maxApiKeys ?? configDefaults.maxApiKeys,
      signupCreditsUsd: signupCredits,
      sessionTtlSeconds: (file.accounts?.sessionTtlHours ?? configDefaults.sessionTtlHours) * 3600,
      selfSignup: file.accounts?.selfSignup ?? true,
      loginFailuresPerEmail: file.accounts?.loginFailuresPerEmail ?? configDefaults.loginFailuresPerEmail,
      loginFailuresPerAddress: file.accounts?.loginFailuresPerAddress ?? configDefaults.loginFailuresPerAddress,
      signupsPerAddress: file.accounts?.signupsPerAddress ?? configDefaults.signupsPerAddress,
      throttleWindowSeconds: file.accounts?.throttleWindowSeconds ?? configDefaults.throttleWindowSeconds,
      throttleMaxEntries: file.accounts?.throttleMaxEntries ?? configDefaults.throttleMaxEntries,
    },
    rateLimits: {
      redisFailure: file.rateLimits?.redisFailure ?? 'open',
      redisKeyPrefix: file.rateLimits?.redisKeyPrefix ?? 'gateway:rl',
    },
    ledger: {
      orphanHoldSeconds,
      heartbeatSeconds,
      leaseMaxNanos: usdToNanos(file.ledger?.leaseMaxUsd ?? configDefaults.leaseMaxUsd),
      leaseIdleMs: file.ledger?.leaseIdleMs ?? configDefaults.leaseIdleMs,
      settlementWaitMs: file.ledger?.settlementWaitMs ?? configDefaults.settlementWaitMs,
    },
    usage: { maxPageSize: file.usage?.maxPageSize ?? configDefaults.maxPageSize },
    limits: { maxDurationOverrun: file.limits?.maxDurationOverrun ?? configDefaults.maxDurationOverrun },
    upstream: {
      maxConnectionsPerOrigin: file.upstream?.maxConnectionsPerOrigin ?? configDefaults.upstreamMaxConnectionsPerOrigin,
      breakerFailures: file.upstream?.breakerFailures ?? configDefaults.breakerFailures,
      breakerMinAccounts: file.upstream?.breakerMinAccounts ?? configDefaults.breakerMinAccounts,
      breakerCooldownMs: file.upstream?.breakerCooldownMs ?? configDefaults.breakerCooldownMs,
      retryBudgetMs: file.upstream?.retryBudgetMs ?? configDefaults.retryBudgetMs,
      maxRetries: file.upstream?.maxRetries ?? configDefaults.maxRetries,
    },
    telemetry: {
      metrics: file.telemetry?.metrics ?? true,
      metricsToken: file.telemetry?.metricsToken?.trim() ? new Secret(file.telemetry.metricsToken.trim()) : undefined,
      otlpEndpoint: otlpEndpoint(file, fail),
      serviceName: file.telemetry?.tracing?.serviceName ?? 'model-gateway',
    },
    remoteMedia: {
      timeoutMs: file.remoteMedia?.timeoutMs ?? configDefaults.remoteMediaTimeoutMs,
      maxBytes: file.remoteMedia?.maxBytes ?? configDefaults.remoteMediaMaxBytes,
      maxRequestBytes: file.remoteMedia?.maxRequestBytes ?? configDefaults.remoteMediaMaxRequestBytes,
      allowPrivateAddresses: file.remoteMedia?.allowPrivateAddresses ?? false,
    },
    media: {
      store: file.media?.store ?? 'fs',
      s3: s3Config(file, fail),
      linkTtlSeconds: file.media?.linkTtlSeconds ?? configDefaults.linkTtlSeconds,
      retentionDays: file.media?.retentionDays ?? configDefaults.retentionDays,
      downloadTimeoutMs: file.media?.downloadTimeoutMs ?? configDefaults.mediaDownloadTimeoutMs,
      maxDownloadBytes: file.media?.maxDownloadBytes ?? configDefaults.mediaMaxDownloadBytes,
    },
    webhooks: webhooksConfig(file, fail),
    jobs: {
      concurrency: file.jobs?.concurrency ?? configDefaults.jobConcurrency,
      // `leaseSeconds` is the key's name in configuration files of earlier releases.
      claimSeconds: file.jobs?.claimSeconds ?? file.jobs?.leaseSeconds ?? configDefaults.jobClaimSeconds,
      maxAttempts: file.jobs?.maxAttempts ?? configDefaults.jobMaxAttempts,
      retryBaseMs: file.jobs?.retryBaseMs ?? configDefaults.jobRetryBaseMs,
      maxJobSeconds: file.jobs?.maxJobSeconds ?? configDefaults.maxJobSeconds,
      idlePollMs: file.jobs?.idlePollMs ?? configDefaults.jobIdlePollMs,
      syncWaitMs: file.jobs?.syncWaitMs ?? configDefaults.syncWaitMs,
      taskPollMs: file.jobs?.taskPollMs ?? configDefaults.taskPollMs,
    },
  };
}

function webhooksConfig(file: ConfigFile, fail: Fail): WebhooksConfig {
  const webhooks = {
    maxAttempts: file.webhooks?.maxAttempts ?? configDefaults.webhookMaxAttempts,
    timeoutMs: file.webhooks?.timeoutMs ?? configDefaults.webhookTimeoutMs,
    retryBaseMs: file.webhooks?.retryBaseMs ?? configDefaults.webhookRetryBaseMs,
    claimSeconds: file.webhooks?.claimSeconds ?? configDefaults.webhookClaimSeconds,
    concurrency: file.webhooks?.concurrency ?? configDefaults.webhookConcurrency,
    idlePollMs: file.webhooks?.idlePollMs ?? configDefaults.webhookIdlePollMs,
    retentionDays: file.webhooks?.retentionDays ?? configDefaults.webhookRetentionDays,
  };
  // A claim shorter than an attempt would let a second process send the same event while the first still waits.
  if (webhooks.claimSeconds * 1000 <= webhooks.timeoutMs)
    fail('webhooks.claimSeconds', `must be longer than webhooks.timeoutMs (${webhooks.timeoutMs} ms)`);
  return webhooks;
}

/** `apiKey` (id `default`) and `apiKeys`, without those that resolved empty; ids are unique within the provider. */
function configuredKeys(id: string, entry: ConfigFile['providers'][string], fail: Fail): ConfiguredKey[] {
  const keys: ConfiguredKey[] = [];
  const single = entry.apiKey?.trim() ?? '';
  if (single !== '') keys.push({ id: defaultKeyId, apiKey: new Secret(single), weight: 1 });
  const seen = new Set(entry.apiKey === undefined ? [] : [defaultKeyId]);
  (entry.apiKeys ?? []).forEach((key, index) => {
    if (seen.has(key.id)) fail(`providers.${id}.apiKeys[${index}].id`, `duplicate key id "${key.id}"`);
    seen.add(key.id);
    const value = key.key.trim();
    if (value !== '') keys.push({ id: key.id, apiKey: new Secret(value), weight: key.weight ?? 1 });
  });
  return keys;
}

function checkedVoices(file: ConfigFile, fail: Fail): VoiceEntry[] {
  const voices = file.voices ?? [];
  const seen = new Set<string>();
  voices.forEach((voice, index) => {
    if (seen.has(voice.voiceType)) fail(`voices[${index}].voiceType`, `duplicate voice "${voice.voiceType}"`);
    seen.add(voice.voiceType);
    if (!file.models.some((model) => model.id === voice.resourceId))
      fail(`voices[${index}].resourceId`, `no model "${voice.resourceId}" in models`);
  });
  return voices;
}

/** proxy-addr's names of ranges, beside addresses and CIDR ranges. */
const proxyRangeNames = new Set(['loopback', 'linklocal', 'uniquelocal']);

function trustedProxies(file: ConfigFile, fail: Fail): string[] {
  return (file.server?.trustProxy ?? []).map((entry, index) => {
    const value = entry.trim();
    const [address = '', prefix, ...rest] = value.split('/');
    const version = isIP(address);
    const prefixFits =
      prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 6 ? 128 : 32));
    if (!proxyRangeNames.has(value) && (version === 0 || !prefixFits || rest.length > 0)) {
      fail(
        `server.trustProxy[${index}]`,
        `not an IP address, a CIDR range or one of ${[...proxyRangeNames].join(', ')}: "${value}"`,
      );
    }
    return value;
  });
}

function otlpEndpoint(file: ConfigFile, fail: Fail): string | undefined {
  const endpoint = file.telemetry?.tracing?.otlpEndpoint?.trim();
  if (!endpoint) return undefined;
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol))
    fail('telemetry.tracing.otlpEndpoint', `not an http(s) URL: "${endpoint}"`);
  return endpoint;
}

function s3Config(file: ConfigFile, fail: Fail): S3StoreConfig | undefined {
  const s3 = file.media?.s3;
  if (file.media?.store === 's3' && !s3) fail('media.s3', 'required when media.store is s3');
  if (!s3) return undefined;
  for (const [field, value] of [
    ['endpoint', s3.endpoint],
    ['publicEndpoint', s3.publicEndpoint],
  ] as const) {
    if (value !== undefined && (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)))
      fail(`media.s3.${field}`, `not an http(s) URL: "${value}"`);
  }
  return {
    bucket: s3.bucket,
    region: s3.region ?? 'us-east-1',
    endpoint: s3.endpoint,
    publicEndpoint: s3.publicEndpoint,
    accessKeyId: s3.accessKeyId?.trim() || undefined,
    secretAccessKey: s3.secretAccessKey?.trim() ? new Secret(s3.secretAccessKey.trim()) : undefined,
    forcePathStyle: s3.forcePathStyle ?? false,
    prefix: s3.prefix ?? '',
  };
}
