import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

/** The gateway path that serves archived files by signed link. */
export const mediaFilesPath = '/api/v1/media/files/';

function signature(key: KeyObject, objectKey: string, expires: number): string {
  return createHmac('sha256', key).update(`${objectKey}\n${expires}`).digest('base64url');
}

/** `/api/v1/media/files/<key>?expires=<unix seconds>&signature=<HMAC of key and expiry>`. */
export function signedFilePath(key: KeyObject, objectKey: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return `${mediaFilesPath}${objectKey.split('/').map(encodeURIComponent).join('/')}?expires=${expires}&signature=${signature(key, objectKey, expires)}`;
}

export type LinkCheck = 'valid' | 'invalid' | 'expired';

/** A download link as a client presents it: the object, and the expiry and signature of its query. */
export interface SignedFileLink {
  objectKey: string;
  expires: string | undefined;
  signature: string | undefined;
}

/** Whether a link's signature covers this object and expiry, and the expiry is still ahead. The signature is checked first, in constant time. */
export function checkSignedFile(
  key: KeyObject,
  { objectKey, expires, signature: given }: SignedFileLink,
  now: Date,
): LinkCheck {
  if (!expires || !/^\d{1,12}$/.test(expires) || !given) return 'invalid';
  const expected = Buffer.from(signature(key, objectKey, Number(expires)));
  const actual = Buffer.from(given);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return 'invalid';
  return Number(expires) * 1000 <= now.getTime() ? 'expired' : 'valid';
}
