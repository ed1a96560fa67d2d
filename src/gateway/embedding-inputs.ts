import type { Capabilities } from '../domain/capabilities.ts';
import { embeddingPartTypes, type EmbeddingInput, type EmbeddingPartType, type MediaTally } from '../domain/embedding.ts';
import { GatewayError } from '../domain/errors.ts';
import { isoVideoFacts, wavSeconds } from '../media/media-duration.ts';

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

/**
 * The part types a model's row accepts: its catalog entry's `capabilities.inputs.parts` when it lists them,
 * else text (and images when the model takes image input); never more than the row's protocol can carry.
 */
export function acceptedParts(capabilities: Capabilities | undefined, inputModalities: readonly string[], protocolParts: readonly EmbeddingPartType[]): EmbeddingPartType[] {
  const listed = capabilities?.inputs?.parts;
  const configured: readonly string[] = Array.isArray(listed) ? (listed as string[]) : ['text', ...(inputModalities.includes('image') ? ['imageBase64', 'imageUrl'] : [])];
  return embeddingPartTypes.filter((type) => configured.includes(type) && protocolParts.includes(type));
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
 * Checks every input against what the model accepts and the spec's limits, reading media durations from the
 * media's own headers; returns what the request embeds besides text. Throws a 400 naming the model and
 * the part type, or the limit, before any hold or upstream call.
 */
export async function checkEmbeddingInputs(modelId: string, inputs: readonly EmbeddingInput[], accepted: readonly EmbeddingPartType[]): Promise<MediaTally> {
  if (inputs.length === 0) refuse('at least one input is required');
  if (inputs.length > embeddingLimits.inputs) refuse(`at most ${embeddingLimits.inputs} inputs are accepted per request (got ${inputs.length})`);
  const tally: MediaTally = { images: 0, audioMs: 0, videoMs: 0, files: 0 };
  let audioParts = 0;
  let videoParts = 0;
  for (const [index, input] of inputs.entries()) {
    const where = `input ${index}`;
    if (input.parts.length === 0) refuse(`${where} has no content`);
    for (const part of input.parts) {
      if (!accepted.includes(part.type)) refuse(`model "${modelId}" does not accept "${part.type}" input parts`);
      switch (part.type) {
        case 'text':
          if (part.text.length === 0) refuse(`${where} has an empty text`);
          break;
        case 'imageUrl':
          tally.images++;
          break;
        case 'imageBase64':
          if (!part.mediaType.startsWith('image/')) refuse(`${where}: an image needs an image/* media type, not "${part.mediaType}"`);
          decodeBase64(part.data, `${where}'s image`);
          tally.images++;
          break;
        case 'audioUrl':
          // A remote file's length cannot be read before the call, so the 180 s limit could not be held.
          refuse(`${where}: audio must be sent inline (audioBase64) so its duration can be checked`);
          break;
        case 'audioBase64': {
          if (++audioParts > embeddingLimits.audioParts) refuse(`at most ${embeddingLimits.audioParts} audio part is accepted per request`);
          if (!wavAliases.has(part.mediaType)) refuse(`${where}: audio must be audio/wav, not "${part.mediaType}"`);
          const seconds = await wavSeconds(decodeBase64(part.data, `${where}'s audio`));
          if (seconds === undefined) refuse(`${where}: the audio is not a readable WAV file`);
          if (seconds > embeddingLimits.audioSeconds) refuse(`${where}: the audio lasts ${seconds.toFixed(1)} s; at most ${embeddingLimits.audioSeconds} s is accepted`);
          tally.audioMs += Math.ceil(seconds * 1000);
          break;
        }
        case 'videoBase64': {
          if (++videoParts > embeddingLimits.videoParts) refuse(`at most ${embeddingLimits.videoParts} video part is accepted per request`);
          if (!(embeddingLimits.videoMediaTypes as readonly string[]).includes(part.mediaType)) refuse(`${where}: video must be MP4 or MOV (video/mp4, video/quicktime), not "${part.mediaType}"`);
          const video = isoVideoFacts(decodeBase64(part.data, `${where}'s video`));
          if (!video) refuse(`${where}: the video is not a readable MP4 or MOV file`);
          if (video.seconds > embeddingLimits.videoSeconds) refuse(`${where}: the video lasts ${video.seconds.toFixed(1)} s; at most ${embeddingLimits.videoSeconds} s is accepted`);
          tally.videoMs += Math.ceil(video.seconds * 1000);
          break;
        }
        case 'fileBase64':
          if (!(embeddingLimits.fileMediaTypes as readonly string[]).includes(part.mediaType)) refuse(`${where}: files must be PDF (application/pdf), not "${part.mediaType}"`);
          if (!decodeBase64(part.data, `${where}'s file`).subarray(0, 5).equals(Buffer.from('%PDF-'))) refuse(`${where}: the file is not a PDF`);
          tally.files++;
          break;
      }
    }
  }
  if (tally.images > embeddingLimits.images) refuse(`at most ${embeddingLimits.images} images are accepted per request (got ${tally.images})`);
  return tally;
}
