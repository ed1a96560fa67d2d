import type { ObjectStore } from '../storage/object-store.ts';

/** Expiring download links to archived media, absolute and valid for `ttlSeconds`. */
export class MediaLinks {
  constructor(
    private readonly store: ObjectStore,
    private readonly ttlSeconds: number,
    /** PUBLIC_BASE_URL when the operator set it; otherwise links are made on `http://HOST:PORT` (see requestBaseUrl). */
    private readonly publicBaseUrl: string | undefined,
  ) {}

  async link(objectKey: string, now: Date, requestBaseUrl: string): Promise<string> {
    const link = await this.store.signedLink(objectKey, new Date(now.getTime() + this.ttlSeconds * 1000));
    return link.startsWith('/') ? `${this.publicBaseUrl ?? requestBaseUrl}${link}` : link;
  }
}
