import type { Capabilities } from '../domain/capabilities.ts';
import {
  embeddingPartTypes,
  emptyMediaTally,
  type EmbeddingInput,
  type EmbeddingPart,
  type EmbeddingPartType,
  type MediaTally,
} from '../domain/embedding.ts';
import { GatewayError } from '../domain/errors.ts';
import { isoVideoFacts } from '../media/iso-video.ts';
import { sniffMediaType } from '../media/media-type.ts';
import { RemoteMediaError, type ByteBudget, type FetchedMedia } from '../media/remote-media.ts';
import { wavSeconds } from '../media/wav-audio.ts';

/** The spec's limits for embedding requests (Limits: embeddings rows), checked before anything is held or sent. */
export const embeddingLimits = {
  inputs: 128,
  images: 6,
  audioParts: 1,
  audioSeconds: 180,
  videoParts: 1,
  videoMediaTypes: ['video/mp4', 'video/quicktime'],
  videoSeconds: 120,
  fileMediaTypes: ['application/pdf'],
} as const;

/** Spellings of the WAV media type in use, all meaning `audio/wav`. */
const wavAliases = new Set(['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave']);

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

/** URL parts the gateway can fetch and send inline, for protocols that take only the bytes. */
const inlineForm = { imageUrl: 'imageBase64', audioUrl: 'audioBase64' } as const satisfies Partial<
  Record<EmbeddingPartType, EmbeddingPartType>
>;

/** What one provider row takes: the part types the model accepts, and those its protocol carries as they are. */
export interface EmbeddingRowInputs {
  accepted: readonly EmbeddingPartType[];
  carries: readonly EmbeddingPartType[];
}

export type MediaFetch = (url: string, budget: ByteBudget) => Promise<FetchedMedia>;

/** A part as a protocol receives it: audio named by URL has been fetched by then. */
type PreparedPart = Exclude<EmbeddingPart, { type: 'audioUrl' }>;

/** A prepared part, with the bytes of fetched media kept so they are checked without decoding them again. */
interface Prepared {
  part: PreparedPart;
  fetched?: Buffer;
}

type UrlPart = Extract<EmbeddingPart, { type: 'imageUrl' | 'audioUrl' }>;

/**
 * The part types a model's row accepts: its catalog entry's `capabilities.inputs.parts` when it lists them,
 * else text (and images when the model takes image input); never more than the row's protocol can carry,
 * where a URL counts as carried when the protocol takes the bytes it names.
 */
export function acceptedParts(
  capabilities: Capabilities | undefined,
  inputModalities: readonly string[],
  protocolParts: readonly EmbeddingPartType[],
): EmbeddingPartType[] {
  const listed = capabilities?.inputs?.parts;
  const configured: readonly string[] = Array.isArray(listed)
    ? (listed as string[])
    : ['text', ...(inputModalities.includes('image') ? ['imageBase64', 'imageUrl'] : [])];
  const carried = (type: EmbeddingPartType) =>
    protocolParts.includes(type) ||
    (type in inlineForm && protocolParts.includes(inlineForm[type as keyof typeof inlineForm]));
  return embeddingPartTypes.filter((type) => configured.includes(type) && carried(type));
}

function refuse(message: string): never {
  throw new GatewayError('GW_VALIDATION', message);
}

function decodeBase64(data: string, where: string): Buffer {
  const compact = data.replace(/\s+/g, '');
  if (compact.length === 0 || !base64Pattern.test(compact)) refuse(`${where} is not valid base64`);
  return Buffer.from(compact, 'base64');
}

/**
 * Part types, counts and sizes that need no bytes: refused before anything is decoded, held or fetched.
 * Returns the most media the request can embed (audio and video at their longest allowed durations), which
 * bounds what it can cost before any media has been read.
 */
export function checkEmbeddingShape(
  modelId: string,
  inputs: readonly EmbeddingInput[],
  accepted: readonly EmbeddingPartType[],
): MediaTally {
  if (inputs.length === 0) refuse('at least one input is required');
  if (inputs.length > embeddingLimits.inputs)
    refuse(`at most ${embeddingLimits.inputs} inputs are accepted per request (got ${inputs.length})`);
  const bound = emptyMediaTally();
  let audioParts = 0;
  let videoParts = 0;
  for (const [index, input] of inputs.entries()) {
    if (input.parts.length === 0) refuse(`input ${index} has no content`);
    for (const part of input.parts) {
      if (!accepted.includes(part.type)) refuse(`model "${modelId}" does not accept "${part.type}" input parts`);
      if (part.type === 'text' && part.text.length === 0) refuse(`input ${index} has an empty text`);
      if (part.type === 'imageUrl' || part.type === 'imageBase64') bound.images++;
      if (part.type === 'fileBase64') bound.files++;
      if ((part.type === 'audioUrl' || part.type === 'audioBase64') && ++audioParts > embeddingLimits.audioParts)
        refuse(`at most ${embeddingLimits.audioParts} audio part is accepted per request`);
      if (part.type === 'videoBase64' && ++videoParts > embeddingLimits.videoParts)
        refuse(`at most ${embeddingLimits.videoParts} video part is accepted per request`);
    }
  }
  if (bound.images > embeddingLimits.images)
    refuse(`at most ${embeddingLimits.images} images are accepted per request (got ${bound.images})`);
  bound.audioMs = audioParts * embeddingLimits.audioSeconds * 1000;
  bound.videoMs = videoParts * embeddingLimits.videoSeconds * 1000;
  return bound;
}

/** A URL part's media, fetched and made the inline part of its kind; its media type is read from the bytes when they say. */
async function fetchInline(
  part: UrlPart,
  { fetchMedia, budget, where }: { fetchMedia: MediaFetch; budget: ByteBudget; where: string },
): Promise<Prepared> {
  let media: FetchedMedia;
  try {
    media = await fetchMedia(part.url, budget);
  } catch (error) {
    if (!(error instanceof RemoteMediaError)) throw error;
    const shown = part.url.length > 200 ? `${part.url.slice(0, 200)}...` : part.url;
    return refuse(`${where}: could not fetch ${shown}: ${error.message}`);
  }
  const mediaType = sniffMediaType(media.bytes) ?? media.contentType ?? 'application/octet-stream';
  return {
    part: { type: inlineForm[part.type], mediaType, data: media.bytes.toString('base64') },
    fetched: media.bytes,
  };
}

/** One part with its bytes checked against the limits; adds what it embeds besides text to the tally. */
function checkBytes({ part, fetched }: Prepared, where: string, tally: MediaTally): void {
  switch (part.type) {
    case 'text':
      return;
    case 'imageUrl':
      tally.images++;
      return;
    case 'imageBase64':
      if (!part.mediaType.startsWith('image/'))
        refuse(`${where}: an image needs an image/* media type, not "${part.mediaType}"`);
      if (!fetched) decodeBase64(part.data, `${where}'s image`);
      tally.images++;
      return;
    case 'audioBase64': {
      if (!wavAliases.has(part.mediaType)) refuse(`${where}: audio must be audio/wav, not "${part.mediaType}"`);
      const seconds = wavSeconds(fetched ?? decodeBase64(part.data, `${where}'s audio`));
      if (seconds === undefined) refuse(`${where}: the audio is not a readable WAV file`);
      if (seconds > embeddingLimits.audioSeconds)
        refuse(
          `${where}: the audio lasts ${seconds.toFixed(1)} s; at most ${embeddingLimits.audioSeconds} s is accepted`,
        );
      tally.audioMs += Math.ceil(seconds * 1000);
      return;
    }
    case 'videoBase64': {
      if (!(embeddingLimits.videoMediaTypes as readonly string[]).includes(part.mediaType))
        refuse(`${where}: video must be MP4 or MOV (video/mp4, video/quicktime), not "${part.mediaType}"`);
      const video = isoVideoFacts(decodeBase64(part.data, `${where}'s video`));
      if (!video) refuse(`${where}: the video is not a readable MP4 or MOV file`);
      if (video.seconds > embeddingLimits.videoSeconds)
        refuse(
          `${where}: the video lasts ${video.seconds.toFixed(1)} s; at most ${embeddingLimits.videoSeconds} s is accepted`,
        );
      tally.videoMs += Math.ceil(video.seconds * 1000);
      return;
    }
    case 'fileBase64':
      if (!(embeddingLimits.fileMediaTypes as readonly string[]).includes(part.mediaType))
        refuse(`${where}: files must be PDF (application/pdf), not "${part.mediaType}"`);
      if (!decodeBase64(part.data, `${where}'s file`).subarray(0, 5).equals(Buffer.from('%PDF-')))
        refuse(`${where}: the file is not a PDF`);
      tally.files++;
      return;
  }
}

/**
 * Returns the inputs as the row's protocol will carry them, their media checked against the spec's limits:
 * audio URLs always fetched (their length must be read before the call), image URLs fetched where the
 * protocol takes only bytes, all downloads of the request within `maxBytes` in all. Durations are read from
 * the media's own bytes, never shorter than what they hold (wav-audio.ts, iso-video.ts), and the same duration
 * is checked against its limit and tallied. Runs after admission (the shape was checked and the bound reserved); throws a
 * 400 naming the limit or the URL that could not be fetched.
 */
export async function prepareEmbeddingInputs(
  inputs: readonly EmbeddingInput[],
  row: EmbeddingRowInputs,
  { fetchMedia, maxBytes }: { fetchMedia: MediaFetch; maxBytes: number },
): Promise<{ inputs: EmbeddingInput[]; media: MediaTally }> {
  // Text alone has nothing to fetch, decode or tally: no promise per input and per part.
  if (inputs.every((input) => input.parts.every((part) => part.type === 'text')))
    return { inputs: inputs.map((input) => ({ parts: [...input.parts] })), media: emptyMediaTally() };
  const budget: ByteBudget = { limit: maxBytes, remaining: maxBytes };
  const fetchedHere = (part: EmbeddingPart): part is UrlPart =>
    part.type === 'audioUrl' || (part.type === 'imageUrl' && !row.carries.includes('imageUrl'));
  const prepared = await Promise.all(
    inputs.map((input, index) =>
      Promise.all(
        input.parts.map((part): Prepared | Promise<Prepared> =>
          fetchedHere(part) ? fetchInline(part, { fetchMedia, budget, where: `input ${index}` }) : { part },
        ),
      ),
    ),
  );
  const media = emptyMediaTally();
  for (const [index, parts] of prepared.entries()) {
    for (const part of parts) checkBytes(part, `input ${index}`, media);
  }
  return { inputs: prepared.map((parts) => ({ parts: parts.map(({ part }) => part) })), media };
}
