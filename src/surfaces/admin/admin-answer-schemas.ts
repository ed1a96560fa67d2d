import { Type } from '@fastify/type-provider-typebox';
import { PricingSchema } from '../../config/config-schema.ts';
import { AuditedGenerationRecordSchema, pageFields } from '../../http/answer-schemas.ts';

export { AuditedGenerationRecordSchema };

/** Answers of the admin API beyond the shared ones, as the OpenAPI document shows them. */

export const AuditedUsagePageSchema = Type.Object(
  { results: Type.Array(AuditedGenerationRecordSchema), ...pageFields },
  { description: "One page of the account's usage records, newest first" },
);

const Ids = (description: string) => Type.Array(Type.String(), { description });

const IdChanges = (what: string) =>
  Type.Object({
    added: Ids(`${what} in the new file only`),
    removed: Ids(`${what} no longer in the file`),
    changed: Ids(`${what} whose settings changed`),
  });

const PriceChange = Type.Object({
  modelId: Type.String(),
  before: Type.Union([PricingSchema, Type.Null()], { description: 'The prices until now, in USD (null: none)' }),
  after: Type.Union([PricingSchema, Type.Null()], { description: 'The prices from the next request on, in USD' }),
});

const ProviderChange = Type.Object({
  providerId: Type.String(),
  fields: Type.Array(Type.String(), {
    description: 'The names of the settings that changed (apiKey, headers.<name>, baseUrl, ...), never their values',
  }),
});

export const ConfigDiffSchema = Type.Object(
  {
    models: IdChanges('Catalog models'),
    prices: Type.Array(PriceChange, { description: 'Models kept whose prices changed' }),
    providers: Type.Object({
      added: Ids('Providers in the new file only'),
      removed: Ids('Providers no longer in the file'),
      changed: Type.Array(ProviderChange),
    }),
    voices: IdChanges('Text-to-speech voices'),
    settings: Ids('Other settings reloaded (upstream breaker and retry settings)'),
    needsRestart: Ids('Settings changed in the file that apply only after a restart; they keep their running values'),
  },
  { description: 'What the reload changed for the requests that start from now on, without any credential' },
);
