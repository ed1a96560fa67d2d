import {
  embeddingPartTypes,
  splitBase64,
  type EmbeddingInput,
  type EmbeddingPart,
  type EmbeddingPartType,
} from '../../domain/embedding.ts';
import { GatewayError } from '../../domain/errors.ts';

interface WirePart {
  type?: unknown;
  text?: unknown;
  data?: unknown;
  mediaType?: unknown;
  url?: unknown;
}

function refuse(message: string): never {
  throw new GatewayError('GW_VALIDATION', message);
}

function stringField(part: WirePart, field: 'text' | 'data' | 'url', where: string): string {
  const value = part[field];
  if (typeof value !== 'string' || value === '') refuse(`${where}.${field} must be a non-empty string`);
  return value;
}

/** Base64 as raw data with `mediaType`, or as a data URL; PDF is the one file type, so files may leave it out. */
function inline(part: WirePart, type: EmbeddingPartType, where: string): { mediaType: string; data: string } {
  const given =
    part.mediaType === undefined
      ? undefined
      : typeof part.mediaType === 'string'
        ? part.mediaType
        : refuse(`${where}.mediaType must be a string`);
  const split = splitBase64(stringField(part, 'data', where), given);
  const mediaType = split.mediaType ?? (type === 'fileBase64' ? 'application/pdf' : undefined);
  if (!mediaType) refuse(`${where}.mediaType is required with raw base64 data (or send a data: URL)`);
  return { mediaType, data: split.data };
}

function partOf(part: WirePart, where: string): EmbeddingPart {
  if (part === null || typeof part !== 'object') refuse(`${where} must be an object`);
  const type = part.type as EmbeddingPartType;
  if (!(embeddingPartTypes as readonly unknown[]).includes(type))
    refuse(`${where}.type must be one of ${embeddingPartTypes.join(', ')}`);
  switch (type) {
    case 'text':
      return { type, text: stringField(part, 'text', where) };
    case 'imageUrl':
    case 'audioUrl':
      return { type, url: stringField(part, 'url', where) };
    default:
      return { type, ...inline(part, type, where) };
  }
}

/** The beta extension's `input`: strings, or `{content: part[]}` objects whose parts are embedded together. */
export function decodeBetaEmbeddingInput(input: string | readonly unknown[]): EmbeddingInput[] {
  const items = typeof input === 'string' ? [input] : input;
  return items.map((item, index) => {
    const where = `body.input.${index}`;
    if (typeof item === 'string') return { parts: [{ type: 'text', text: item }] };
    const content = (item as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) refuse(`${where} must be a string or an object with a content array`);
    return { parts: content.map((part, partIndex) => partOf(part as WirePart, `${where}.content.${partIndex}`)) };
  });
}
