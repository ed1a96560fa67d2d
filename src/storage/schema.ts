import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { priceSources, type PriceSource } from '../domain/price-version.ts';
import {
  auditActorKinds,
  auditSubjectTypes,
  type AuditActorKind,
  type AuditSubjectType,
} from '../domain/audit-entry.ts';
import { mediaJobPhases, mediaJobStates, type MediaJobPhase, type MediaJobState } from '../domain/media-job.ts';
import { mediaKinds, type MediaKind } from '../domain/usage-modalities.ts';
import { accountRoles, type AccountRole } from '../domain/account-role.ts';

import { webhookDeliveryStates, type WebhookDeliveryState } from '../domain/webhook-events.ts';
import { routingStrategyNames, type RoutingStrategyName } from '../domain/generation-route.ts';

const nanos = (name: string) => bigint(name, { mode: 'bigint' });
const moment = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
/** Bytes as they are: unlike `text`, a `bytea` holds any, a NUL among them. */
const bytes = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });
/** `column IN (...)` of a fixed list of words: the database holds a union-typed column to its union. */
const oneOf = (column: string, values: readonly string[]) =>
  `${column} IN (${values.map((value) => `'${value}'`).join(', ')})`;

export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull().unique(),
    passwordHash: text('password_hash'),
    /** Credits minus settled charges. */
    balanceNanos: nanos('balance_nanos').notNull().default(sql`0`),
    /** Sum of this account's outstanding holds; available = balance - held. */
    heldNanos: nanos('held_nanos').notNull().default(sql`0`),
    /** Rate limits every key of the account has unless it has its own (null: none). */
    requestsPerMinute: integer('requests_per_minute'),
    tokensPerMinute: integer('tokens_per_minute'),
    concurrentRequests: integer('concurrent_requests'),
    /** Below this balance a `balance.low` webhook event is sent, once per crossing (null: no alert; migration 0015). */
    balanceAlertNanos: nanos('balance_alert_nanos'),
    createdAt: moment('created_at').notNull().defaultNow(),
    /** `operator` opens the operator console (migration 0016); `user` is every other account. */
    role: text('role').$type<AccountRole>().notNull().default('user'),
    /** Set while an operator has the account disabled: its keys and sessions are refused on every surface. */
    disabledAt: moment('disabled_at'),
  },
  () => [check('accounts_role_check', sql.raw(oneOf('"accounts"."role"', accountRoles)))],
);

export const creditGrants = pgTable(
  'credit_grants',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    amountNanos: nanos('amount_nanos').notNull(),
    note: text('note'),
    createdAt: moment('created_at').notNull().defaultNow(),
  },
  (table) => [index('credit_grants_account_idx').on(table.accountId, table.createdAt)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull(),
    /** First characters of the raw key, for recognising it in lists. */
    displayPrefix: text('display_prefix').notNull(),
    /** HMAC-SHA-256 of the raw key under a key derived from GATEWAY_SECRET: the lookup index. */
    lookupHash: text('lookup_hash').notNull().unique(),
    /** AES-256-GCM sealed raw key, so the owner can reveal it again. */
    sealedKey: text('sealed_key').notNull(),
    isActive: boolean('is_active').notNull().default(true),
    revokedAt: moment('revoked_at'),
    dailyLimitNanos: nanos('daily_limit_nanos'),
    weeklyLimitNanos: nanos('weekly_limit_nanos'),
    monthlyLimitNanos: nanos('monthly_limit_nanos'),
    totalLimitNanos: nanos('total_limit_nanos'),
    /** The key's rate limits; null falls back to the account's. */
    requestsPerMinute: integer('requests_per_minute'),
    tokensPerMinute: integer('tokens_per_minute'),
    concurrentRequests: integer('concurrent_requests'),
    heldNanos: nanos('held_nanos').notNull().default(sql`0`),
    spentTotalNanos: nanos('spent_total_nanos').notNull().default(sql`0`),
    dayStart: date('day_start', { mode: 'string' }),
    spentDayNanos: nanos('spent_day_nanos').notNull().default(sql`0`),
    weekStart: date('week_start', { mode: 'string' }),
    spentWeekNanos: nanos('spent_week_nanos').notNull().default(sql`0`),
    monthStart: date('month_start', { mode: 'string' }),
    spentMonthNanos: nanos('spent_month_nanos').notNull().default(sql`0`),
    /** Kept by the webhook triggers (migration 0015): an active endpoint of the account takes `api_key.cap_reached`. */
    capAlerts: boolean('cap_alerts').notNull().default(false),
    createdAt: moment('created_at').notNull().defaultNow(),
    updatedAt: moment('updated_at').notNull().defaultNow(),
  },
  (table) => [index('api_keys_account_idx').on(table.accountId, table.createdAt)],
);

export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    tokenHash: text('token_hash').notNull().unique(),
    expiresAt: moment('expires_at').notNull(),
    createdAt: moment('created_at').notNull().defaultNow(),
  },
  (table) => [index('sessions_expiry_idx').on(table.expiresAt)],
);

export const gatewayInstances = pgTable('gateway_instances', {
  id: text('id').primaryKey(),
  startedAt: moment('started_at').notNull().defaultNow(),
  heartbeatAt: moment('heartbeat_at').notNull().defaultNow(),
});

export const holds = pgTable(
  'holds',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    apiKeyId: text('api_key_id').references(() => apiKeys.id),
    amountNanos: nanos('amount_nanos').notNull(),
    instanceId: text('instance_id').notNull(),
    createdAt: moment('created_at').notNull().defaultNow(),
  },
  (table) => [index('holds_instance_idx').on(table.instanceId)],
);

export const generations = pgTable(
  'generations',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    apiKeyId: text('api_key_id').references(() => apiKeys.id),
    modality: text('modality').notNull(),
    model: text('model').notNull(),
    status: text('status').notNull(),
    request: jsonb('request'),
    usage: jsonb('usage'),
    usdCostNanos: nanos('usd_cost_nanos').notNull().default(sql`0`),
    durationMs: integer('duration_ms'),
    /** How the generation reached its upstream (provider row, fallbacks, request id, first byte): for operators only. */
    route: jsonb('route'),
    /** The price version (`price_versions.id`) the record was charged at; null on records older than versions. */
    priceVersion: text('price_version'),
    createdAt: moment('created_at').notNull().defaultNow(),
  },
  (table) => [
    index('generations_account_created_idx').on(table.accountId, table.createdAt.desc(), table.id.desc()),
    index('generations_created_idx').on(table.createdAt.desc(), table.id.desc()),
    index('generations_key_created_idx').on(table.apiKeyId, table.createdAt).where(sql`${table.apiKeyId} is not null`),
  ],
);

/**
 * Asynchronous media jobs (image, video and audio share the table). One row per job, its id being the
 * generation id clients poll and the id of the usage record it settles into. States follow the spec's
 * machines; `phase` says how far a running job got, so a job taken over from a dead process resumes
 * without sending anything upstream twice. A process runs a job under its claim (`claimedBy` until
 * `claimExpiresAt`, renewed while it runs); a job whose claim ran out is taken over. The JSON columns
 * are written and read through `domain/media-job.ts`'s schemas, never cast.
 */
export const mediaJobs = pgTable(
  'media_jobs',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    apiKeyId: text('api_key_id').references(() => apiKeys.id),
    kind: text('kind').$type<MediaKind>().notNull(),
    model: text('model').notNull(),
    providerId: text('provider_id').notNull(),
    upstreamModel: text('upstream_model').notNull(),
    /** The `x-request-id` of the submission, for the record's route. */
    requestId: text('request_id'),
    /** The routing strategy the model named when the job was queued (null: none named), for the record's route. */
    routingStrategy: text('routing_strategy').$type<RoutingStrategyName>(),
    /** The validated request, as the adapter is asked it. */
    request: jsonb('request').notNull(),
    /** What the usage record keeps of the request (base64 truncated). */
    recordedRequest: jsonb('recorded_request').notNull(),
    state: text('state').$type<MediaJobState>().notNull(),
    /** null: nothing sent upstream yet; `sent`: the upstream call began; `task`: its task id is stored; `generated`: its answer is stored, outputs being archived. */
    phase: text('phase').$type<MediaJobPhase>(),
    /** Rows tried before the one the job is on (failed, or skipped for an open breaker): its record's route names them. */
    fallbacks: jsonb('fallbacks').notNull().default([]),
    upstreamTaskId: text('upstream_task_id'),
    upstreamResult: jsonb('upstream_result'),
    attempts: integer('attempts').notNull().default(0),
    /** The model's prices at submission, in nano-USD: settlement uses these whatever the catalog says later. */
    priceSnapshot: jsonb('price_snapshot').notNull(),
    holdId: text('hold_id').notNull(),
    holdNanos: nanos('hold_nanos').notNull(),
    result: jsonb('result'),
    error: text('error'),
    /**
     * A failed job's provider error answer, when its last upstream call was answered with an error status: the
     * status, the body (at most 64 KiB, scrubbed of credentials; bytes, as a provider's body may hold a NUL that
     * `text` refuses) and the content type as relayed. A request waiting for the job relays them (spec, Errors 2).
     */
    upstreamErrorStatus: integer('upstream_error_status'),
    upstreamErrorBody: bytes('upstream_error_body'),
    upstreamErrorContentType: text('upstream_error_content_type'),
    /** The wait the provider asked for with that answer (`retry-after`, `retry-after-ms`), relayed with it. */
    upstreamErrorRetryAfterMs: integer('upstream_error_retry_after_ms'),
    /** The process running the job; null while no process does. */
    claimedBy: text('claimed_by'),
    /** When the claim runs out unless renewed: past it, another process takes the job over. */
    claimExpiresAt: moment('claim_expires_at'),
    runAfter: moment('run_after').notNull().defaultNow(),
    deadlineAt: moment('deadline_at').notNull(),
    createdAt: moment('created_at').notNull().defaultNow(),
    updatedAt: moment('updated_at').notNull().defaultNow(),
    finishedAt: moment('finished_at'),
  },
  (table) => [
    index('media_jobs_due_idx').on(table.runAfter).where(sql`${table.state} in ('queued', 'processing')`),
    index('media_jobs_account_idx').on(table.accountId, table.createdAt),
    check('media_jobs_kind_check', sql.raw(oneOf('"media_jobs"."kind"', mediaKinds))),
    check('media_jobs_state_check', sql.raw(oneOf('"media_jobs"."state"', mediaJobStates))),
    check(
      'media_jobs_phase_check',
      sql.raw(`"media_jobs"."phase" IS NULL OR ${oneOf('"media_jobs"."phase"', mediaJobPhases)}`),
    ),
    check(
      'media_jobs_routing_strategy_check',
      sql.raw(
        `"media_jobs"."routing_strategy" IS NULL OR ${oneOf('"media_jobs"."routing_strategy"', routingStrategyNames)}`,
      ),
    ),
  ],
);

/** Archived outputs: an owner may reuse one as an input (`imageAssetId`); kept until `expiresAt`. */
export const mediaAssets = pgTable(
  'media_assets',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    jobId: text('job_id').notNull(),
    objectKey: text('object_key').notNull(),
    mediaType: text('media_type').notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    createdAt: moment('created_at').notNull().defaultNow(),
    expiresAt: moment('expires_at'),
  },
  (table) => [
    index('media_assets_expiry_idx').on(table.expiresAt).where(sql`${table.expiresAt} is not null`),
    index('media_assets_job_idx').on(table.jobId),
  ],
);

/**
 * The audit log: one row per change an operator or an account made (credit, keys, caps, limits, sign-in and
 * sign-out, a job's cancel), written once and never changed: a trigger refuses UPDATE, DELETE and TRUNCATE (migration 0012).
 * No foreign keys, so that an entry outlives what it names. `before`, `after` and `request` are written and
 * read through `domain/audit-entry.ts`'s schemas and never hold a secret (key, password, token, session).
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: text('id').primaryKey(),
    createdAt: moment('created_at').notNull().defaultNow(),
    /** `operator` (the admin token, the CLI) or `account` (a session, or a key of the account). */
    actorKind: text('actor_kind').$type<AuditActorKind>().notNull(),
    actorAccountId: text('actor_account_id'),
    actorApiKeyId: text('actor_api_key_id'),
    action: text('action').notNull(),
    /** The account the change concerns: the one the account API lists the entry to. */
    accountId: text('account_id'),
    subjectType: text('subject_type').$type<AuditSubjectType>().notNull(),
    subjectId: text('subject_id'),
    before: jsonb('before'),
    after: jsonb('after'),
    request: jsonb('request'),
    /** The client's address (behind a trusted proxy, the forwarded one); null for the CLI. */
    clientAddress: text('client_address'),
    requestId: text('request_id'),
  },
  (table) => [
    index('audit_log_created_idx').on(table.createdAt.desc(), table.id.desc()),
    index('audit_log_account_idx').on(table.accountId, table.createdAt.desc()),
    index('audit_log_request_idx').on(table.requestId),
    check('audit_log_actor_kind_check', sql.raw(oneOf('"audit_log"."actor_kind"', auditActorKinds))),
    check('audit_log_subject_type_check', sql.raw(oneOf('"audit_log"."subject_type"', auditSubjectTypes))),
  ],
);

/**
 * The runtime catalog (migration 0013): what an operator changed through the admin API over gateway.yaml, per
 * model id. `entry`: a whole model entry (gateway.yaml's shape) that replaces the file's; `pricing`: prices
 * (USD, gateway.yaml's shape) over whichever entry serves; `active`: switched on or off whatever the entry says.
 * Null fields change nothing. Read back through the model and pricing schemas of gateway.yaml (catalog/runtime-catalog.ts).
 */
export const runtimeModels = pgTable('runtime_models', {
  modelId: text('model_id').primaryKey(),
  entry: jsonb('entry'),
  pricing: jsonb('pricing'),
  active: boolean('active'),
  updatedAt: moment('updated_at').notNull().defaultNow(),
});

/**
 * Every price a model has had, oldest first (`seq`): a version is added when a model's effective prices differ
 * from its latest one. `pricing` is gateway.yaml's USD object as validated; `pricingHash` its canonical hash.
 * Usage records name the version they were charged at.
 */
export const priceVersions = pgTable(
  'price_versions',
  {
    id: text('id').primaryKey(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity().notNull(),
    modelId: text('model_id').notNull(),
    pricing: jsonb('pricing').notNull(),
    pricingHash: text('pricing_hash').notNull(),
    source: text('source').$type<PriceSource>().notNull(),
    /** Who set it: `operator` (admin API), or null for gateway.yaml. */
    actor: text('actor'),
    createdAt: moment('created_at').notNull().defaultNow(),
  },
  (table) => [
    index('price_versions_model_idx').on(table.modelId, table.seq.desc()),
    check('price_versions_source_check', sql.raw(oneOf('"price_versions"."source"', priceSources))),
  ],
);

/**
 * Upstream keys of providers added at runtime (admin API), beside those of gateway.yaml: sealed with a key
 * derived from GATEWAY_SECRET, as stored API keys are. `key_ending` is the key's last 4 characters, all an
 * operator is shown of it. Every gateway process reads them at start and again on each change it hears.
 */
export const providerKeys = pgTable(
  'provider_keys',
  {
    id: text('id').primaryKey(),
    /** A provider id of gateway.yaml (not a foreign key: providers live in the file). */
    providerId: text('provider_id').notNull(),
    label: text('label'),
    weight: integer('weight').notNull().default(1),
    isActive: boolean('is_active').notNull().default(true),
    sealedKey: text('sealed_key').notNull(),
    keyEnding: text('key_ending').notNull(),
    createdAt: moment('created_at').notNull().defaultNow(),
    updatedAt: moment('updated_at').notNull().defaultNow(),
  },
  (table) => [
    index('provider_keys_provider_idx').on(table.providerId),
    check('provider_keys_weight_check', sql`${table.weight} >= 0`),
  ],
);

/** An account's webhook endpoint; its signing secret sealed with the gateway secret (migration 0015). */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    url: text('url').notNull(),
    description: text('description').notNull().default(''),
    eventTypes: text('event_types').array().notNull(),
    isActive: boolean('is_active').notNull().default(true),
    /** AES-256-GCM sealed `whsec_` secret (identity/credential-codec.ts). */
    sealedSecret: text('sealed_secret').notNull(),
    createdAt: moment('created_at').notNull().defaultNow(),
    updatedAt: moment('updated_at').notNull().defaultNow(),
  },
  (table) => [index('webhook_endpoints_account_idx').on(table.accountId, table.createdAt)],
);

/**
 * One event for one endpoint, delivered at least once: its id is the `webhook-id` of every attempt. Claimed
 * across processes as media jobs are (`claimedBy` until `claimExpiresAt`); a claim that ran out is taken again.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    accountId: text('account_id').notNull(),
    eventType: text('event_type').notNull(),
    data: jsonb('data').notNull(),
    state: text('state').$type<WebhookDeliveryState>().notNull().default('queued'),
    attempts: integer('attempts').notNull().default(0),
    runAfter: moment('run_after').notNull().defaultNow(),
    claimedBy: text('claimed_by'),
    claimExpiresAt: moment('claim_expires_at'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: moment('created_at').notNull().defaultNow(),
    updatedAt: moment('updated_at').notNull().defaultNow(),
    finishedAt: moment('finished_at'),
  },
  (table) => [
    // The claim's (migration 0025): each endpoint's pending deliveries in the order they fall due, and the
    // ones in flight, counted per endpoint to share the sending slots out between accounts and endpoints.
    index('webhook_deliveries_pending_idx')
      .on(table.endpointId, table.runAfter, table.createdAt)
      .where(sql`${table.state} in ('queued', 'delivering')`),
    index('webhook_deliveries_in_flight_idx')
      .on(table.endpointId, table.claimExpiresAt)
      .where(sql`${table.state} = 'delivering'`),
    index('webhook_deliveries_finished_idx').on(table.finishedAt).where(sql`${table.finishedAt} is not null`),
    index('webhook_deliveries_endpoint_idx').on(table.endpointId, table.createdAt.desc(), table.id.desc()),
    check('webhook_deliveries_state_check', sql.raw(oneOf('"webhook_deliveries"."state"', webhookDeliveryStates))),
  ],
);

/** Each attempt of a delivery: its answer's status, latency and a bounded excerpt, or the error. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: text('id').primaryKey(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    statusCode: integer('status_code'),
    latencyMs: integer('latency_ms').notNull(),
    error: text('error'),
    responseExcerpt: text('response_excerpt'),
    createdAt: moment('created_at').notNull().defaultNow(),
  },
  (table) => [index('webhook_attempts_delivery_idx').on(table.deliveryId, table.attempt)],
);

/** The cap levels announced (`api_key.cap_reached`): one row per key, cap, level and window, written by a trigger. */
export const apiKeyCapAlerts = pgTable(
  'api_key_cap_alerts',
  {
    apiKeyId: text('api_key_id')
      .notNull()
      .references(() => apiKeys.id),
    cap: text('cap').notNull(),
    level: integer('level').notNull(),
    windowStart: text('window_start').notNull(),
    createdAt: moment('created_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ name: 'api_key_cap_alerts_pk', columns: [table.apiKeyId, table.cap, table.level, table.windowStart] }),
  ],
);

/**
 * What GATEWAY_SECRET the database is used with (migration 0020), without the secret: one row, `gateway-secret`,
 * whose verifier is an HMAC of a fixed label under a key derived from the secret (identity/secret-keys.ts).
 * Written by the first process that opens the database, compared by every later one (identity/gateway-secret.ts).
 */
export const secretVerifiers = pgTable('secret_verifiers', {
  name: text('name').primaryKey(),
  verifier: text('verifier').notNull(),
  createdAt: moment('created_at').notNull().defaultNow(),
});
