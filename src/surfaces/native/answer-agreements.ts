import type { Voice } from '../../catalog/voices.ts';
import type { ImageJobView, ImageResultView } from '../../gateway/image-generation.ts';
import type { AudioJobView } from '../../gateway/speech-generation.ts';
import type { VideoTaskView } from '../../gateway/video-generation.ts';
import type { Holds, SchemaAgrees } from '../../http/openapi/schema-agreement.ts';
import type {
  AudioJobSchema,
  ImageJobSchema,
  ImageResultSchema,
  VideoTaskSchema,
  VoiceEntrySchema,
} from './answer-schemas.ts';

/** The native API's documented answers are the views the services answer with: this stops compiling when either side changes alone. */
export type NativeAnswersAgree = Holds<
  | SchemaAgrees<typeof ImageJobSchema, ImageJobView>
  | SchemaAgrees<typeof ImageResultSchema, ImageResultView>
  | SchemaAgrees<typeof VideoTaskSchema, VideoTaskView>
  | SchemaAgrees<typeof AudioJobSchema, AudioJobView>
  | SchemaAgrees<typeof VoiceEntrySchema, Voice>
>;
