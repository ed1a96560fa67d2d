import { createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { revealed, type Secret } from '../domain/secret.ts';

/** Independent keys derived from the master secret, one per purpose, so no key is used for two things. */
export interface SecretKeys {
  sealing: Buffer;
  /** A key object rather than bytes: every request's credential is hashed with it, and preparing a key per call costs more than the hash. */
  lookup: KeyObject;
  /** Signs download links of archived media. */
  mediaLinks: KeyObject;
}

/** The master secret is revealed here only, to derive the keys (tests may pass a plain string). */
export function deriveSecretKeys(masterSecret: Secret | string): SecretKeys {
  const master = revealed(masterSecret);
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', master, 'model-gateway', purpose, 32));
  return {
    sealing: derive('api-key-sealing'),
    lookup: createSecretKey(derive('credential-lookup')),
    mediaLinks: createSecretKey(derive('media-links')),
  };
}
