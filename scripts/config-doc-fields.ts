// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the configuration file's interpolation syntax
import { defaultMaxOutputTokens } from '../src/billing/token-estimate.ts';
import { configDefaults as d } from '../src/config/load-config.ts';

/** What a gateway.yaml key means and, where it has one, the value taken when it is left out. */
export interface FieldDoc {
  meaning: string;
  default?: string | number | boolean;
}

/** The environment variables the gateway reads (src/config/environment.ts). */
export const environmentVariables: Array<{ name: string; meaning: string; default: string }> = [
  { name: '`PORT` / `HOST`', meaning: 'listen address', default: '`8080` / `127.0.0.1`' },
  {
    name: '`DATA_DIR`',
    meaning:
      'embedded database (`DATA_DIR/pg`), its lock (`DATA_DIR/gateway.lock`), generated secret, archived media (`DATA_DIR/media`, filesystem store)',
    default: '`./data`',
  },
  { name: '`DATABASE_URL`', meaning: 'PostgreSQL URL; when set the embedded database is not used', default: 'unset' },
  {
    name: '`REDIS_URL`',
    meaning:
      'Redis (`redis://` or `rediss://`) holding the counters of the per-key rate limits and the sign-in throttle, shared by every process ([rate limits](money.md#rate-limits))',
    default: "unset: counters in each process's memory",
  },
  { name: '`GATEWAY_CONFIG`', meaning: 'path of the catalog/provider file', default: '`./gateway.yaml`' },
  {
    name: '`GATEWAY_ADMIN_TOKEN`',
    meaning: 'bearer token that opens the admin API',
    default: 'unset: admin API answers 404',
  },
  {
    name: '`GATEWAY_SECRET`',
    meaning:
      'master secret (at least 32 characters): seals stored API keys, keys the credential hashes. Keep it safe and stable: losing it makes stored keys unrevealable and unusable',
    default:
      'generated once into `DATA_DIR/gateway-secret` in embedded mode; **required** with `DATABASE_URL` (by every command but `gateway migrate` and `gateway models list`, which do not use it)',
  },
  {
    name: '`PUBLIC_BASE_URL`',
    meaning:
      'absolute base URL of the gateway: `https://` makes session cookies `Secure`, and download and polling links are made on it',
    default:
      "`http://HOST:PORT`, never the request's `Host` or forwarded headers; the gateway warns at start when `HOST` is not loopback and this is unset",
  },
  { name: '`LOG_LEVEL`', meaning: '`fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`', default: '`info`' },
  {
    name: '`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`, `OPENROUTER_API_KEY`, `ARK_API_KEY`, `SPEECH_API_KEY`',
    meaning:
      'read by the shipped gateway.yaml (`${VAR}`): each provider whose key is set becomes active, and its models appear in the catalog',
    default: 'unset: only the sandbox models are active',
  },
  {
    name: '`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `GEMINI_BASE_URL`, `OPENROUTER_BASE_URL`, `ARK_BASE_URL`, `SPEECH_BASE_URL`',
    meaning: 'read by the shipped gateway.yaml: where each provider is reached (a proxy, a compatible server)',
    default: "the vendors' own addresses",
  },
  {
    name: '`GATEWAY_METRICS_TOKEN`',
    meaning: 'read by the shipped gateway.yaml: `/metrics` then asks `Authorization: Bearer <token>`',
    default: 'unset: `/metrics` is open',
  },
  {
    name: '`OTEL_EXPORTER_OTLP_ENDPOINT`',
    meaning: 'read by the shipped gateway.yaml: where traces are exported ([operations](operations.md))',
    default: 'unset: no traces are exported',
  },
];

/**
 * Every key of gateway.yaml, by path: `providers.<id>` is any provider id, `models[]` an item of the list. The
 * generator refuses a schema key missing here, and a path here that the schema does not have.
 */
export const fieldDocs: Record<string, FieldDoc> = {
  providers: {
    meaning:
      'upstream endpoints, by an id that clients see in the catalog ([what clients see of providers](models.md#what-clients-see-of-providers))',
  },
  'providers.<id>': { meaning: 'one upstream endpoint' },
  'providers.<id>.protocol': { meaning: 'the wire protocol it speaks; `sandbox` is the built-in offline provider' },
  'providers.<id>.baseUrl': { meaning: 'base URL of its API' },
  'providers.<id>.apiKey': {
    meaning:
      'its credential; a provider whose key resolves empty (and with no `apiKeys`) is inactive until an active runtime key is added (docs/provider-keys.md)',
  },
  'providers.<id>.apiKeys': {
    meaning:
      'several upstream keys besides `apiKey`, each request drawing one by weight ([provider keys](provider-keys.md))',
  },
  'providers.<id>.apiKeys[].id': { meaning: "the key's id, shown to operators and in usage routes (never the key)" },
  'providers.<id>.apiKeys[].key': { meaning: 'the key itself, as `${VAR}`; one that resolves empty is left out' },
  'providers.<id>.apiKeys[].weight': { meaning: 'its share of requests; 0 keeps it as a last resort', default: 1 },
  'providers.<id>.timeoutMs': {
    meaning: 'longest a whole generation may take; then the upstream is cut',
    default: d.providerTimeoutMs,
  },
  'providers.<id>.firstByteTimeoutMs': {
    meaning: "longest wait for the answer's headers, and between body chunks",
    default: d.providerFirstByteTimeoutMs,
  },
  'providers.<id>.headers': { meaning: 'extra headers sent upstream (never logged)' },
  'providers.<id>.maxConcurrentJobs': {
    meaning: 'media jobs of this provider one process runs at once; more wait in the queue',
    default: d.maxConcurrentJobs,
  },
  models: { meaning: 'the catalog ([models and providers](models.md))' },
  'models[].id': { meaning: 'the catalog id clients send as `model`' },
  'models[].name': { meaning: 'display name' },
  'models[].revision': { meaning: 'revision shown in the catalog', default: 1 },
  'models[].isActive': { meaning: 'false switches the model off', default: true },
  'models[].inputModalities': { meaning: 'what the model takes' },
  'models[].outputModalities': { meaning: 'what it makes (`embedding` for vector models)' },
  'models[].pricing': { meaning: 'prices in USD ([money](money.md)); a model without pricing is refused with 400' },
  'models[].pricing.inputPerMTok': { meaning: 'text and embeddings: USD per million input tokens' },
  'models[].pricing.outputPerMTok': { meaning: 'text: USD per million output tokens' },
  'models[].pricing.inputPerImage': { meaning: 'embeddings: USD per input image' },
  'models[].pricing.inputPerAudioSecond': { meaning: 'embeddings: USD per second of input audio' },
  'models[].pricing.inputPerVideoSecond': { meaning: 'embeddings: USD per second of input video' },
  'models[].pricing.inputPerFile': { meaning: 'embeddings: USD per input PDF' },
  'models[].pricing.perImage': { meaning: 'images: USD per output image (each layer of a decomposition counts)' },
  'models[].pricing.perImageByQuality': { meaning: 'images: USD per output image by quality (OpenAI models)' },
  'models[].pricing.perImageByQuality.low': { meaning: 'at quality `low`' },
  'models[].pricing.perImageByQuality.medium': { meaning: 'at quality `medium`' },
  'models[].pricing.perImageByQuality.high': { meaning: 'at quality `high` (and `auto`)' },
  'models[].pricing.perMCharacters': { meaning: 'text-to-speech: USD per million characters of text' },
  'models[].pricing.perVideoSecond': { meaning: 'video: USD per output second' },
  'models[].pricing.perVideoSecondByResolution': { meaning: 'video: USD per output second at each resolution' },
  'models[].pricing.perVideoSecondByResolution.480p': { meaning: 'at 480p' },
  'models[].pricing.perVideoSecondByResolution.720p': { meaning: 'at 720p' },
  'models[].pricing.perVideoSecondByResolution.1080p': { meaning: 'at 1080p' },
  'models[].pricing.perVideoSecondByResolution.4k': { meaning: 'at 4k' },
  'models[].pricing.perAudioSecond': { meaning: 'generation with reference: USD per second the model makes' },
  'models[].limits': { meaning: 'limits of the model' },
  'models[].limits.maxOutputTokens': {
    meaning: 'text: the output limit held and sent upstream when the client sets none',
    default: defaultMaxOutputTokens,
  },
  'models[].providers': {
    meaning: 'provider rows: the active row with the lowest priority wins, the others are fallbacks',
  },
  'models[].routing': {
    meaning:
      'how each request orders the rows: `priority`, `weighted`, `latency` or `price` ([provider keys](provider-keys.md))',
    default: 'priority',
  },
  'models[].providers[].provider': { meaning: 'a provider id of `providers`' },
  'models[].providers[].model': { meaning: 'upstream model id the request is rewritten to' },
  'models[].providers[].priority': { meaning: 'order of the rows, lowest first' },
  'models[].providers[].standIn': {
    meaning:
      'the row serves only while no other row of the model is active (the sandbox standing in for a provider without a key); never a fallback after another row failed',
    default: false,
  },
  'models[].providers[].weight': { meaning: 'share of requests under `routing: weighted`', default: 1 },
  'models[].providers[].cost': {
    meaning: 'what the row costs the operator upstream, for `routing: price` (never what accounts are charged)',
  },
  'models[].providers[].cost.inputPerMTok': { meaning: 'USD per million input tokens upstream' },
  'models[].providers[].cost.outputPerMTok': { meaning: 'USD per million output tokens upstream' },
  'models[].providers[].capabilities': {
    meaning: 'what the row accepts ([capabilities](models.md#capabilities)); absent = unconstrained',
  },
  'models[].providers[].capabilities.text': { meaning: 'text models' },
  'models[].providers[].capabilities.text.supportedParameters': {
    meaning: 'the optional parameters the model accepts; any other answers 400 unless `strictParams: false`',
  },
  'models[].providers[].capabilities.params': {
    meaning: 'constraints of request values, by parameter: `enum`, `range`, `int`, `bool`',
  },
  'models[].providers[].capabilities.image': { meaning: 'image models' },
  'models[].providers[].capabilities.image.params': { meaning: 'constraints of image request fields' },
  'models[].providers[].capabilities.video': { meaning: 'video models' },
  'models[].providers[].capabilities.video.params': {
    meaning: 'constraints of video request fields; a `default` is what a request without the field is held for',
  },
  'models[].providers[].capabilities.inputs': { meaning: 'embedding inputs; other keys describe inputs for clients' },
  'models[].providers[].capabilities.inputs.parts': {
    meaning: 'embedding part types accepted; without it text, and images when `inputModalities` has `image`',
  },
  'models[].providers[].capabilities.strictParams': {
    meaning: 'false: an optional parameter the model does not take is dropped and named, not refused',
    default: true,
  },
  'models[].createdAt': { meaning: 'shown in the catalog' },
  'models[].updatedAt': { meaning: 'shown in the catalog' },
  voices: { meaning: 'the text-to-speech voice catalog (`GET /api/v1/audio/voices`)' },
  'voices[].voiceType': { meaning: 'the id requests name the voice by' },
  'voices[].name': { meaning: 'display name' },
  'voices[].gender': { meaning: 'gender of the voice' },
  'voices[].age': { meaning: 'age of the voice' },
  'voices[].categories': {
    meaning: 'e.g. General, Dubbing, Advertisement, AudioBook, Conversational, Entertainment, SocialMedia',
  },
  'voices[].languages': { meaning: 'languages it speaks, each with a sample text' },
  'voices[].languages[].language': { meaning: 'BCP-47 code' },
  'voices[].languages[].text': { meaning: 'sample text' },
  'voices[].languages[].flag': { meaning: 'flag emoji' },
  'voices[].resourceId': {
    meaning: 'a model of the catalog that speaks it; voices of `seed-tts-2.0` take `contextTexts`',
  },
  'voices[].avatar': { meaning: 'picture URL' },
  'voices[].trialUrl': { meaning: 'sample audio URL' },
  'voices[].description': { meaning: 'description' },
  server: { meaning: 'the HTTP server' },
  'server.bodyLimitBytes': { meaning: 'larger request bodies answer 413', default: d.bodyLimitBytes },
  'server.shutdownGraceMs': {
    meaning: 'in-flight requests and running jobs get this long after SIGTERM/SIGINT',
    default: d.shutdownGraceMs,
  },
  'server.drainDelayMs': {
    meaning: '`/readyz` answers 503 this long after SIGTERM while the process still serves',
    default: d.drainDelayMs,
  },
  'server.headersTimeoutMs': {
    meaning: 'request line and headers must arrive within this; else 408 and the connection closes',
    default: d.headersTimeoutMs,
  },
  'server.requestTimeoutMs': {
    meaning: 'the whole request, body included (not the answer); at least `headersTimeoutMs`',
    default: d.requestTimeoutMs,
  },
  'server.keepAliveTimeoutMs': {
    meaning: 'an idle keep-alive connection is closed after this',
    default: d.keepAliveTimeoutMs,
  },
  'server.maxJsonDepth': { meaning: 'deeper nesting in a JSON body answers 400', default: d.maxJsonDepth },
  'server.multipart': { meaning: 'multipart forms (alpha videos), checked while the body streams in' },
  'server.multipart.maxParts': { meaning: 'one more part answers 400', default: d.multipartMaxParts },
  'server.multipart.maxFields': { meaning: 'text fields; one more answers 400', default: d.multipartMaxFields },
  'server.multipart.maxFieldBytes': {
    meaning: 'bytes of one text field; more answers 413',
    default: d.multipartMaxFieldBytes,
  },
  'server.multipart.maxFiles': {
    meaning: 'uploaded files, on routes that take them (none yet)',
    default: d.multipartMaxFiles,
  },
  'server.multipart.maxFileBytes': {
    meaning: 'bytes of one uploaded file; more answers 413',
    default: d.multipartMaxFileBytes,
  },
  'server.trustProxy': {
    meaning:
      'load balancers whose `X-Forwarded-For` names the client (addresses, CIDR ranges, `loopback`, `linklocal`, `uniquelocal`); default none',
  },
  accounts: { meaning: 'accounts, keys and sign-in' },
  'accounts.maxApiKeys': { meaning: 'unrevoked keys per account; one more answers 403', default: d.maxApiKeys },
  'accounts.signupCredits': {
    meaning: 'USD granted by self-signup (the shipped gateway.yaml sets 1 to try the sandbox; 0 in production)',
    default: d.signupCreditsUsd,
  },
  'accounts.sessionTtlHours': { meaning: 'sessions expire after this', default: d.sessionTtlHours },
  'accounts.selfSignup': {
    meaning: 'false: `POST /api/v1/auth/signup` answers 403 (accounts come from the admin API or CLI)',
    default: true,
  },
  'accounts.loginFailuresPerEmail': {
    meaning: 'failed logins per email within the window, then 429',
    default: d.loginFailuresPerEmail,
  },
  'accounts.loginFailuresPerAddress': {
    meaning: 'failed logins per client address within the window, whatever the emails, then 429',
    default: d.loginFailuresPerAddress,
  },
  'accounts.signupsPerAddress': {
    meaning: 'signups per client address within the window, then 429',
    default: d.signupsPerAddress,
  },
  'accounts.throttleWindowSeconds': {
    meaning: 'the fixed window of the three limits above',
    default: d.throttleWindowSeconds,
  },
  'accounts.throttleMaxEntries': {
    meaning: 'accepted and no longer applied: the counters expire with their window',
    default: d.throttleMaxEntries,
  },
  rateLimits: { meaning: 'per-key rate limits ([rate limits](money.md#rate-limits))' },
  'rateLimits.redisFailure': {
    meaning: 'Redis unreachable: `open` admits without rate limits (warned once per outage), `closed` answers 503',
    default: 'open',
  },
  'rateLimits.redisKeyPrefix': {
    meaning: 'names of the counters in Redis start with it (gateways sharing one Redis keep theirs apart)',
    default: 'gateway:rl',
  },
  ledger: { meaning: 'the credit ledger ([money](money.md))' },
  'ledger.orphanHoldSeconds': {
    meaning: 'holds of a process silent this long are released; at least twice `heartbeatSeconds`',
    default: d.orphanHoldSeconds,
  },
  'ledger.heartbeatSeconds': { meaning: 'how often a process proves it is alive', default: d.heartbeatSeconds },
  'ledger.leaseMaxUsd': {
    meaning: 'largest block of credit one lease extension takes; 0: a hold row per request',
    default: d.leaseMaxUsd,
  },
  'ledger.leaseIdleMs': { meaning: 'a lease unused this long gives back what it holds', default: d.leaseIdleMs },
  'ledger.settlementWaitMs': {
    meaning:
      "a read of an account's balance, spend or usage waits this long at most for this process's settlements of it",
    default: d.settlementWaitMs,
  },
  limits: { meaning: 'billing limits' },
  'limits.maxDurationOverrun': {
    meaning: 'media billed on seconds delivered is charged at most this times its held duration',
    default: d.maxDurationOverrun,
  },
  usage: { meaning: 'usage listings' },
  'usage.maxPageSize': { meaning: 'largest `limit` of the usage listings', default: d.maxPageSize },
  upstream: { meaning: 'how the gateway treats providers ([operations](operations.md#provider-resilience))' },
  'upstream.connectTimeoutMs': { meaning: 'connecting to a provider; then 502', default: d.upstreamConnectTimeoutMs },
  'upstream.maxConnectionsPerOrigin': {
    meaning: 'connections open to one provider origin at once (each stream holds one); more requests wait',
    default: d.upstreamMaxConnectionsPerOrigin,
  },
  'upstream.maxEventCharacters': {
    meaning: 'a stream event (or line) from a provider growing past this is a protocol failure (502)',
    default: d.maxEventCharacters,
  },
  'upstream.breakerFailures': {
    meaning: "failures in a row (unreachable, timed out, 429, 5xx) that open a provider row's breaker",
    default: d.breakerFailures,
  },
  'upstream.breakerMinAccounts': {
    meaning: '... when they come from at least this many accounts, within `breakerCooldownMs`',
    default: d.breakerMinAccounts,
  },
  'upstream.breakerCooldownMs': {
    meaning: 'an open breaker skips its row this long, then one request probes it',
    default: d.breakerCooldownMs,
  },
  'upstream.retryBudgetMs': {
    meaning: "a provider's `retry-after` is honoured when no other row is left and it fits in this",
    default: d.retryBudgetMs,
  },
  'upstream.maxRetries': { meaning: '... at most this many times per request', default: d.maxRetries },
  telemetry: { meaning: 'metrics and tracing ([operations](operations.md))' },
  'telemetry.metrics': { meaning: '`GET /metrics` (Prometheus text format)', default: true },
  'telemetry.metricsToken': { meaning: 'when set, `/metrics` needs `Authorization: Bearer <token>`' },
  'telemetry.tracing': { meaning: 'OpenTelemetry traces' },
  'telemetry.tracing.otlpEndpoint': { meaning: 'OTLP/HTTP endpoint; unset: tracing is off' },
  'telemetry.tracing.serviceName': { meaning: 'service name of the traces', default: 'model-gateway' },
  media: { meaning: 'generated media, archived by the gateway ([media jobs](media.md))' },
  'media.store': {
    meaning:
      '`fs`: files under `DATA_DIR/media`, served by the processes that share that directory ([several processes](deployment.md#running-on-postgresql-with-several-processes)); `s3`: an S3-compatible bucket',
    default: 'fs',
  },
  'media.s3': { meaning: 'the bucket; required when `store` is `s3`' },
  'media.s3.bucket': { meaning: 'bucket name' },
  'media.s3.region': { meaning: 'region', default: 'us-east-1' },
  'media.s3.endpoint': { meaning: 'http(s) URL of an S3-compatible server' },
  'media.s3.publicEndpoint': {
    meaning: 'where clients reach the bucket, when not at `endpoint`: download links are presigned for it',
  },
  'media.s3.accessKeyId': {
    meaning:
      'credential: it puts, reads, deletes and lists objects under `prefix` (listing: to delete the outputs of a job that failed, [media jobs](media.md#jobs))',
  },
  'media.s3.secretAccessKey': { meaning: 'credential (never logged)' },
  'media.s3.forcePathStyle': { meaning: 'path-style bucket URLs', default: false },
  'media.s3.prefix': { meaning: 'object names start with it', default: '' },
  'media.linkTtlSeconds': { meaning: 'download links expire after this', default: d.linkTtlSeconds },
  'media.retentionDays': {
    meaning: 'archived outputs are deleted after this (0 keeps them), swept every 10 minutes',
    default: d.retentionDays,
  },
  'media.downloadTimeoutMs': {
    meaning: "a provider's output URL must download within this ...",
    default: d.mediaDownloadTimeoutMs,
  },
  'media.maxDownloadBytes': {
    meaning:
      '... and be no larger, or that output is not archived (nor charged); the audio of a text-to-speech answer too',
    default: d.mediaMaxDownloadBytes,
  },
  jobs: { meaning: 'media job workers of each process' },
  'jobs.concurrency': {
    meaning: 'jobs one process runs at once; 0 runs none (a process that only takes requests)',
    default: d.jobConcurrency,
  },
  'jobs.claimSeconds': {
    meaning: 'a job whose process stops renewing its claim this long is taken over',
    default: d.jobClaimSeconds,
  },
  'jobs.leaseSeconds': { meaning: 'the earlier name of `claimSeconds`, still read' },
  'jobs.maxAttempts': {
    meaning:
      'provider calls of one job in all, on every row (fallbacks included); the last row is retried with backoff',
    default: d.jobMaxAttempts,
  },
  'jobs.retryBaseMs': { meaning: 'first retry delay, doubled at each further try', default: d.jobRetryBaseMs },
  'jobs.maxJobSeconds': { meaning: 'a job not finished this long after submission fails', default: d.maxJobSeconds },
  'jobs.idlePollMs': {
    meaning: 'an idle worker looks for due jobs this often (new jobs wake it at once)',
    default: d.jobIdlePollMs,
  },
  'jobs.syncWaitMs': {
    meaning: 'how long `POST /api/v1/image/generations` waits before answering 202',
    default: d.syncWaitMs,
  },
  'jobs.taskPollMs': { meaning: "how often a provider's video task is read while it runs", default: d.taskPollMs },
  webhooks: { meaning: 'the webhook deliveries of each process ([webhooks](webhooks.md))' },
  'webhooks.maxAttempts': {
    meaning: 'attempts of one delivery in all; a 5xx, 429, time-out or failed connection is retried until then',
    default: d.webhookMaxAttempts,
  },
  'webhooks.timeoutMs': { meaning: "one attempt's whole time, connection to answer", default: d.webhookTimeoutMs },
  'webhooks.retryBaseMs': {
    meaning: 'first retry delay, doubled at each further attempt',
    default: d.webhookRetryBaseMs,
  },
  'webhooks.claimSeconds': {
    meaning:
      'a delivery whose process died while sending is sent again this long after it was claimed; above `timeoutMs`',
    default: d.webhookClaimSeconds,
  },
  'webhooks.concurrency': {
    meaning: 'deliveries one process sends at once; 0 sends none',
    default: d.webhookConcurrency,
  },
  'webhooks.idlePollMs': {
    meaning: 'an idle sender looks for due deliveries this often',
    default: d.webhookIdlePollMs,
  },
  'webhooks.retentionDays': {
    meaning: 'ended deliveries and their attempts are kept this long in the delivery log; 0 keeps them for ever',
    default: d.webhookRetentionDays,
  },
  remoteMedia: { meaning: 'images and audio that requests name by URL, fetched by the gateway' },
  'remoteMedia.timeoutMs': { meaning: 'the whole download, redirects included', default: d.remoteMediaTimeoutMs },
  'remoteMedia.maxBytes': { meaning: 'larger files answer 400', default: d.remoteMediaMaxBytes },
  'remoteMedia.maxRequestBytes': {
    meaning: 'all files of one request together; more answers 400',
    default: d.remoteMediaMaxRequestBytes,
  },
  'remoteMedia.allowPrivateAddresses': {
    meaning: "true lets URLs (and media jobs' reference URLs) reach loopback and private networks",
    default: false,
  },
};
