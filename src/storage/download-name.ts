import { create as contentDisposition } from 'content-disposition';

/**
 * The file name offered for an object (`images/gen_1/0.png` gives `gen_1-0.png`): its last two path segments,
 * with anything but letters, digits, `.`, `_` and `-` replaced, and no leading dot.
 */
export function downloadName(objectKey: string): string {
  const name = objectKey
    .split('/')
    .filter(Boolean)
    .slice(-2)
    .join('-')
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '');
  return name === '' ? 'download' : name.slice(-120);
}

/**
 * The `content-disposition` of every download of an archived object, whichever store serves it: an
 * attachment under `downloadName`, so a browser opening the link saves the file rather than showing it.
 */
export function attachmentDisposition(objectKey: string): string {
  return contentDisposition(downloadName(objectKey), { type: 'attachment' });
}
