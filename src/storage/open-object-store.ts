import type { KeyObject } from 'node:crypto';
import path from 'node:path';
import type { MediaConfig } from '../config/load-config.ts';
import { FsObjectStore } from './fs-object-store.ts';
import type { ObjectStore } from './object-store.ts';

/**
 * The configured object store: files under `DATA_DIR/media`, or an S3-compatible bucket. The S3 client is
 * loaded only for a bucket: it holds about 35 MiB of a process that never uses it.
 */
export async function openObjectStore(options: {
  media: MediaConfig;
  dataDir: string;
  linkKey: KeyObject;
}): Promise<ObjectStore> {
  if (options.media.store === 's3' && options.media.s3) {
    const { S3ObjectStore } = await import('./s3-object-store.ts');
    return new S3ObjectStore(options.media.s3);
  }
  return new FsObjectStore(path.join(options.dataDir, 'media'), options.linkKey);
}
