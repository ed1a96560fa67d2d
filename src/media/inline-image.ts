import { GatewayError } from '../domain/errors.ts';
import { sniffMediaType } from './media-type.ts';

/** The image types a request may carry (spec, Native: image). */
export const acceptedImageTypes = [
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
  'image/bmp',
  'image/tiff',
  'image/heic',
  'image/heif',
  'image/avif',
] as const;

/** Base64 characters decoded to judge a file's type: 48 bytes, more than any signature needs. */
const sniffedBase64Characters = 64;

/** HEIC files often declare the generic HEIF brand, and HEIF files the HEVC one: either name fits either. */
function sameImageType(actual: string, declared: string): boolean {
  const family = (type: string) => (type === 'image/heic' || type === 'image/heif' ? 'heif' : type);
  return family(actual) === family(declared);
}

const dataUrl = /^data:([^;,]+)((?:;[^;,]*)*);base64,/i;
const base64Text = /^[A-Za-z0-9+/]*={0,2}$/;

export interface InlineImage {
  mediaType: string;
  /** Base64 without whitespace, as it is sent on. */
  data: string;
  bytes: number;
}

/**
 * An `imageBase64` part: a full data URL, or raw base64 with its `mediaType`. The type is judged on the
 * bytes: they must be an image of an accepted type, and the one the client declared, so a provider never
 * receives a file under a type it does not have.
 */
export function parseInlineImage(data: string, declaredType: string | undefined, where: string): InlineImage {
  return parseInlineMedia(
    { data, declaredType, where },
    {
      accepted: acceptedImageTypes,
      noun: 'an image',
      same: sameImageType,
    },
  );
}

/** The video types a request may carry inline (ISO base media and WebM). */
export const acceptedVideoTypes = ['video/mp4', 'video/quicktime', 'video/webm'] as const;

/** A `videoBase64` part, judged like an image part. */
export function parseInlineVideo(data: string, declaredType: string | undefined, where: string): InlineImage {
  return parseInlineMedia(
    { data, declaredType, where },
    {
      accepted: acceptedVideoTypes,
      noun: 'a video',
      same: (actual, declared) => actual === declared,
    },
  );
}

function parseInlineMedia(
  { data, declaredType, where }: { data: string; declaredType: string | undefined; where: string },
  kind: { accepted: readonly string[]; noun: string; same: (actual: string, declared: string) => boolean },
): InlineImage {
  let payload = data;
  let declared = declaredType?.trim().toLowerCase();
  const match = dataUrl.exec(data);
  if (match) {
    declared = match[1]!.trim().toLowerCase();
    payload = data.slice(match[0].length);
  } else if (declared === undefined) {
    throw new GatewayError('GW_VALIDATION', `${where}: raw base64 needs "mediaType" (or send a data URL)`);
  }
  if (!kind.accepted.includes(declared!)) {
    throw new GatewayError(
      'GW_VALIDATION',
      `${where}: media type "${declared}" is not accepted; use one of ${kind.accepted.join(', ')}`,
    );
  }
  payload = payload.replace(/\s+/g, '');
  if (payload.length === 0 || payload.length % 4 === 1 || !base64Text.test(payload))
    throw new GatewayError('GW_VALIDATION', `${where}: "data" is not valid base64`);
  // The signatures sit in the first bytes: only those are decoded, so the check costs the same for any size.
  const actual = sniffMediaType(Buffer.from(payload.slice(0, sniffedBase64Characters), 'base64'));
  if (actual === undefined || !kind.accepted.includes(actual) || !kind.same(actual, declared!)) {
    throw new GatewayError(
      'GW_VALIDATION',
      `${where}: the bytes are ${actual && kind.accepted.includes(actual) ? `"${actual}"` : `not ${kind.noun} of an accepted type`}, not "${declared}"`,
    );
  }
  return {
    mediaType: declared!,
    data: payload,
    bytes: Math.floor((payload.length * 3) / 4) - (payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0),
  };
}
