import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { SecretKeys } from './secret-keys.ts';

export const apiKeyPrefix = 'gwk_';
export const sessionTokenPrefix = 'gws_';

/** 32 random bytes (256 bits) after a recognisable prefix. */
export function generateApiKey(): string {
  return apiKeyPrefix + randomBytes(32).toString('base64url');
}

export function generateSessionToken(): string {
  return sessionTokenPrefix + randomBytes(32).toString('base64url');
}

/** What lists show of a key: the prefix and a few characters, never enough to use it. */
export function displayPrefixOf(rawKey: string): string {
  return `${rawKey.slice(0, apiKeyPrefix.length + 6)}…`;
}

/** Keyed hash used as the database index for keys and session tokens. */
export function lookupHashOf(keys: SecretKeys, credential: string): string {
  return createHmac('sha256', keys.lookup).update(credential).digest('base64url');
}

const sealVersion = 'v1';

/** AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
export function sealSecret(keys: SecretKeys, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keys.sealing, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    sealVersion,
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    ciphertext.toString('base64url'),
  ].join('.');
}

export function unsealSecret(keys: SecretKeys, sealed: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== sealVersion || !iv || !tag || ciphertext === undefined) throw new Error('unrecognised sealed value');
  const decipher = createDecipheriv('aes-256-gcm', keys.sealing, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}
