import { createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { revealed, type Secret } from '../domain/secret.ts';

/** Independent keys derived from the master secret, one per purpose, so no key is used for two things. */
export interface SecretKeys {
  sealing: Buffer;
  /** A key object rather than bytes: every request's credential is hashed with it, and preparing a key per call costs more than the hash. */
  lookup: KeyObject;
  /** Signs download links of archived media. */
  mediaLinks: KeyObject;
  /**
   * What the database keeps to tell whether a process has the secret it was used with (identity/gateway-secret.ts):
   * an HMAC-SHA-256 of a fixed label under a key of its own, derived for nothing else. It reveals nothing of the
   * secret or of the other keys; checking a guessed secret against it is no easier than against any value
   * sealed with the secret, which the database holds already.
   */
  verifier: string;
}

/** The label the verifier is an HMAC of; a change of it (or of the derivation) is a new version. */
const verifierLabel = 'model-gateway: the database is used with this GATEWAY_SECRET';
const verifierVersion = 'v1';

/** The master secret is revealed here only, to derive the keys (tests may pass a plain string). */
export function deriveSecretKeys(masterSecret: Secret | string): SecretKeys {
  const master = revealed(masterSecret);
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', master, 'model-gateway', purpose, 32));
  return {
    sealing: derive('api-key-sealing'),
    lookup: createSecretKey(derive('credential-lookup')),
    mediaLinks: createSecretKey(derive('media-links')),
    verifier: `${verifierVersion}.${createHmac('sha256', derive('secret-verifier')).update(verifierLabel).digest('base64url')}`,
  };
}
