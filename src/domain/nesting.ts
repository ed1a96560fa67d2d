import { GatewayError } from './errors.ts';

/**
 * Deepest nesting of objects and arrays in client data that codecs walk or serialise by recursion (tool
 * schemas, tool arguments and results). The request parser has a depth limit of its own; this one holds
 * wherever the data came from.
 */
export const maxNesting = 64;

/** Refuses `value` (found at `field`) when it nests deeper than `maxNesting`; measured without recursion. */
export function requireNestingWithin(value: unknown, field: string): void {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.value === null || typeof next.value !== 'object') continue;
    if (next.depth > maxNesting) throw new GatewayError('GW_VALIDATION', `${field} is nested deeper than ${maxNesting} levels`);
    for (const child of Array.isArray(next.value) ? next.value : Object.values(next.value)) pending.push({ value: child, depth: next.depth + 1 });
  }
}
