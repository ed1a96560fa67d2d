import Type, { type TSchema } from 'typebox';
import { CapabilitiesSchema, PricingSchema } from '../config/config-schema.ts';
import { AuditRequestSchema, AuditStateSchema, auditActions, auditSubjectTypes } from '../domain/audit-entry.ts';
import { pricingFieldsByKind, type PricingKind } from '../domain/model-pricing.ts';

/**
 * Answers that several surfaces share (account, admin, compat), as the OpenAPI document shows them. Plain
 * TypeBox, importing nothing of the server, so that the dashboard's type check can follow it too; the checks
 * that they agree with the views the code answers with are in openapi/answer-agreements.ts.
 */

const Usd = Type.Number({ description: 'USD' });
/** One optional field per spend window. */
const eachRateLimit = {
  requestsPerMinute: Type.Optional(Type.Integer({ minimum: 1 })),
  tokensPerMinute: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Input and output tokens of settled generations' }),
  ),
  concurrentRequests: Type.Optional(Type.Integer({ minimum: 1 })),
};
const eachCap = <S extends TSchema>(schema: S) => ({
  daily: Type.Optional(schema),
  weekly: Type.Optional(schema),
  monthly: Type.Optional(schema),
  total: Type.Optional(schema),
});

export const AccountSchema = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    creditBalance: Usd,
    role: Type.Union([Type.Literal('user'), Type.Literal('operator')], {
      description: '`operator` opens the operator console; every other account is a `user`',
    }),
  },
  { description: 'The account' },
);

export const BalanceSchema = Type.Object({ creditBalance: Usd }, { description: "The account's credit balance" });

export const ApiKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to tell keys apart' }),
    isActive: Type.Boolean(),
    limits: Type.Object(eachCap(Usd), { description: 'Spend caps in USD, each present only when set' }),
    rateLimits: Type.Object(eachRateLimit, {
      description: "The key's own rate limits, each present only when set (unset: its account's default applies)",
    }),
    createdAt: Type.String(),
  },
  { description: 'An API key, without the key itself' },
);

/** Rate limits as answered: each present only when set. */
export const RateLimitsSchema = Type.Object(eachRateLimit, { description: 'Rate limits, each present only when set' });

export const CreatedKeySchema = Type.Object(
  { ...ApiKeySchema.properties, key: Type.String({ description: 'The key itself (`gwk_…`)' }) },
  { description: 'The new key' },
);

const WindowSpendSchema = Type.Object({ spent: Usd, limit: Type.Optional(Usd), remaining: Type.Optional(Usd) });

/** A key of the list, with what it spent in each window and, where capped, its cap and what remains. */
export const ListedKeySchema = Type.Object({
  ...ApiKeySchema.properties,
  spend: Type.Object({
    daily: WindowSpendSchema,
    weekly: WindowSpendSchema,
    monthly: WindowSpendSchema,
    total: WindowSpendSchema,
  }),
});

const CapStatus = Type.Object({
  limit: Usd,
  spent: Usd,
  remaining: Type.Number({ minimum: 0, description: 'limit - spent, never below 0' }),
});

export const KeyLookupSchema = Type.Object(
  { name: Type.String(), isActive: Type.Literal(true), ...eachCap(CapStatus) },
  { description: "The spec's key lookup: each cap present only when configured; no balance" },
);

/** The spec's generation record (usage row). */
export const GenerationRecordSchema = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  apiKeyId: Type.Optional(Type.String()),
  modality: Type.String({ description: 'text, image, video or audio' }),
  model: Type.String(),
  status: Type.String({ description: 'succeeded, failed, aborted or cancelled' }),
  request: Type.Optional(Type.Unknown()),
  usage: Type.Optional(Type.Unknown()),
  usdCost: Usd,
  durationMs: Type.Optional(Type.Integer()),
  priceVersion: Type.Optional(
    Type.String({
      description:
        "The price version the record was charged at: the model's prices as they stood when the request resolved it (a media job's, when it was submitted). Absent on records older than price versions.",
    }),
  ),
  createdAt: Type.String(),
});

/** The fields of a paged listing beside its `results`. */
export const pageFields = {
  total: Type.Integer({ minimum: 0 }),
  offset: Type.Integer({ minimum: 0 }),
  limit: Type.Integer({ minimum: 1 }),
};

const Attempt = Type.Object({
  providerId: Type.String(),
  upstreamModel: Type.String(),
  outcome: Type.Enum(['failed', 'skipped'] as const),
  reason: Type.String(),
  status: Type.Optional(Type.Integer({ description: "The upstream's status, when it answered one" })),
  keyId: Type.Optional(
    Type.String({ description: "The id of the provider's upstream key the row was tried with (never the key)" }),
  ),
});

const Route = Type.Object(
  {
    providerId: Type.String({ description: 'The provider row that served, or the last one tried' }),
    upstreamModel: Type.String(),
    fallbacks: Type.Array(Attempt, {
      description: 'Rows tried before it: failed, or skipped because their breaker was open',
    }),
    requestId: Type.Optional(Type.String()),
    firstByteMs: Type.Optional(Type.Number()),
    strategy: Type.Optional(
      Type.Enum(['priority', 'weighted', 'latency', 'price'] as const, {
        description: "The model's routing strategy, when its configuration names one: how the rows were ordered",
      }),
    ),
    keyId: Type.Optional(
      Type.String({
        description:
          "The id of the provider's upstream key the serving row was sent with (never the key), when the provider has named keys",
      }),
    ),
  },
  { description: 'How the generation reached its upstream (never shown to accounts)' },
);

export const AuditedGenerationRecordSchema = Type.Object(
  { ...GenerationRecordSchema.properties, route: Type.Optional(Route) },
  { description: 'A usage record with its route' },
);

export const UsagePageSchema = Type.Object(
  { results: Type.Array(GenerationRecordSchema), ...pageFields },
  { description: 'One page of usage records, newest first' },
);

const AuditActorSchema = Type.Union(
  [
    Type.Object({
      kind: Type.Literal('operator'),
      accountId: Type.Optional(Type.String({ description: 'The operator account, when its console made the change' })),
    }),
    Type.Object({ kind: Type.Literal('account'), accountId: Type.String(), apiKeyId: Type.Optional(Type.String()) }),
  ],
  {
    description:
      'Who made the change: the operator (the admin token, the CLI, or an operator account through the console: `accountId`), or an account through a session or through one of its keys (`apiKeyId`)',
  },
);

/** One entry of the audit log. */
export const AuditEntrySchema = Type.Object(
  {
    id: Type.String(),
    createdAt: Type.String({ description: 'When the change was made' }),
    action: Type.Enum(auditActions),
    actor: AuditActorSchema,
    accountId: Type.Optional(Type.String({ description: 'The account the change concerns (the owner of a key)' })),
    subject: Type.Object(
      { type: Type.Enum(auditSubjectTypes), id: Type.Optional(Type.String()) },
      { description: 'What was changed; a session is named by its account only' },
    ),
    before: Type.Optional(AuditStateSchema),
    after: Type.Optional(AuditStateSchema),
    request: Type.Optional(AuditRequestSchema),
    clientAddress: Type.Optional(
      Type.String({ description: "The client's address (an account is not shown the operator's)" }),
    ),
    requestId: Type.Optional(Type.String({ description: 'The `x-request-id` of the request that made the change' })),
  },
  { description: 'A change: who made it, to what, its state before and after, when, from where' },
);

export const AuditPageSchema = Type.Object(
  { results: Type.Array(AuditEntrySchema), ...pageFields },
  { description: 'One page of audit log entries, newest first' },
);

/** One pricing object of the compatibility model lists: the prices its kind of model is billed by. */
const pricesOf = (kind: PricingKind) =>
  Type.Optional(
    Type.Object(
      { ...Type.Pick(PricingSchema, [...pricingFieldsByKind[kind]]).properties, currency: Type.Literal('USD') },
      { description: 'USD prices under the names gateway.yaml gives them' },
    ),
  );

/**
 * The fields the model list items of the alpha, beta and gamma surfaces share (spec, Model: compatibility list
 * items), beside each protocol's own id and shape. gateway/model-listing.ts builds them as a loose record, so
 * no type checks this against it: the OpenAPI test checks real answers against it instead.
 */
export const compatModelFieldSchemas = {
  name: Type.String(),
  inputModalities: Type.Array(Type.String()),
  outputModalities: Type.Array(Type.String()),
  capabilitiesProviderId: Type.Optional(Type.String({ description: 'The provider row chosen by priority' })),
  capabilities: Type.Optional(CapabilitiesSchema),
  chatPricing: pricesOf('chatPricing'),
  embeddingPricing: pricesOf('embeddingPricing'),
  imagePricing: pricesOf('imagePricing'),
  videoPricing: pricesOf('videoPricing'),
  audioPricing: pricesOf('audioPricing'),
};
