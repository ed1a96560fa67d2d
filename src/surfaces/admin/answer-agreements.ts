import type { AuditedGenerationRecord, UsagePage } from '../../billing/usage-history.ts';
import type { Holds, SchemaAgrees } from '../../http/openapi/schema-agreement.ts';
import type { ConfigDiff } from '../../config/config-diff.ts';
import type {
  AuditedGenerationRecordSchema,
  AuditedUsagePageSchema,
  ConfigDiffSchema,
} from './admin-answer-schemas.ts';

/** The admin API's documented answers are the views the services answer with: this stops compiling when either side changes alone. */
export type AdminAnswersAgree = Holds<
  | SchemaAgrees<typeof AuditedGenerationRecordSchema, AuditedGenerationRecord>
  | SchemaAgrees<typeof AuditedUsagePageSchema, UsagePage<AuditedGenerationRecord>>
  | SchemaAgrees<typeof ConfigDiffSchema, ConfigDiff>
>;
