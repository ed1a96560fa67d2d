import { embeddingPartTypes } from '../domain/embedding.ts';
import { routingStrategyNames } from '../domain/generation-route.ts';
import Type, { type Static, type TProperties } from 'typebox';
import { protocols, type Protocol } from '../domain/protocols.ts';

const NonEmpty = Type.String({ minLength: 1 });
const Usd = Type.Number({ minimum: 0, maximum: 1_000_000 });

const ParamConstraintSchema = Type.Union([
  Type.Object(
    {
      type: Type.Literal('enum'),
      values: Type.Union([Type.Array(Type.String(), { minItems: 1 }), Type.Array(Type.Number(), { minItems: 1 })]),
      default: Type.Optional(Type.Union([Type.String(), Type.Number()])),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('range'),
      min: Type.Number(),
      max: Type.Number(),
      default: Type.Optional(Type.Number()),
      unit: Type.Optional(Type.String()),
      steps: Type.Optional(Type.Array(Type.Number(), { minItems: 1 })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal('int'), min: Type.Integer(), max: Type.Integer(), default: Type.Optional(Type.Integer()) },
    { additionalProperties: false },
  ),
  Type.Object({ type: Type.Literal('bool'), default: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
]);

const ParamsSchema = Type.Record(Type.String(), ParamConstraintSchema);

export const CapabilitiesSchema = Type.Object(
  {
    text: Type.Optional(
      Type.Object({ supportedParameters: Type.Optional(Type.Array(NonEmpty)) }, { additionalProperties: false }),
    ),
    params: Type.Optional(ParamsSchema),
    image: Type.Optional(Type.Object({ params: Type.Optional(ParamsSchema) }, { additionalProperties: false })),
    video: Type.Optional(Type.Object({ params: Type.Optional(ParamsSchema) }, { additionalProperties: false })),
    // `parts`: the embedding input part types the model accepts; other keys describe inputs for clients.
    inputs: Type.Optional(
      Type.Object(
        { parts: Type.Optional(Type.Array(Type.Union(embeddingPartTypes.map((type) => Type.Literal(type))))) },
        { additionalProperties: true },
      ),
    ),
    strictParams: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** One upstream key of a provider: its id (shown to operators, never the key), the key, and its share of requests. */
export const ProviderKeySchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._-]+$' }),
    key: Type.String(),
    weight: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  },
  { additionalProperties: false },
);

const ProviderSchema = Type.Object(
  {
    protocol: Type.Union(protocols.map((protocol) => Type.Literal(protocol))),
    baseUrl: Type.Optional(Type.String()),
    apiKey: Type.Optional(Type.String()),
    // Several upstream keys of the provider, beside `apiKey`: each request picks one by weight (docs/provider-keys.md).
    apiKeys: Type.Optional(Type.Array(ProviderKeySchema, { maxItems: 100 })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
    firstByteTimeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    // Media jobs this provider runs at once in one gateway process; more wait in the queue.
    maxConcurrentJobs: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  },
  { additionalProperties: false },
);

const ProviderRowSchema = Type.Object(
  {
    provider: NonEmpty,
    model: NonEmpty,
    priority: Type.Optional(Type.Integer({ minimum: 0 })),
    capabilities: Type.Optional(CapabilitiesSchema),
    // The row's share of requests under `routing: weighted` (default 1).
    weight: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    // Serves only while no other row of the model is active (the sandbox standing in for a provider without a key),
    // never as a fallback after another row failed.
    standIn: Type.Optional(Type.Boolean()),
    // What the row costs the operator upstream, in USD, for `routing: price` (not what accounts are charged).
    cost: Type.Optional(
      Type.Object(
        { inputPerMTok: Type.Optional(Usd), outputPerMTok: Type.Optional(Usd) },
        { additionalProperties: false, minProperties: 1 },
      ),
    ),
  },
  { additionalProperties: false },
);

/** How a model's rows are ordered for each request (docs/provider-keys.md); `priority` is the default. */
export const routingStrategies = routingStrategyNames;
export type RoutingStrategy = (typeof routingStrategies)[number];

/** A model's prices in USD; the account API shows them under the same names. */
export const PricingSchema = Type.Object(
  {
    inputPerMTok: Type.Optional(Usd),
    outputPerMTok: Type.Optional(Usd),
    // Embedding inputs besides text, for providers whose reported tokens do not already count them.
    inputPerImage: Type.Optional(Usd),
    inputPerAudioSecond: Type.Optional(Usd),
    inputPerVideoSecond: Type.Optional(Usd),
    inputPerFile: Type.Optional(Usd),
    // Image generation: per output image (each layer of a decomposition counts as one), or by quality.
    perImage: Type.Optional(Usd),
    perImageByQuality: Type.Optional(
      Type.Object({ low: Usd, medium: Usd, high: Usd }, { additionalProperties: false }),
    ),
    // Text-to-speech: per million characters of the text.
    perMCharacters: Type.Optional(Usd),
    // Video: per output second, or per output second at each resolution.
    perVideoSecond: Type.Optional(Usd),
    perVideoSecondByResolution: Type.Optional(
      Type.Object(
        {
          '480p': Type.Optional(Usd),
          '720p': Type.Optional(Usd),
          '1080p': Type.Optional(Usd),
          '4k': Type.Optional(Usd),
        },
        { additionalProperties: false, minProperties: 1 },
      ),
    ),
    // Generation with reference (audio): per output second.
    perAudioSecond: Type.Optional(Usd),
  },
  { additionalProperties: false },
);

const ModalityList = <T extends readonly string[]>(values: T) =>
  Type.Array(Type.Union(values.map((value) => Type.Literal(value))), { uniqueItems: true });

/** One model of the catalog, as gateway.yaml declares it and the admin API's runtime catalog takes it. */
export const ModelSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9][A-Za-z0-9._:/@-]*$' }),
    name: Type.Optional(Type.String()),
    revision: Type.Optional(Type.Integer({ minimum: 1 })),
    isActive: Type.Optional(Type.Boolean()),
    inputModalities: Type.Optional(ModalityList(['text', 'image', 'file', 'video', 'audio'] as const)),
    outputModalities: Type.Optional(ModalityList(['text', 'image', 'file', 'video', 'audio', 'embedding'] as const)),
    pricing: Type.Optional(PricingSchema),
    limits: Type.Optional(
      Type.Object(
        { maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })) },
        { additionalProperties: false },
      ),
    ),
    providers: Type.Array(ProviderRowSchema, { minItems: 1 }),
    routing: Type.Optional(Type.Union(routingStrategies.map((strategy) => Type.Literal(strategy)))),
    createdAt: Type.Optional(Type.String()),
    updatedAt: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** A voice of the text-to-speech catalog (spec, Voice); `resourceId` names the catalog model that speaks it. */
export const VoiceSchema = Type.Object(
  {
    voiceType: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.-]+$' }),
    name: NonEmpty,
    gender: Type.Union([Type.Literal('male'), Type.Literal('female')]),
    age: Type.Union([
      Type.Literal('child'),
      Type.Literal('teenager'),
      Type.Literal('adult'),
      Type.Literal('middle-age'),
    ]),
    categories: Type.Array(NonEmpty),
    languages: Type.Array(
      Type.Object(
        { language: NonEmpty, text: Type.String(), flag: Type.Optional(Type.String()) },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
    resourceId: NonEmpty,
    avatar: Type.Optional(Type.String()),
    trialUrl: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** A section of gateway.yaml, or a group of settings within one: optional, and refusing keys it does not declare. */
const Section = <Fields extends TProperties>(fields: Fields) =>
  Type.Optional(Type.Object(fields, { additionalProperties: false }));
/** An optional whole-number setting, within its bounds. */
const Whole = (minimum: number, maximum: number) => Type.Optional(Type.Integer({ minimum, maximum }));

export const ConfigFileSchema = Type.Object(
  {
    providers: Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]+$' }), ProviderSchema),
    models: Type.Array(ModelSchema),
    voices: Type.Optional(Type.Array(VoiceSchema)),
    server: Section({
      bodyLimitBytes: Whole(1024, 512 * 1024 * 1024),
      shutdownGraceMs: Whole(0, 600_000),
      // Readiness answers 503 this long after SIGTERM before the server stops accepting, so load balancers notice.
      drainDelayMs: Whole(0, 600_000),
      headersTimeoutMs: Whole(100, 3_600_000),
      requestTimeoutMs: Whole(100, 3_600_000),
      keepAliveTimeoutMs: Whole(100, 3_600_000),
      maxJsonDepth: Whole(2, 1000),
      // Multipart forms (alpha videos): enforced while the body streams in.
      multipart: Section({
        maxParts: Whole(1, 10_000),
        maxFields: Whole(1, 10_000),
        maxFieldBytes: Whole(1, 512 * 1024 * 1024),
        maxFiles: Whole(0, 1_000),
        maxFileBytes: Whole(1, 512 * 1024 * 1024),
      }),
      // The proxies whose X-Forwarded-For names the client: addresses or CIDR ranges (or loopback, linklocal, uniquelocal).
      trustProxy: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 64 })),
    }),
    accounts: Section({
      maxApiKeys: Whole(1, 10_000),
      signupCredits: Type.Optional(Usd),
      sessionTtlHours: Whole(1, 24 * 365),
      selfSignup: Type.Optional(Type.Boolean()),
      loginFailuresPerEmail: Whole(1, 1_000_000),
      loginFailuresPerAddress: Whole(1, 1_000_000),
      signupsPerAddress: Whole(1, 1_000_000),
      throttleWindowSeconds: Whole(1, 86_400),
      throttleMaxEntries: Whole(100, 10_000_000),
    }),
    rateLimits: Section({
      // With REDIS_URL set and Redis unreachable: admit without limits (open) or refuse with 503 (closed).
      redisFailure: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
      // Names of the counters in Redis start with it, so gateways (or test runs) sharing one Redis can be kept apart.
      redisKeyPrefix: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9:._-]+$' })),
    }),
    ledger: Section({
      orphanHoldSeconds: Whole(1, 86_400),
      heartbeatSeconds: Whole(1, 3_600),
      leaseMaxUsd: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
      leaseIdleMs: Whole(10, 3_600_000),
      settlementWaitMs: Whole(0, 60_000),
    }),
    limits: Section({
      // Media billed on the seconds delivered may be charged past its hold up to this many times the held
      // duration (and never past the length the gateway measured in the file); the rest is uncharged.
      maxDurationOverrun: Type.Optional(Type.Number({ minimum: 1, maximum: 10 })),
    }),
    usage: Section({ maxPageSize: Whole(1, 1000) }),
    upstream: Section({
      connectTimeoutMs: Whole(100, 600_000),
      maxConnectionsPerOrigin: Whole(1, 1_000_000),
      maxEventCharacters: Whole(1024, 512 * 1024 * 1024),
      breakerFailures: Whole(1, 1_000),
      breakerMinAccounts: Whole(1, 1_000),
      breakerCooldownMs: Whole(100, 3_600_000),
      retryBudgetMs: Whole(0, 600_000),
      maxRetries: Whole(0, 10),
    }),
    telemetry: Section({
      metrics: Type.Optional(Type.Boolean()),
      metricsToken: Type.Optional(Type.String()),
      tracing: Section({
        otlpEndpoint: Type.Optional(Type.String()),
        serviceName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      }),
    }),
    media: Section({
      store: Type.Optional(Type.Union([Type.Literal('fs'), Type.Literal('s3')])),
      s3: Section({
        bucket: NonEmpty,
        region: Type.Optional(NonEmpty),
        endpoint: Type.Optional(NonEmpty),
        // Where clients reach the bucket, when not at `endpoint` (a private network): download links are presigned for it.
        publicEndpoint: Type.Optional(NonEmpty),
        accessKeyId: Type.Optional(Type.String()),
        secretAccessKey: Type.Optional(Type.String()),
        forcePathStyle: Type.Optional(Type.Boolean()),
        prefix: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9/._-]*$' })),
      }),
      linkTtlSeconds: Whole(10, 7 * 86_400),
      retentionDays: Type.Optional(Type.Number({ minimum: 0, maximum: 36_500 })),
      downloadTimeoutMs: Whole(100, 600_000),
      maxDownloadBytes: Whole(1024, 2 * 1024 * 1024 * 1024),
    }),
    jobs: Section({
      concurrency: Whole(0, 10_000),
      claimSeconds: Whole(2, 3_600),
      /** The earlier name of `claimSeconds`, still read. */
      leaseSeconds: Whole(2, 3_600),
      maxAttempts: Whole(1, 20),
      retryBaseMs: Whole(10, 600_000),
      maxJobSeconds: Whole(1, 7 * 86_400),
      idlePollMs: Whole(10, 60_000),
      syncWaitMs: Whole(0, 600_000),
      taskPollMs: Whole(10, 600_000),
    }),
    webhooks: Section({
      maxAttempts: Whole(1, 50),
      timeoutMs: Whole(100, 120_000),
      retryBaseMs: Whole(10, 3_600_000),
      claimSeconds: Whole(2, 3_600),
      concurrency: Whole(0, 1_000),
      idlePollMs: Whole(10, 60_000),
      retentionDays: Whole(0, 3_650),
    }),
    remoteMedia: Section({
      timeoutMs: Whole(100, 600_000),
      maxBytes: Whole(1024, 512 * 1024 * 1024),
      maxRequestBytes: Whole(1024, 2 * 1024 * 1024 * 1024),
      allowPrivateAddresses: Type.Optional(Type.Boolean()),
    }),
  },
  { additionalProperties: false },
);

export type ConfigFile = Static<typeof ConfigFileSchema>;
export type ModelEntry = ConfigFile['models'][number];
export type ProviderEntry = ConfigFile['providers'][string];
export type VoiceEntry = NonNullable<ConfigFile['voices']>[number];
export type { Protocol };
