import fc from 'fast-check';

/** Text PostgreSQL cannot hold: U+0000, and lone surrogates (high, low, at either end, reversed pairs). */
export const unstorableFragments = [
  '\u0000',
  'a\u0000b',
  '\u0000\u0000',
  '\ud800',
  'x\udfffy',
  '\udc00',
  '\ude00\ud83d',
  'end\ud83d',
] as const;
/**
 * Field names the gateway refuses in a JSON body: `__proto__` in any object, `constructor` and `prototype` as
 * top-level fields only (nested, as in a tool's JSON Schema, they are ordinary names).
 */
export const hostileKeys = ['__proto__', 'constructor', 'prototype'] as const;

export const unstorableFragment = fc.constantFrom(...unstorableFragments);

/** `good` now and then with an unstorable fragment spliced in at a random place. */
export function withUnstorable(good: fc.Arbitrary<string>, weight = 1): fc.Arbitrary<string> {
  const spliced = fc.tuple(good, unstorableFragment, fc.nat()).map(([text, fragment, at]) => {
    const cut = text.length === 0 ? 0 : at % (text.length + 1);
    return text.slice(0, cut) + fragment + text.slice(cut);
  });
  return fc.oneof({ weight: 6, arbitrary: good }, { weight, arbitrary: spliced });
}

/** What to do to a body: put a fragment into one of its strings or one of its field names, or add a hostile field name (`__proto__` to one of its objects, the others to the body itself). */
export interface Poison {
  mode: 'value' | 'key' | 'hostile-key';
  pick: number;
  fragment: string;
  hostileKey: string;
}

export const poisonArb: fc.Arbitrary<Poison> = fc.record({
  mode: fc.constantFrom('value', 'key', 'hostile-key'),
  pick: fc.nat(),
  fragment: unstorableFragment,
  hostileKey: fc.constantFrom(...hostileKeys),
});

type Container = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

/** Past this depth a body's values are left alone (the fuzzers also send bodies thousands of levels deep). */
const maxPoisonDepth = 64;

/** Every object and array in `value` with its string-holding slots, depth first. */
/** Where `collect` gathers what it finds: every string with its container and key, and every object. */
interface Found {
  strings: Array<[Container, string | number]>;
  objects: Array<Record<string, unknown>>;
}

function collect(value: unknown, found: Found, depth = 0): void {
  const { strings, objects } = found;
  if (depth > maxPoisonDepth) return;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      if (typeof item === 'string') strings.push([value, index]);
      else collect(item, found, depth + 1);
    }
  } else if (isContainer(value)) {
    const record = value as Record<string, unknown>;
    objects.push(record);
    for (const key of Object.keys(record)) {
      if (typeof record[key] === 'string') strings.push([record, key]);
      else collect(record[key], found, depth + 1);
    }
  }
}

/**
 * A copy of a JSON-able body with one poison applied: every string field (and every object) of every body can
 * be chosen. A body without strings or objects gets a top-level field holding the fragment when it is an object.
 */
export function poisoned<T>(body: T, poison: Poison): T {
  // Through JSON, as the body is sent: iterative enough for deep bodies, and own `__proto__` fields stay fields.
  const copy = JSON.parse(JSON.stringify(body) ?? 'null') as T;
  const strings: Array<[Container, string | number]> = [];
  const objects: Array<Record<string, unknown>> = [];
  collect(copy, { strings, objects });
  if (poison.mode === 'value' && strings.length > 0) {
    const [holder, slot] = strings[poison.pick % strings.length]!;
    const text = Reflect.get(holder, slot) as string;
    Reflect.set(holder, slot, text.slice(0, 1) + poison.fragment + text.slice(1));
    return copy;
  }
  // `constructor` and `prototype` go on the body itself (the first object collected, when the body is one).
  const topLevelOnly = poison.mode === 'hostile-key' && poison.hostileKey !== '__proto__';
  const root = isContainer(copy) && !Array.isArray(copy) ? objects[0] : undefined;
  const target = topLevelOnly ? root : objects.length > 0 ? objects[poison.pick % objects.length]! : undefined;
  if (!target) return copy;
  if (poison.mode === 'key') {
    const keys = Object.keys(target);
    const key = keys.length > 0 ? keys[poison.pick % keys.length]! : 'field';
    const value = target[key];
    delete target[key];
    target[`${key}${poison.fragment}`] = value ?? poison.fragment;
  } else if (poison.mode === 'hostile-key') {
    // defineProperty, so "__proto__" becomes an own field of the JSON text rather than a prototype change.
    Object.defineProperty(target, poison.hostileKey, {
      value: { polluted: true },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    target.field = poison.fragment;
  }
  return copy;
}
