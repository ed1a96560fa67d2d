import type { Static } from '@fastify/type-provider-typebox';
import { generationRecordExample } from '../../http/examples.ts';
import type {
  AuditedGenerationRecordSchema,
  AuditedUsagePageSchema,
  ConfigDiffSchema,
} from './admin-answer-schemas.ts';

/** Examples of the admin API's own answers, as the OpenAPI document shows them (typed by their schemas). */

export const auditedRecordExample: Static<typeof AuditedGenerationRecordSchema> = {
  ...generationRecordExample,
  route: {
    providerId: 'openrouter',
    upstreamModel: 'openai/gpt-4o-mini',
    fallbacks: [
      {
        providerId: 'openai',
        upstreamModel: 'gpt-4o-mini',
        outcome: 'failed',
        reason: 'upstream 503',
        status: 503,
        keyId: 'primary',
      },
    ],
    requestId: 'req_7f3a9c1e5b2d',
    firstByteMs: 412,
    strategy: 'weighted',
    keyId: 'team-b',
  },
};

export const auditedUsagePageExample: Static<typeof AuditedUsagePageSchema> = {
  results: [auditedRecordExample],
  total: 1,
  offset: 0,
  limit: 20,
};

export const configDiffExample: Static<typeof ConfigDiffSchema> = {
  models: { added: ['claude-sonnet-4'], removed: [], changed: ['gpt-4o-mini'] },
  prices: [
    {
      modelId: 'gpt-4o-mini',
      before: { inputPerMTok: 0.15, outputPerMTok: 0.6 },
      after: { inputPerMTok: 0.2, outputPerMTok: 0.8 },
    },
  ],
  providers: { added: ['anthropic'], removed: [], changed: [{ providerId: 'openai', fields: ['apiKey'] }] },
  voices: { added: [], removed: [], changed: [] },
  settings: ['upstream.breakerCooldownMs'],
  needsRestart: ['server.bodyLimitBytes'],
};
