import { definedFields } from '../domain/defined-fields.ts';
import { gateParameters, spelled, type FieldNames } from '../catalog/capability-gate.ts';
import type { CatalogModel, ProviderRow } from '../catalog/catalog.ts';
import { GatewayError } from '../domain/errors.ts';
import type {
  ImageGenerationRequest,
  ImageOutputFormat,
  LayerResolution,
  StoredImageRequest,
  StoredImageSource,
} from '../domain/image.ts';
import type { Protocol } from '../domain/protocols.ts';
import { parseInlineImage } from '../media/inline-image.ts';
import { RemoteMediaError } from '../media/remote-media.ts';
import type { ImageAdapter } from '../providers/provider-adapter.ts';

/** A content part of a native image request, with exactly the fields its type needs. */
export type ImageContentPart =
  | { type: 'text'; text: string }
  | { type: 'imageUrl'; url: string }
  | { type: 'imageBase64'; data: string; mediaType?: string }
  | { type: 'imageAssetId'; assetId: string };

/** A native image request after its wire shape is checked (ranges and enums), before the model's rules. */
export type NativeImageInput = {
  modelId: string;
  content: ImageContentPart[];
  numberOfImages?: number;
  layerDecomposition?: boolean;
  resolution?: LayerResolution;
  /** How the client named the fields, where its surface names them otherwise (alpha's `n`, `output_format`). */
  fieldNames?: FieldNames;
} & Pick<
  ImageGenerationRequest,
  | 'size'
  | 'guidanceScale'
  | 'outputFormat'
  | 'quality'
  | 'background'
  | 'outputCompression'
  | 'watermark'
  | 'optimizePromptMode'
  | 'maxTokens'
>;

/** An archived output an account may reuse, as the check needs it. */
export interface ReusableAsset {
  objectKey: string;
  mediaType: string;
}

/**
 * The optional fields each provider family takes besides `size`, `numberOfImages` and `outputFormat`, and the
 * output formats it makes (spec, Native: image: webp, quality, background and compression belong to one
 * family, prompt optimisation to another). `maxTokens` passes everywhere: ModelArk's adapter strips it. The
 * sandbox takes ModelArk's fields, so a client written for ModelArk runs against it unchanged (it ignores them).
 */
const families: Partial<Record<Protocol, { formats: readonly ImageOutputFormat[]; fields: readonly OptionalField[] }>> =
  {
    openai: { formats: ['png', 'jpeg', 'webp'], fields: ['quality', 'background', 'outputCompression', 'maxTokens'] },
    ark: { formats: ['png', 'jpeg'], fields: ['guidanceScale', 'watermark', 'optimizePromptOptions', 'maxTokens'] },
    sandbox: { formats: ['png'], fields: ['guidanceScale', 'watermark', 'optimizePromptOptions', 'maxTokens'] },
  };

type OptionalField =
  | 'guidanceScale'
  | 'quality'
  | 'background'
  | 'outputCompression'
  | 'watermark'
  | 'optimizePromptOptions'
  | 'maxTokens';

/** Most images (references and outputs together) a multi-image request may involve. */
const maxImagesPerRequest = 15;

/** An archived asset a request names, with the field that names it (a refusal names that field). */
export interface NamedAsset {
  assetId: string;
  where: string;
}

/**
 * What a request's references are checked against: the account's archived assets, all read in one indexed
 * query as the request is checked (no more than a key lookup costs, before admission), and its URLs,
 * gathered then and checked once the request is admitted (`ReferenceUrls`).
 */
export interface ReferenceChecks {
  /** The caller's own live assets by id; a 404 naming the field of the first one that is not. */
  assets: (named: readonly NamedAsset[]) => Promise<ReadonlyMap<string, ReusableAsset>>;
  urls: ReferenceUrls;
}

/** The asset a request named, read with the others; its kind checked (`image/` or `video/`). */
export function namedAsset(
  found: ReadonlyMap<string, ReusableAsset>,
  { assetId, where }: NamedAsset,
  kind: 'image' | 'video',
): ReusableAsset {
  const asset = found.get(assetId);
  // The read refuses a missing asset; an absent one here is a request whose parts changed under the check.
  if (asset === undefined) throw new GatewayError('GW_NOT_FOUND', `${where}: asset "${assetId}" not found`);
  if (!asset.mediaType.startsWith(`${kind}/`))
    throw new GatewayError(
      'GW_VALIDATION',
      `${where}: asset "${assetId}" is not ${kind === 'image' ? 'an image' : 'a video'}`,
    );
  return asset;
}

/** The address rules of every URL the gateway fetches (`RemoteMediaFetcher.check`), throwing `RemoteMediaError` saying why. */
export type UrlCheck = (url: string) => Promise<void>;

/**
 * A request's reference URLs, gathered while it is checked. Checking one looks its host up (public http(s)
 * addresses only, unless the operator allows private ones), which is network work a client could ask for by
 * the dozen: none is looked up before the request is admitted, and then all at once, so one request waits for
 * one lookup's time limit at most. A URL refused is a 400 naming its field, as embeddings refuse one.
 */
export class ReferenceUrls {
  private readonly found: Array<{ url: string; where: string }> = [];

  add(url: string, where: string): void {
    this.found.push({ url, where });
  }

  get size(): number {
    return this.found.length;
  }

  async checkAll(checkUrl: UrlCheck): Promise<void> {
    await Promise.all(this.found.map(({ url, where }) => checkReferenceUrl(checkUrl, url, where)));
  }
}

async function checkReferenceUrl(checkUrl: UrlCheck, url: string, where: string): Promise<void> {
  try {
    await checkUrl(url);
  } catch (error) {
    if (!(error instanceof RemoteMediaError)) throw error;
    throw new GatewayError('GW_VALIDATION', `${where}: ${shownUrl(url)} is refused: ${error.message}`);
  }
}

/** A URL as an answer may show it: without the credentials it may carry, cut short. */
function shownUrl(url: string): string {
  let shown = url;
  if (URL.canParse(url)) {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      parsed.username = '';
      parsed.password = '';
      shown = parsed.href;
    }
  }
  return shown.length > 200 ? `${shown.slice(0, 200)}...` : shown;
}

export interface CheckedImageRequest {
  request: StoredImageRequest;
  /**
   * Fields dropped because the model does not take them and does not refuse them (`strictParams: false`), as the
   * client named them.
   */
  dropped: string[];
}

/** What an image request is checked against: the row that would serve it, and how its references are read. */
export interface ImageRequestChecks {
  row: ProviderRow;
  adapter: ImageAdapter;
  references: ReferenceChecks;
  /** Compatibility surfaces forward fields as given and honour them where the model can (spec, rule 3): unsupported ones are dropped. */
  lenient?: boolean;
}

/**
 * Every rule of the spec's image table and of layer decomposition, and the model's own constraints, checked
 * before anything is held: a refusal is a 400 naming the field (and the model, where the model refuses).
 */
export async function checkImageRequest(
  model: CatalogModel,
  input: NativeImageInput,
  { row, adapter, references, lenient = false }: ImageRequestChecks,
): Promise<CheckedImageRequest> {
  const modelId = model.modelId;
  const family = families[row.protocol] ?? { formats: ['png'], fields: [] };
  const strict = !lenient && row.capabilities?.strictParams !== false;
  const dropped: string[] = [];
  const optional: Record<OptionalField, unknown> = {
    guidanceScale: input.guidanceScale,
    quality: input.quality,
    background: input.background,
    outputCompression: input.outputCompression,
    watermark: input.watermark,
    optimizePromptOptions: input.optimizePromptMode,
    maxTokens: input.maxTokens,
  };
  for (const [field, value] of Object.entries(optional) as Array<[OptionalField, unknown]>) {
    if (value === undefined || family.fields.includes(field)) continue;
    if (!strict) {
      dropped.push(field);
      continue;
    }
    throw new GatewayError(
      'GW_PARAMETER_UNSUPPORTED',
      `model "${modelId}" does not support parameter "${spelled(input.fieldNames, field)}"`,
    );
  }
  const kept = <T>(field: OptionalField, value: T): T | undefined => (dropped.includes(field) ? undefined : value);
  let outputFormat = input.outputFormat;
  if (outputFormat !== undefined && !family.formats.includes(outputFormat) && !strict) {
    dropped.push('outputFormat');
    outputFormat = undefined;
  }
  if (outputFormat !== undefined && !family.formats.includes(outputFormat)) {
    throw new GatewayError(
      'GW_PARAMETER_OUT_OF_RANGE',
      `parameter "outputFormat" of model "${modelId}" must be one of ${family.formats.join(', ')}`,
    );
  }
  const format = outputFormat ?? 'png';
  if (kept('background', input.background) === 'transparent' && format !== 'png' && format !== 'webp') {
    throw new GatewayError('GW_VALIDATION', 'background "transparent" needs outputFormat "png" or "webp"');
  }
  if (kept('outputCompression', input.outputCompression) !== undefined && format === 'png') {
    throw new GatewayError('GW_VALIDATION', 'outputCompression applies to outputFormat "jpeg" or "webp" only');
  }

  const texts = input.content.filter(
    (part): part is Extract<ImageContentPart, { type: 'text' }> => part.type === 'text',
  );
  const imageParts = input.content.map((part, index) => ({ part, index })).filter(({ part }) => part.type !== 'text');
  const layers = input.layerDecomposition === true;
  if (layers) {
    if (!adapter.layers || row.capabilities?.image?.params?.layerDecomposition === undefined) {
      throw new GatewayError(
        'GW_PARAMETER_UNSUPPORTED',
        `model "${modelId}" does not support parameter "layerDecomposition"`,
      );
    }
    if (imageParts.length !== 1)
      throw new GatewayError(
        'GW_VALIDATION',
        `layerDecomposition needs exactly one image part in content, got ${imageParts.length}`,
      );
    if (input.size !== undefined)
      throw new GatewayError('GW_VALIDATION', 'size is not accepted with layerDecomposition: use resolution');
    if (input.numberOfImages !== undefined && input.numberOfImages !== 1)
      throw new GatewayError('GW_VALIDATION', 'numberOfImages must be omitted or 1 with layerDecomposition');
  } else {
    if (input.resolution !== undefined)
      throw new GatewayError('GW_VALIDATION', 'resolution applies only with layerDecomposition: use size');
    if (texts.length === 0) throw new GatewayError('GW_VALIDATION', 'content needs a text part (the prompt)');
    const outputs = input.numberOfImages ?? 1;
    if (imageParts.length > 0 && imageParts.length + outputs > maxImagesPerRequest) {
      throw new GatewayError(
        'GW_VALIDATION',
        `numberOfImages plus reference images must not exceed ${maxImagesPerRequest} (${outputs} + ${imageParts.length})`,
      );
    }
  }
  // The optional fields as they go on: those the model does not take are dropped here, when not refused above.
  const parameters = {
    size: input.size,
    guidanceScale: kept('guidanceScale', input.guidanceScale),
    outputFormat,
    quality: kept('quality', input.quality),
    background: kept('background', input.background),
    outputCompression: kept('outputCompression', input.outputCompression),
    watermark: kept('watermark', input.watermark),
    maxTokens: kept('maxTokens', input.maxTokens),
  };
  gateParameters({
    modelId,
    capabilities: row.capabilities,
    scope: 'image',
    optional: {},
    fieldNames: input.fieldNames,
    values: { ...parameters, numberOfImages: input.numberOfImages, resolution: input.resolution },
  });

  const found = await references.assets(
    imageParts.flatMap(({ part, index }) =>
      part.type === 'imageAssetId' ? [{ assetId: part.assetId, where: `content[${index}]` }] : [],
    ),
  );
  const images: StoredImageSource[] = [];
  for (const { part, index } of imageParts) {
    const where = `content[${index}]`;
    if (part.type === 'imageUrl') {
      references.urls.add(part.url, where);
      images.push({ kind: 'url', url: part.url });
    } else if (part.type === 'imageBase64') {
      const inline = parseInlineImage(part.data, part.mediaType, where);
      images.push({ kind: 'inline', mediaType: inline.mediaType, data: inline.data });
    } else if (part.type === 'imageAssetId') {
      const asset = namedAsset(found, { assetId: part.assetId, where }, 'image');
      images.push({ kind: 'asset', objectKey: asset.objectKey, mediaType: asset.mediaType });
    }
  }
  const prompt = texts.map((part) => part.text).join('\n\n');
  const request: StoredImageRequest = {
    prompt: prompt === '' ? undefined : prompt,
    images,
    numberOfImages: layers ? 1 : (input.numberOfImages ?? 1),
    ...definedFields({
      ...parameters,
      optimizePromptMode: kept('optimizePromptOptions', input.optimizePromptMode),
      layers: layers ? { resolution: input.resolution ?? 'auto' } : undefined,
    }),
  };
  // Named to the client as its protocol spells them (alpha `output_compression`).
  return { request, dropped: dropped.map((field) => spelled(input.fieldNames, field)) };
}
