import { hkdfSync } from 'node:crypto';

/** Independent keys derived from the master secret, one per purpose, so no key is used for two things. */
export interface SecretKeys {
  sealing: Buffer;
  lookup: Buffer;
}

export function deriveSecretKeys(masterSecret: string): SecretKeys {
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', masterSecret, 'model-gateway', purpose, 32));
  return { sealing: derive('api-key-sealing'), lookup: derive('credential-lookup') };
}
