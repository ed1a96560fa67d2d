import { splitBase64, type EmbeddingInput, type EmbeddingPart } from '../../domain/embedding.ts';
import { GatewayError } from '../../domain/errors.ts';
import type { BetaEmbeddingPart, BetaEmbeddingsRequest } from '../../protocols/anthropic/messages.ts';

type InlinePart = Extract<BetaEmbeddingPart, { data: string }>;

/** Base64 as raw data with `mediaType`, or as a data URL; PDF is the one file type, so files may leave it out. */
function inline(part: InlinePart, where: string): { mediaType: string; data: string } {
  const split = splitBase64(part.data, part.mediaType);
  const mediaType = split.mediaType ?? (part.type === 'fileBase64' ? 'application/pdf' : undefined);
  if (!mediaType)
    throw new GatewayError(
      'GW_VALIDATION',
      `${where}.mediaType is required with raw base64 data (or send a data: URL)`,
    );
  return { mediaType, data: split.data };
}

function partOf(part: BetaEmbeddingPart, where: string): EmbeddingPart {
  switch (part.type) {
    case 'text':
      return { type: part.type, text: part.text };
    case 'imageUrl':
    case 'audioUrl':
      return { type: part.type, url: part.url };
    default:
      return { type: part.type, ...inline(part, where) };
  }
}

/** The beta extension's `input`: strings, or `{content: part[]}` objects whose parts are embedded together. */
export function decodeBetaEmbeddingInput(input: BetaEmbeddingsRequest['input']): EmbeddingInput[] {
  const items = typeof input === 'string' ? [input] : input;
  return items.map((item, index) => {
    if (typeof item === 'string') return { parts: [{ type: 'text', text: item }] };
    return { parts: item.content.map((part, partIndex) => partOf(part, `body.input.${index}.content.${partIndex}`)) };
  });
}
