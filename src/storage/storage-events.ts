import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';

/**
 * An event's fields. Others pass: a newer process may add one during a rolling upgrade, and this process must
 * still act on the event (a key revoked, credit to give back).
 */
const event = <Fields extends Record<string, ReturnType<typeof Type.String | typeof Type.Literal>>>(fields: Fields) =>
  Type.Object(fields);

/**
 * Something other processes (or this one) must forget from their caches, or give back:
 * - `key-changed`, `session-ended`: a key or a session to read again;
 * - `account-changed`: an account was disabled or enabled, its role changed, or its password was set (ending its
 *   sessions): its cached keys and sessions are read again;
 * - `give-back-credit`: leases must give back the account's unused credit (a process refused one of its requests
 *   while others leased its credit, or an operator took credit away: leased credit must not outlive the balance);
 * - `jobs-queued`: idle workers look for media jobs now rather than at their next poll;
 * - `job-finished`: a media job reached a terminal state: requests waiting for it answer now;
 * - `catalog-changed`: the runtime catalog (models, prices, switches) changed: every process reads it again;
 * - `provider-keys-changed`: a provider's runtime upstream keys changed: every process reads them again.
 */
const storageEvent = Type.Union([
  event({ type: Type.Literal('key-changed'), keyId: Type.String() }),
  event({ type: Type.Literal('session-ended'), tokenHash: Type.String() }),
  event({ type: Type.Literal('account-changed'), accountId: Type.String() }),
  event({ type: Type.Literal('give-back-credit'), accountId: Type.String() }),
  event({ type: Type.Literal('jobs-queued') }),
  event({ type: Type.Literal('job-finished'), jobId: Type.String() }),
  event({ type: Type.Literal('catalog-changed') }),
  event({ type: Type.Literal('provider-keys-changed') }),
]);

export type StorageEvent = Static<typeof storageEvent>;

const checkedEvent = Compile(storageEvent);

/**
 * A notification's payload as the event it names, or an error saying why it is none: the payload is whatever the
 * database delivered on the channel (another process's, possibly of another version, or anyone's `NOTIFY`).
 */
export function parseStorageEvent(payload: string): StorageEvent | Error {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return new Error('a storage event that is not JSON was ignored');
  }
  if (checkedEvent.Check(value)) return value;
  const type = typeof value === 'object' && value !== null ? Reflect.get(value, 'type') : undefined;
  return new Error(
    `a storage event of an unknown shape${typeof type === 'string' ? ` (type ${JSON.stringify(type.slice(0, 40))})` : ''} was ignored`,
  );
}
