import { randomUUID } from 'node:crypto';

export type IdKind =
  | 'acct'
  | 'key'
  | 'sess'
  | 'hold'
  | 'lease'
  | 'gen'
  | 'grant'
  | 'inst'
  | 'call'
  | 'asset'
  | 'audit'
  | 'price'
  | 'pkey';

/** Prefixed random ids, so an id in a log says what it names. */
export function newId(kind: IdKind): string {
  return `${kind}_${randomUUID().replaceAll('-', '')}`;
}
