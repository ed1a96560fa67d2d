import type { KeyObject } from 'node:crypto';
import type { Readable } from 'node:stream';
import { GatewayError } from '../domain/errors.ts';
import { attachmentDisposition } from '../storage/download-name.ts';
import type { FsObjectStore } from '../storage/fs-object-store.ts';
import { checkSignedFile } from '../storage/signed-links.ts';

export interface MediaDownload {
  status: 200 | 206;
  headers: Record<string, string>;
  /** Undefined for HEAD. */
  body: Readable | undefined;
}

/** What a download asks: the `range` header if any, and whether it is a HEAD (headers only). */
export interface DownloadAsk {
  range?: string | undefined;
  head: boolean;
}

/**
 * Serves archived files by the signed links of the filesystem store: no credential, only a signature over
 * the object and its expiry. A single byte range is honoured (video players seek).
 */
export class MediaDownloads {
  constructor(
    private readonly store: FsObjectStore | undefined,
    private readonly linkKey: KeyObject,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async open(
    objectKey: string,
    query: { expires?: string; signature?: string },
    asked: DownloadAsk,
  ): Promise<MediaDownload> {
    const now = this.clock();
    const check = checkSignedFile(this.linkKey, { objectKey, expires: query.expires, signature: query.signature }, now);
    if (check === 'expired')
      throw new GatewayError('GW_FORBIDDEN', 'the download link is expired: read the job again for a fresh link');
    if (check !== 'valid' || !this.store) throw new GatewayError('GW_FORBIDDEN', 'the download link is not valid');
    return this.serve(objectKey, {
      ...asked,
      maxAgeSeconds: Math.max(0, Number(query.expires) - Math.floor(now.getTime() / 1000)),
    });
  }

  /** Whether archived files are served by the gateway itself (filesystem store) rather than by their store's own links. */
  get servesFiles(): boolean {
    return this.store !== undefined;
  }

  /** An archived file, or the asked byte range of it, for a caller already entitled to it. */
  async serve(
    objectKey: string,
    { range: rangeHeader, head, maxAgeSeconds }: DownloadAsk & { maxAgeSeconds: number },
  ): Promise<MediaDownload> {
    const found = this.store ? await this.store.size(objectKey).catch(() => undefined) : undefined;
    if (!this.store || !found) throw fileGone();
    const range = rangeHeader === undefined ? undefined : parseRange(rangeHeader, found.size);
    const headers: Record<string, string> = {
      'content-type': found.contentType,
      // A browser opening the link renders nothing of ours as another type than the one stored, and saves
      // the file rather than showing it on the gateway's origin.
      'x-content-type-options': 'nosniff',
      'content-disposition': attachmentDisposition(objectKey),
      'accept-ranges': 'bytes',
      'cache-control': `private, max-age=${maxAgeSeconds}`,
    };
    if (range === 'unsatisfiable') {
      // The file's size, as RFC 9110 (15.5.17) has a 416 say it, so a client can ask again within it.
      throw new GatewayError(
        'GW_RANGE_NOT_SATISFIABLE',
        `the range "${rangeHeader}" is outside the file's ${found.size} bytes`,
      ).withHeader('content-range', `bytes */${found.size}`);
    }
    const span = range ?? { start: 0, end: found.size - 1 };
    headers['content-length'] = String(Math.max(0, span.end - span.start + 1));
    if (range) headers['content-range'] = `bytes ${span.start}-${span.end}/${found.size}`;
    if (head || found.size === 0) return { status: range ? 206 : 200, headers, body: undefined };
    // Deleted since its size was read (the retention sweep): 404, not a 200 whose promised bytes never come.
    const opened = await this.store.open(objectKey, span);
    if (!opened) throw fileGone();
    return { status: range ? 206 : 200, headers, body: opened.stream };
  }
}

const fileGone = () => new GatewayError('GW_NOT_FOUND', 'the file of this link no longer exists');

/** One `bytes=` range (`a-b`, `a-`, `-n`); undefined (the whole file) for forms not supported, such as several ranges. */
function parseRange(header: string, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}
