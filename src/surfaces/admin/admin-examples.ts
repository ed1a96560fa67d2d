import type { Static } from '@fastify/type-provider-typebox';
import { generationRecordExample } from '../../http/examples.ts';
import type { AuditedGenerationRecordSchema, AuditedUsagePageSchema } from './admin-answer-schemas.ts';

/** Examples of the admin API's own answers, as the OpenAPI document shows them (typed by their schemas). */

export const auditedRecordExample: Static<typeof AuditedGenerationRecordSchema> = {
  ...generationRecordExample,
  route: {
    providerId: 'openrouter',
    upstreamModel: 'openai/gpt-4o-mini',
    fallbacks: [
      { providerId: 'openai', upstreamModel: 'gpt-4o-mini', outcome: 'failed', reason: 'upstream 503', status: 503 },
    ],
    requestId: 'req_7f3a9c1e5b2d',
    firstByteMs: 412,
  },
};

export const auditedUsagePageExample: Static<typeof AuditedUsagePageSchema> = {
  results: [auditedRecordExample],
  total: 1,
  offset: 0,
  limit: 20,
};
