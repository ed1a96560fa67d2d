import type { ChatPart } from './chat.ts';
import { GatewayError } from './errors.ts';
import { scanJsonText } from './json-text.ts';

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
    if (next.depth > maxNesting)
      throw new GatewayError('GW_VALIDATION', `${field} is nested deeper than ${maxNesting} levels`);
    for (const child of Array.isArray(next.value) ? next.value : Object.values(next.value))
      pending.push({ value: child, depth: next.depth + 1 });
  }
}

/**
 * Refuses tool-call arguments and tool results (JSON text, which translation parses into objects and
 * serialises again by recursion) nested deeper than `maxNesting`, naming the message at `field` that holds them.
 */
export function requireToolTextsWithin(parts: readonly ChatPart[], field: string): void {
  for (const part of parts) {
    const text =
      part.type === 'tool-call' ? part.call.arguments : part.type === 'tool-result' ? part.result.output : undefined;
    if (text !== undefined && scanJsonText(text, maxNesting) === 'too-deep')
      throw new GatewayError(
        'GW_VALIDATION',
        `${field} holds tool ${part.type === 'tool-call' ? 'arguments' : 'output'} nested deeper than ${maxNesting} levels`,
      );
  }
}
