import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import type { WireCheck } from '../../protocols/wire-check.ts';

/** Data an upstream sent, as its protocol's shape; anything else breaks the protocol (a 502, and the next row may serve). */
export function checked<T>(value: unknown, check: WireCheck<T>, what: string): T {
  if (!check(value))
    throw new UpstreamUnreachableError(
      'protocol',
      `the upstream answered with ${what} that does not follow its protocol`,
    );
  return value;
}

/** One stream event's JSON, checked against the protocol's event shape; an event that is not JSON breaks the protocol. */
export function checkedEvent<T>(data: string, check: WireCheck<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new UpstreamUnreachableError('protocol', 'the upstream sent an event that is not JSON');
  }
  return checked(value, check, 'a stream event');
}

/** The index of a choice the request asked for (`choices`); another breaks the protocol, and would grow the answer. */
export function askedChoice(index: number, choices: number | undefined): number {
  if (index < (choices ?? 1)) return index;
  throw new UpstreamUnreachableError('protocol', `the upstream answered choice ${index}, which was not asked for`);
}
