import { GatewayError } from '../../domain/errors.ts';
import { objectOf } from '../../domain/wire-values.ts';
import type { VideoResolution } from '../../domain/video.ts';
import type { NativeVideoInput } from '../../gateway/video-request-check.ts';
import type { MultipartField } from '../../http/multipart-form.ts';
import type { VideoTaskView } from '../../gateway/video-generation.ts';
import {
  maxVideoPromptCharacters,
  videosCreateFields as fields,
  type VideoSize,
} from '../../protocols/openai/videos.ts';
import type { RouterVideoJob, RouterVideoStatus } from '../../protocols/router-video/videos.ts';

/** The spec's four sizes, each a resolution and an aspect ratio. */
const sizes: Record<VideoSize, { resolution: VideoResolution; ratio: string }> = {
  '720x1280': { resolution: '720p', ratio: '9:16' },
  '1280x720': { resolution: '720p', ratio: '16:9' },
  '1024x1792': { resolution: '1080p', ratio: '9:16' },
  '1792x1024': { resolution: '1080p', ratio: '16:9' },
};

const isVideoSize = (value: unknown): value is VideoSize => typeof value === 'string' && Object.hasOwn(sizes, value);

const refuse = (message: string): never => {
  throw new GatewayError('GW_VALIDATION', message);
};

/**
 * `POST /api/alpha/v1/videos` checked before anything is routed: every field of the spec's list and nothing
 * else, then mapped as the spec says (`seconds` to duration, `size` to resolution and aspect ratio, the
 * reference image to a reference). A `file_id` is refused: no provider of the gateway takes one.
 */
export function decodeAlphaVideo(body: unknown): NativeVideoInput {
  const record = objectOf(body);
  if (!record) return refuse('the body must be a JSON object (or a multipart form)');
  const unknown = Object.keys(record).filter((key) => !fields.has(key));
  if (unknown.length > 0)
    refuse(`unsupported field${unknown.length > 1 ? 's' : ''}: ${unknown.map((key) => `"${key}"`).join(', ')}`);
  const model = record.model;
  if (typeof model !== 'string' || model.length === 0 || model.length > 200)
    return refuse('"model" is required: a model id');
  const prompt = record.prompt;
  if (typeof prompt !== 'string' || prompt.length === 0) return refuse('"prompt" is required');
  if ([...prompt].length > maxVideoPromptCharacters)
    refuse(`"prompt" must be at most ${maxVideoPromptCharacters} characters`);
  const input: NativeVideoInput = {
    modelId: model,
    content: [{ type: 'text', text: prompt }],
    // The gate's messages name the fields the client sent, which map to these.
    fieldNames: { duration: 'seconds', resolution: 'size', ratio: 'size' },
  };
  if (record.seconds !== undefined) {
    const seconds =
      typeof record.seconds === 'string' && /^\d{1,4}$/.test(record.seconds) ? Number(record.seconds) : record.seconds;
    if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1 || seconds > 3_600)
      return refuse('"seconds" must be a whole number of seconds (an integer or a string of digits)');
    input.duration = seconds;
  }
  if (record.size !== undefined) {
    const size = isVideoSize(record.size) ? sizes[record.size] : undefined;
    if (!size) return refuse(`"size" must be one of ${Object.keys(sizes).join(', ')}`);
    Object.assign(input, size);
  }
  if (record.input_reference !== undefined) {
    const reference = objectOf(record.input_reference);
    if (!reference) return refuse('"input_reference" must be an object with "image_url" or "file_id"');
    const { image_url: imageUrl, file_id: fileId, ...rest } = reference;
    if (Object.keys(rest).length > 0)
      refuse(
        `unsupported field in "input_reference": ${Object.keys(rest)
          .map((key) => `"${key}"`)
          .join(', ')}`,
      );
    if ((imageUrl === undefined) === (fileId === undefined))
      refuse('"input_reference" needs exactly one of "image_url" or "file_id"');
    if (fileId !== undefined)
      throw new GatewayError(
        'GW_PARAMETER_UNSUPPORTED',
        `model "${model}" does not accept "input_reference.file_id": pass "input_reference.image_url"`,
      );
    if (typeof imageUrl !== 'string' || !URL.canParse(imageUrl) || !/^https?:$/.test(new URL(imageUrl).protocol))
      return refuse('"input_reference.image_url" must be an http(s) URL');
    input.partFields = new Map([[input.content.length, 'input_reference.image_url']]);
    input.content.push({ type: 'imageUrl', url: imageUrl, role: 'referenceImage' });
  }
  return input;
}

/**
 * A multipart form as the official SDKs send it (`input_reference[image_url]` for nested fields) turned into
 * the JSON body's shape. Objects without a prototype, and the parser refuses `__proto__` and the like, so no
 * field name reaches one. A field given twice is refused.
 */
export function formBody(fields: readonly MultipartField[]): Record<string, unknown> {
  const body: Record<string, unknown> = Object.create(null);
  const objects = new Map<string, Record<string, string>>();
  const seen = new Set<string>();
  for (const { name, value } of fields) {
    // Keeping one of two values would drop the other silently: which one the client meant is not ours to pick.
    if (seen.has(name)) refuse(`multipart field ${JSON.stringify(name)} is given twice: send it once`);
    seen.add(name);
    const nested = /^([a-z_]+)\[([a-z_]+)\]$/.exec(name);
    if (!nested) {
      body[name] = value;
      continue;
    }
    const outer = nested[1]!;
    let object = objects.get(outer);
    if (!object || body[outer] !== object) {
      object = Object.create(null) as Record<string, string>;
      objects.set(outer, object);
    }
    object[nested[2]!] = value;
    body[outer] = object;
  }
  return body;
}

/** An uploaded file is refused, like a `file_id`: no provider of the gateway takes one. */
export const refuseUpload = (name: string) =>
  new GatewayError(
    'GW_PARAMETER_UNSUPPORTED',
    `file uploads (${JSON.stringify(name)}) are not accepted: pass "input_reference[image_url]"`,
  );

const statuses: Record<VideoTaskView['status'], RouterVideoStatus> = {
  queued: 'pending',
  running: 'in_progress',
  succeeded: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** A task in the routing provider's job shape, with links back to this surface. */
export function alphaVideoJob(task: VideoTaskView, surfaceBaseUrl: string): RouterVideoJob & { model: string } {
  const pollingUrl = `${surfaceBaseUrl}/videos/${task.taskId}`;
  const job: RouterVideoJob & { model: string } = {
    id: task.taskId,
    polling_url: pollingUrl,
    // A video media retention deleted is the protocol's `expired` job: made and paid for, its content gone.
    status: task.assetExpired ? 'expired' : statuses[task.status],
    generation_id: task.generationId,
    model: task.model,
  };
  if (task.status === 'succeeded') {
    if (!task.assetExpired) job.unsigned_urls = [`${pollingUrl}/content?index=0`];
    job.usage = { cost: task.usage?.usdCost ?? 0, is_byok: false };
  }
  if (task.error !== undefined) job.error = task.error;
  return job;
}
