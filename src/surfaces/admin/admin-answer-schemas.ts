import { Type } from '@fastify/type-provider-typebox';
import { GenerationRecordSchema, pageFields } from '../../http/answer-schemas.ts';

/** Answers of the admin API beyond the shared ones, as the OpenAPI document shows them. */

const Attempt = Type.Object({
  providerId: Type.String(),
  upstreamModel: Type.String(),
  outcome: Type.Enum(['failed', 'skipped'] as const),
  reason: Type.String(),
  status: Type.Optional(Type.Integer({ description: "The upstream's status, when it answered one" })),
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
  },
  { description: 'How the generation reached its upstream (never shown to accounts)' },
);

export const AuditedGenerationRecordSchema = Type.Object(
  { ...GenerationRecordSchema.properties, route: Type.Optional(Route) },
  { description: 'A usage record with its route' },
);

export const AuditedUsagePageSchema = Type.Object(
  { results: Type.Array(AuditedGenerationRecordSchema), ...pageFields },
  { description: "One page of the account's usage records, newest first" },
);
