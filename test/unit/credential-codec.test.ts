import { describe, expect, it } from 'vitest';
import {
  apiKeyPrefix,
  generateApiKey,
  lookupHashOf,
  sealSecret,
  unsealSecret,
} from '../../src/identity/credential-codec.ts';
import { hashPassword, verifyPassword } from '../../src/identity/password-hasher.ts';
import { deriveSecretKeys } from '../../src/identity/secret-keys.ts';

const keys = deriveSecretKeys('a'.repeat(40));

describe('API key material', () => {
  it('has a recognisable prefix and 256 bits of randomness', () => {
    const key = generateApiKey();
    expect(key.startsWith(apiKeyPrefix)).toBe(true);
    expect(Buffer.from(key.slice(apiKeyPrefix.length), 'base64url')).toHaveLength(32);
    expect(generateApiKey()).not.toBe(key);
  });

  it('seals with AES-256-GCM so only the same secret opens it, and tampering is detected', () => {
    const key = generateApiKey();
    const sealed = sealSecret(keys, key);
    expect(sealed).not.toContain(key.slice(apiKeyPrefix.length));
    expect(unsealSecret(keys, sealed)).toBe(key);
    expect(sealSecret(keys, key)).not.toBe(sealed);
    expect(() => unsealSecret(deriveSecretKeys('b'.repeat(40)), sealed)).toThrow();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('x'.repeat(10)).toString('base64url');
    expect(() => unsealSecret(keys, parts.join('.'))).toThrow();
  });

  it('hashes for lookup with a key of its own', () => {
    const key = generateApiKey();
    expect(lookupHashOf(keys, key)).toBe(lookupHashOf(keys, key));
    expect(lookupHashOf(deriveSecretKeys('b'.repeat(40)), key)).not.toBe(lookupHashOf(keys, key));
  });
});

describe('passwords', () => {
  it('verifies the right password only', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(stored.startsWith('scrypt$32768$8$1$')).toBe(true);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassword('anything', 'not-a-hash')).toBe(false);
  });
});
