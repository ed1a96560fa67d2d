import { embeddingPartTypes } from '../domain/embedding.ts';
import { routingStrategyNames } from '../domain/generation-route.ts';
import Type, { type Static } from 'typebox';
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

export const ConfigFileSchema = Type.Object(
  {
    providers: Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]+$' }), ProviderSchema),
    models: Type.Array(ModelSchema),
    voices: Type.Optional(Type.Array(VoiceSchema)),
    server: Type.Optional(
      Type.Object(
        {
          bodyLimitBytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 512 * 1024 * 1024 })),
          shutdownGraceMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
          // Readiness answers 503 this long after SIGTERM before the server stops accepting, so load balancers notice.
          drainDelayMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
          headersTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
          requestTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
          keepAliveTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
          maxJsonDepth: Type.Optional(Type.Integer({ minimum: 2, maximum: 1000 })),
          // Multipart forms (alpha videos): enforced while the body streams in.
          multipart: Type.Optional(
            Type.Object(
              {
                maxParts: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
                maxFields: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
                maxFieldBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 512 * 1024 * 1024 })),
                maxFiles: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000 })),
                maxFileBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 512 * 1024 * 1024 })),
              },
              { additionalProperties: false },
            ),
          ),
          // The proxies whose X-Forwarded-For names the client: addresses or CIDR ranges (or loopback, linklocal, uniquelocal).
          trustProxy: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 64 })),
        },
        { additionalProperties: false },
      ),
    ),
    accounts: Type.Optional(
      Type.Object(
        {
          maxApiKeys: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
          signupCredits: Type.Optional(Usd),
          sessionTtlHours: Type.Optional(Type.Integer({ minimum: 1, maximum: 24 * 365 })),
          selfSignup: Type.Optional(Type.Boolean()),
          loginFailuresPerEmail: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
          loginFailuresPerAddress: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
          signupsPerAddress: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
          throttleWindowSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
          throttleMaxEntries: Type.Optional(Type.Integer({ minimum: 100, maximum: 10_000_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    rateLimits: Type.Optional(
      Type.Object(
        {
          // With REDIS_URL set and Redis unreachable: admit without limits (open) or refuse with 503 (closed).
          redisFailure: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
          // Names of the counters in Redis start with it, so gateways (or test runs) sharing one Redis can be kept apart.
          redisKeyPrefix: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9:._-]+$' })),
        },
        { additionalProperties: false },
      ),
    ),
    ledger: Type.Optional(
      Type.Object(
        {
          orphanHoldSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
          heartbeatSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600 })),
          leaseMaxUsd: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 })),
          leaseIdleMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000 })),
          settlementWaitMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    limits: Type.Optional(
      Type.Object(
        {
          // Media billed on the seconds delivered may be charged past its hold up to this many times the held
          // duration (and never past the length the gateway measured in the file); the rest is uncharged.
          maxDurationOverrun: Type.Optional(Type.Number({ minimum: 1, maximum: 10 })),
        },
        { additionalProperties: false },
      ),
    ),
    usage: Type.Optional(
      Type.Object(
        { maxPageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) },
        { additionalProperties: false },
      ),
    ),
    upstream: Type.Optional(
      Type.Object(
        {
          connectTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
          maxConnectionsPerOrigin: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
          maxEventCharacters: Type.Optional(Type.Integer({ minimum: 1024, maximum: 512 * 1024 * 1024 })),
          breakerFailures: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000 })),
          breakerMinAccounts: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000 })),
          breakerCooldownMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
          retryBudgetMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
          maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
        },
        { additionalProperties: false },
      ),
    ),
    telemetry: Type.Optional(
      Type.Object(
        {
          metrics: Type.Optional(Type.Boolean()),
          metricsToken: Type.Optional(Type.String()),
          tracing: Type.Optional(
            Type.Object(
              {
                otlpEndpoint: Type.Optional(Type.String()),
                serviceName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    media: Type.Optional(
      Type.Object(
        {
          store: Type.Optional(Type.Union([Type.Literal('fs'), Type.Literal('s3')])),
          s3: Type.Optional(
            Type.Object(
              {
                bucket: NonEmpty,
                region: Type.Optional(NonEmpty),
                endpoint: Type.Optional(NonEmpty),
                // Where clients reach the bucket, when not at `endpoint` (a private network): download links are presigned for it.
                publicEndpoint: Type.Optional(NonEmpty),
                accessKeyId: Type.Optional(Type.String()),
                secretAccessKey: Type.Optional(Type.String()),
                forcePathStyle: Type.Optional(Type.Boolean()),
                prefix: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9/._-]*$' })),
              },
              { additionalProperties: false },
            ),
          ),
          linkTtlSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 7 * 86_400 })),
          retentionDays: Type.Optional(Type.Number({ minimum: 0, maximum: 36_500 })),
          downloadTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
          maxDownloadBytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 2 * 1024 * 1024 * 1024 })),
        },
        { additionalProperties: false },
      ),
    ),
    jobs: Type.Optional(
      Type.Object(
        {
          concurrency: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
          claimSeconds: Type.Optional(Type.Integer({ minimum: 2, maximum: 3_600 })),
          /** The earlier name of `claimSeconds`, still read. */
          leaseSeconds: Type.Optional(Type.Integer({ minimum: 2, maximum: 3_600 })),
          maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
          retryBaseMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 600_000 })),
          maxJobSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 * 86_400 })),
          idlePollMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 60_000 })),
          syncWaitMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
          taskPollMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 600_000 })),
        },
        { additionalProperties: false },
      ),
    ),
    webhooks: Type.Optional(
      Type.Object(
        {
          maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
          timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000 })),
          retryBaseMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000 })),
          claimSeconds: Type.Optional(Type.Integer({ minimum: 2, maximum: 3_600 })),
          concurrency: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000 })),
          idlePollMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 60_000 })),
          retentionDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_650 })),
        },
        { additionalProperties: false },
      ),
    ),
    remoteMedia: Type.Optional(
      Type.Object(
        {
          timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
          maxBytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 512 * 1024 * 1024 })),
          maxRequestBytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 2 * 1024 * 1024 * 1024 })),
          allowPrivateAddresses: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type ConfigFile = Static<typeof ConfigFileSchema>;
export type ModelEntry = ConfigFile['models'][number];
export type ProviderEntry = ConfigFile['providers'][string];
export type VoiceEntry = NonNullable<ConfigFile['voices']>[number];
export type { Protocol };
