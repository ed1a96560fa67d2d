import Type, { type Static } from 'typebox';
import { PricingSchema } from '../../config/config-schema.ts';
import { mediaKinds } from '../../domain/usage-modalities.ts';
import {
  AccountSchema,
  type AuditEntrySchema,
  CreatedKeySchema,
  GenerationRecordSchema,
  ListedKeySchema,
  pageFields,
  type RateLimitsSchema,
  UsagePageSchema,
} from '../../http/answer-schemas.ts';

export { AccountSchema, CreatedKeySchema, GenerationRecordSchema, ListedKeySchema, UsagePageSchema };

/**
 * Response shapes of the account API, as the OpenAPI document shows them (those the admin and compat APIs
 * answer too live in http/answer-schemas.ts). Schemas document answers and never filter them, so the views
 * must carry exactly these fields. The dashboard (web/) takes its types from these very schemas, so both
 * sides read one definition. Plain TypeBox only, so the dashboard's type check can follow the import.
 */

const Usd = Type.Number();

export const DailySpendSchema = Type.Object({
  from: Type.String(),
  to: Type.String(),
  spend: Type.Array(
    Type.Object({ date: Type.String(), model: Type.String(), usdCost: Usd, generations: Type.Integer({ minimum: 0 }) }),
  ),
});

export const MediaItemSchema = Type.Object({
  generationId: Type.String(),
  kind: Type.Enum(mediaKinds),
  model: Type.String(),
  createdAt: Type.String(),
  prompt: Type.Optional(Type.String()),
  outputs: Type.Array(
    Type.Object({
      assetId: Type.String(),
      mediaType: Type.String(),
      bytes: Type.Integer({ minimum: 0 }),
      downloadUrl: Type.String(),
      layer: Type.Optional(
        Type.Object(
          {
            zIndex: Type.Integer({ minimum: 0 }),
            box: Type.Optional(Type.Array(Type.Number(), { minItems: 4, maxItems: 4 })),
            name: Type.Optional(Type.String()),
          },
          {
            description:
              'Of a layer decomposition: zIndex 0 is the base; a layer sits at box [left, top, right, bottom]',
          },
        ),
      ),
      durationSeconds: Type.Optional(Type.Number({ description: 'Seconds of a video or audio output' })),
      transcript: Type.Optional(Type.String({ description: 'The words spoken in an audio output, when known' })),
    }),
  ),
});

export const MediaPageSchema = Type.Object({ results: Type.Array(MediaItemSchema), ...pageFields });

/**
 * A catalog entry with its prices, under the names gateway.yaml gives them (README, Configuration). Its
 * `capabilities` are the domain's `Capabilities`, passed through as configured.
 */
export const PricedModelSchema = Type.Object({
  modelId: Type.String(),
  name: Type.String(),
  inputModalities: Type.Array(Type.String()),
  outputModalities: Type.Array(Type.String()),
  maxOutputTokens: Type.Optional(Type.Integer()),
  capabilities: Type.Optional(Type.Unknown()),
  speechParameters: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description: "Of a speech model: the parameters its audio route checks, as the spec's constraints",
    }),
  ),
  pricing: Type.Optional(PricingSchema),
});

export type Account = Static<typeof AccountSchema>;
export type CreatedKey = Static<typeof CreatedKeySchema>;
export type ListedKey = Static<typeof ListedKeySchema>;
export type GenerationRecordView = Static<typeof GenerationRecordSchema>;
export type UsagePage = Static<typeof UsagePageSchema>;
export type DailySpendView = Static<typeof DailySpendSchema>;
export type MediaItemView = Static<typeof MediaItemSchema>;
/** The account's rate limits (the operator's), read only here. */
export type RateLimitsView = Static<typeof RateLimitsSchema>;
export type PricedModelView = Static<typeof PricedModelSchema>;
/** An entry of the account's audit log. */
export type AuditEntryView = Static<typeof AuditEntrySchema>;
