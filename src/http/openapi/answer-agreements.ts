import type { AuditedGenerationRecord, GenerationRecord, UsagePage } from '../../billing/usage-history.ts';
import type { Voice } from '../../catalog/voices.ts';
import type { ImageJobView, ImageResultView } from '../../gateway/image-generation.ts';
import type { AudioJobView } from '../../gateway/speech-generation.ts';
import type { VideoTaskView } from '../../gateway/video-generation.ts';
import type { AccountView } from '../../identity/account-service.ts';
import type { ApiKeyView, KeyLookup } from '../../identity/api-key-service.ts';
import type {
  AuditedGenerationRecordSchema,
  AuditedUsagePageSchema,
} from '../../surfaces/admin/admin-answer-schemas.ts';
import type {
  AudioJobSchema,
  ImageJobSchema,
  ImageResultSchema,
  VideoTaskSchema,
  VoiceEntrySchema,
} from '../../surfaces/native/answer-schemas.ts';
import type {
  AccountSchema,
  ApiKeySchema,
  GenerationRecordSchema,
  KeyLookupSchema,
  UsagePageSchema,
} from '../answer-schemas.ts';
import type { Holds, SchemaAgrees } from './schema-agreement.ts';

/**
 * The documented answers are the views the services answer with: this stops compiling when either side
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
  | SchemaAgrees<typeof AuditedGenerationRecordSchema, AuditedGenerationRecord>
  | SchemaAgrees<typeof AuditedUsagePageSchema, UsagePage<AuditedGenerationRecord>>
  | SchemaAgrees<typeof ImageJobSchema, ImageJobView>
  | SchemaAgrees<typeof ImageResultSchema, ImageResultView>
  | SchemaAgrees<typeof VideoTaskSchema, VideoTaskView>
  | SchemaAgrees<typeof AudioJobSchema, AudioJobView>
  | SchemaAgrees<typeof VoiceEntrySchema, Voice>
>;
