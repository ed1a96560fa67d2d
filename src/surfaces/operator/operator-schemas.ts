import Type, { type Static } from 'typebox';
import {
  AccountSchema,
  AuditedGenerationRecordSchema,
  ListedKeySchema,
  pageFields,
} from '../../http/answer-schemas.ts';

/**
 * The operator API's answers, as the OpenAPI document shows them. Plain TypeBox importing only the shared
 * answers, so the dashboard's type check can follow it.
 */

const Usd = Type.Number({ description: 'USD' });

export const OperatorAccountSchema = Type.Object(
  {
    ...AccountSchema.properties,
    disabled: Type.Boolean({ description: "Disabled: the account's keys and sessions are refused everywhere" }),
    keyCount: Type.Integer({ minimum: 0, description: 'Its keys that are not revoked' }),
    createdAt: Type.String(),
  },
  { description: 'An account as the operator console lists it' },
);

export const OperatorAccountPageSchema = Type.Object(
  { results: Type.Array(OperatorAccountSchema), ...pageFields },
  { description: 'One page of accounts, oldest first' },
);

export const OperatorAccountDetailSchema = Type.Object(
  {
    ...OperatorAccountSchema.properties,
    held: Type.Number({ description: 'USD held for requests and jobs under way' }),
    spent: Type.Number({ description: 'USD charged over all its usage records' }),
    generations: Type.Integer({ minimum: 0, description: 'Its usage records' }),
  },
  { description: 'An account as the operator console shows it' },
);

/** A key of the account, without the key itself: its caps, rate limits and what it spent in each window. */
export const OperatorKeySchema = ListedKeySchema;

export const UsageSearchPageSchema = Type.Object(
  {
    results: Type.Array(AuditedGenerationRecordSchema),
    ...pageFields,
    totals: Type.Object(
      { generations: Type.Integer({ minimum: 0 }), usdCost: Usd },
      { description: 'Over every record the filter matches, not only this page' },
    ),
  },
  { description: 'One page of usage records across accounts, newest first, with the totals of the filter' },
);

const HealthSchema = Type.Object(
  {
    attempts: Type.Integer({ minimum: 0, description: 'Attempts this process sent to the row within the window' }),
    failures: Type.Integer({ minimum: 0, description: 'Of them, unreachable, timed out, 429 or 5xx' }),
    errorRate: Type.Number({ minimum: 0, maximum: 1 }),
    p50Ms: Type.Optional(
      Type.Integer({ description: "Median time to the upstream's answer (first byte of a stream)" }),
    ),
    p95Ms: Type.Optional(Type.Integer()),
    windowSeconds: Type.Number({ description: 'The window the figures cover' }),
  },
  { description: "The row's health from this process's own counters" },
);

export const ProviderRowSchema = Type.Object(
  {
    providerId: Type.String(),
    upstreamModel: Type.String(),
    protocol: Type.String(),
    models: Type.Array(Type.String(), { description: 'The catalog models this row serves' }),
    breaker: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('half-open')]),
    health: HealthSchema,
    testable: Type.Union([Type.Literal('text'), Type.Literal('embedding'), Type.Null()], {
      description: 'What a test sends it (null: a media row, which is not tested)',
    }),
  },
  { description: 'A provider row of the catalog' },
);

export const RowTestResultSchema = Type.Object(
  {
    id: Type.String({ description: '`providerId/upstreamModel`' }),
    providerId: Type.String(),
    upstreamModel: Type.String(),
    kind: Type.Union([Type.Literal('text'), Type.Literal('embedding')]),
    ok: Type.Boolean(),
    latencyMs: Type.Integer({ minimum: 0 }),
    status: Type.Optional(Type.Integer({ description: "The upstream's status, when it answered an error" })),
    error: Type.Optional(Type.String()),
    sample: Type.Optional(Type.String({ description: 'The start of the answer, or the vector length' })),
  },
  { description: 'How one small request sent to the row went (not billed to any account)' },
);

export type OperatorAccountView = Static<typeof OperatorAccountSchema>;
export type OperatorAccountDetailView = Static<typeof OperatorAccountDetailSchema>;
export type OperatorKeyView = Static<typeof OperatorKeySchema>;
export type UsageSearchPageView = Static<typeof UsageSearchPageSchema>;
export type ProviderRowView = Static<typeof ProviderRowSchema>;
export type RowTestResultView = Static<typeof RowTestResultSchema>;
