import { createHash, timingSafeEqual } from 'node:crypto';
import { revealed, type Secret } from '../domain/secret.ts';

/** The token of an `Authorization: Bearer <token>` header, or undefined when the header is absent or not that. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(authorization?.trim() ?? '')?.[1];
}

/**
 * Whether a secret the client sent equals the expected one, in time that reveals neither its content nor its
 * length. The configured tokens are `Secret`s, revealed here only, for the comparison.
 */
export function sameSecret(given: string, expected: Secret | string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(revealed(expected)));
}
