/** The canonical embedding model every embedding surface decodes into and every provider adapter encodes from. */

/** The part types of the beta embeddings extension, which name what a model's catalog entry may accept. */
export const embeddingPartTypes = [
  'text',
  'imageBase64',
  'imageUrl',
  'audioBase64',
  'audioUrl',
  'fileBase64',
  'videoBase64',
] as const;
export type EmbeddingPartType = (typeof embeddingPartTypes)[number];

export type EmbeddingPart =
  | { type: 'text'; text: string }
  | { type: 'imageBase64'; mediaType: string; data: string }
  | { type: 'imageUrl'; url: string }
  | { type: 'audioBase64'; mediaType: string; data: string }
  | { type: 'audioUrl'; url: string }
  | { type: 'fileBase64'; mediaType: string; data: string }
  | { type: 'videoBase64'; mediaType: string; data: string };

/** One input: its parts are embedded together into one vector. */
export interface EmbeddingInput {
  parts: readonly EmbeddingPart[];
}

export interface EmbeddingRequest {
  /** The upstream model id the catalog rewrote the client's model to. */
  upstreamModel: string;
  inputs: readonly EmbeddingInput[];
  dimensions?: number;
  /**
   * Told the input tokens of each upstream call that answered, as it answers, by adapters that make several
   * calls for one request: what the provider used even when a later call fails.
   */
  reportUsage?(inputTokens: number): void;
}

export interface EmbeddingResult {
  /** One vector per input, in input order. */
  vectors: number[][];
  /** Input tokens as the upstream reported them; some protocols report none. */
  inputTokens: number | undefined;
}

/** What a request embeds besides text, which media prices and limits are counted in. */
export interface MediaTally {
  images: number;
  /** Durations in whole milliseconds, rounded up, as read from the media's own headers. */
  audioMs: number;
  videoMs: number;
  files: number;
}

export function emptyMediaTally(): MediaTally {
  return { images: 0, audioMs: 0, videoMs: 0, files: 0 };
}

/** The text of an input's text parts, for protocols that take one string per input. */
export function inputText(input: EmbeddingInput): string {
  return input.parts.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/**
 * `data:<type>;base64,<data>` taken apart, or raw base64 with the media type given beside it. The spec lets
 * base64 inputs be either; raw base64 needs a media type.
 */
export function splitBase64(
  data: string,
  mediaType: string | undefined,
): { mediaType: string | undefined; data: string } {
  const url = /^data:([^;,]+);base64,(.*)$/s.exec(data);
  return url ? { mediaType: url[1]!.toLowerCase(), data: url[2]! } : { mediaType: mediaType?.toLowerCase(), data };
}

/**
 * Most parts one input to embed may have (beta `content`, a gamma content). The protocols name no number, but
 * their models read a couple of thousand tokens of text at most; each part is counted (tokenized) apart, so the
 * bound keeps a request's work in proportion to what a model can take, whatever a body of the size limit holds.
 */
export const maxEmbeddingParts = 256;
