import { createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';

/** Independent keys derived from the master secret, one per purpose, so no key is used for two things. */
export interface SecretKeys {
  sealing: Buffer;
  /** A key object rather than bytes: every request's credential is hashed with it, and preparing a key per call costs more than the hash. */
  lookup: KeyObject;
  /** Signs download links of archived media. */
  mediaLinks: KeyObject;
}

export function deriveSecretKeys(masterSecret: string): SecretKeys {
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', masterSecret, 'model-gateway', purpose, 32));
  return { sealing: derive('api-key-sealing'), lookup: createSecretKey(derive('credential-lookup')), mediaLinks: createSecretKey(derive('media-links')) };
}
