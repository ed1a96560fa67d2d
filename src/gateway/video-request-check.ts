import { gateParameters, spelled, type FieldNames } from '../catalog/capability-gate.ts';
import type { ProviderRow } from '../catalog/catalog.ts';
import type { ParamConstraint } from '../domain/capabilities.ts';
import { definedFields } from '../domain/defined-fields.ts';
import { GatewayError } from '../domain/errors.ts';
import type {
  StoredVideoMediaSource,
  StoredVideoRequest,
  VideoContentItem,
  VideoGenerationRequest,
  VideoImageRole,
} from '../domain/video.ts';
import { parseInlineImage, parseInlineVideo } from '../media/inline-image.ts';
import { namedAsset, type ReferenceChecks, type ReusableAsset } from './image-request-check.ts';

/** A content part of a native video request (spec, Native: video), plus reuse of archived outputs. */
export type VideoContentPart =
  | { type: 'text'; text: string }
  | { type: 'imageUrl'; url: string; role?: VideoImageRole }
  | { type: 'imageBase64'; data: string; mediaType?: string; role?: VideoImageRole }
  | { type: 'imageAssetId'; assetId: string; role?: VideoImageRole }
  | { type: 'videoUrl'; url: string }
  | { type: 'videoBase64'; data: string; mediaType?: string }
  | { type: 'videoAssetId'; assetId: string };

/** A native video request after its wire shape is checked (types, ranges of the spec), before the model's rules. */
export type NativeVideoInput = {
  modelId: string;
  content: VideoContentPart[];
  /** The client's own name of a content part, by index, where its surface does not call it `content[i]` (alpha's `input_reference.image_url`). */
  partFields?: ReadonlyMap<number, string>;
  /** How the client named the fields, where its surface names them otherwise (alpha's `seconds` and `size`). */
  fieldNames?: FieldNames;
} & Omit<VideoGenerationRequest, 'content'>;

/** The optional generation fields a model's `capabilities.video.params` may constrain. */
const gatedFields = ['duration', 'resolution', 'ratio', 'seed', 'watermark', 'cameraFixed', 'generateAudio'] as const;

/**
 * Every rule of the spec's video table and the model's own constraints, checked before anything is held. A
 * model that lists its video parameters takes `cameraFixed` only when it lists it; with `strictParams` it
 * takes no unlisted field at all.
 */
export async function checkVideoRequest(
  modelId: string,
  input: NativeVideoInput,
  { row, references }: { row: ProviderRow; references: ReferenceChecks },
): Promise<StoredVideoRequest> {
  const params = row.capabilities?.video?.params;
  for (const field of gatedFields) {
    if (input[field] === undefined || params === undefined || params[field] !== undefined) continue;
    if (field === 'cameraFixed' || row.capabilities?.strictParams === true) {
      throw new GatewayError(
        'GW_PARAMETER_UNSUPPORTED',
        `model "${modelId}" does not support parameter "${spelled(input.fieldNames, field)}"`,
      );
    }
  }
  gateParameters({
    modelId,
    capabilities: row.capabilities,
    scope: 'video',
    optional: {},
    fieldNames: input.fieldNames,
    values: definedFields(Object.fromEntries(gatedFields.map((field) => [field, input[field]]))),
  });

  const found = await references.assets(
    input.content.flatMap((part, index) =>
      part.type === 'imageAssetId' || part.type === 'videoAssetId'
        ? [{ assetId: part.assetId, where: input.partFields?.get(index) ?? `content[${index}]` }]
        : [],
    ),
  );
  const frames = { firstFrame: 0, lastFrame: 0 };
  const content: Array<VideoContentItem<StoredVideoMediaSource>> = [];
  for (const [index, part] of input.content.entries()) {
    const where = input.partFields?.get(index) ?? `content[${index}]`;
    switch (part.type) {
      case 'text':
        content.push({ type: 'text', text: part.text });
        break;
      case 'imageUrl':
      case 'imageBase64':
      case 'imageAssetId': {
        const role = part.role ?? 'referenceImage';
        if (role !== 'referenceImage' && ++frames[role] > 1)
          throw new GatewayError('GW_VALIDATION', `${where}: only one image may have role "${role}"`);
        content.push({ type: 'image', role, source: imageSource(part, { where, references, found }) });
        break;
      }
      case 'videoUrl':
        references.urls.add(part.url, where);
        content.push({ type: 'video', source: { kind: 'url', url: part.url } });
        break;
      case 'videoBase64': {
        const inline = parseInlineVideo(part.data, part.mediaType, where);
        content.push({ type: 'video', source: { kind: 'inline', mediaType: inline.mediaType, data: inline.data } });
        break;
      }
      case 'videoAssetId': {
        const asset = namedAsset(found, { assetId: part.assetId, where }, 'video');
        content.push({
          type: 'video',
          source: { kind: 'asset', objectKey: asset.objectKey, mediaType: asset.mediaType },
        });
        break;
      }
    }
  }
  if (frames.lastFrame > 0 && frames.firstFrame === 0)
    throw new GatewayError('GW_VALIDATION', 'an image with role "lastFrame" needs one with role "firstFrame"');
  if (!content.some((item) => item.type === 'text' || item.type === 'image'))
    throw new GatewayError('GW_VALIDATION', 'content needs a text part (the prompt) or an image');
  return {
    content,
    ...definedFields({
      duration: input.duration,
      resolution: input.resolution,
      ratio: input.ratio,
      seed: input.seed,
      watermark: input.watermark,
      cameraFixed: input.cameraFixed,
      generateAudio: input.generateAudio,
      maxTokens: input.maxTokens,
    }),
  };
}

function imageSource(
  part: Extract<VideoContentPart, { type: 'imageUrl' | 'imageBase64' | 'imageAssetId' }>,
  {
    where,
    references,
    found,
  }: { where: string; references: ReferenceChecks; found: ReadonlyMap<string, ReusableAsset> },
): StoredVideoMediaSource {
  if (part.type === 'imageUrl') {
    references.urls.add(part.url, where);
    return { kind: 'url', url: part.url };
  }
  if (part.type === 'imageBase64') {
    const inline = parseInlineImage(part.data, part.mediaType, where);
    return { kind: 'inline', mediaType: inline.mediaType, data: inline.data };
  }
  const asset = namedAsset(found, { assetId: part.assetId, where }, 'image');
  return { kind: 'asset', objectKey: asset.objectKey, mediaType: asset.mediaType };
}

/** Output seconds assumed when neither the request nor the model says (the usual default of video models). */
const assumedSeconds = 5;

/** The seconds a request is held for: those asked, else the model's default, else its longest, else the usual default. */
export function heldSeconds(request: StoredVideoRequest, row: ProviderRow): number {
  if (request.duration !== undefined) return request.duration;
  const constraint: ParamConstraint | undefined = row.capabilities?.video?.params?.duration;
  if (constraint && 'default' in constraint && typeof constraint.default === 'number') return constraint.default;
  if (constraint?.type === 'range' || constraint?.type === 'int')
    return constraint.type === 'range' && constraint.steps ? Math.max(...constraint.steps) : constraint.max;
  return assumedSeconds;
}

/** The resolution a request is priced at when it names none: the model's default, if it has one. */
export function defaultResolution(row: ProviderRow): string | undefined {
  const constraint = row.capabilities?.video?.params?.resolution;
  return constraint?.type === 'enum' && typeof constraint.default === 'string' ? constraint.default : undefined;
}
