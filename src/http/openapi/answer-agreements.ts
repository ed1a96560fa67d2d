import type { GenerationRecord, UsagePage } from '../../billing/usage-history.ts';
import type { AccountView } from '../../identity/account-service.ts';
import type { AuditEntryView, AuditPage } from '../../identity/audit-trail.ts';
import type { ApiKeyView, KeyLookup } from '../../identity/api-key-service.ts';
import type {
  AccountSchema,
  ApiKeySchema,
  AuditEntrySchema,
  AuditPageSchema,
  GenerationRecordSchema,
  KeyLookupSchema,
  UsagePageSchema,
} from '../answer-schemas.ts';
import type { Holds, SchemaAgrees } from './schema-agreement.ts';

/**
 * The account API's documented answers are the views the services answer with: this stops compiling when either side
 * changes alone. (Handlers are already checked against their route's schema; this checks the other way
 * too, and field by field.) Kept apart from the schemas: the dashboard's type check follows the shared
 * ones, and must not be led into the server's modules.
 */
export type DocumentedAnswersAgree = Holds<
  | SchemaAgrees<typeof AccountSchema, AccountView>
  | SchemaAgrees<typeof ApiKeySchema, ApiKeyView>
  | SchemaAgrees<typeof KeyLookupSchema, KeyLookup>
  | SchemaAgrees<typeof GenerationRecordSchema, GenerationRecord>
  | SchemaAgrees<typeof UsagePageSchema, UsagePage>
  | SchemaAgrees<typeof AuditEntrySchema, AuditEntryView>
  | SchemaAgrees<typeof AuditPageSchema, AuditPage>
>;
