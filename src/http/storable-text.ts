/**
 * Text the database cannot hold, found before anything reaches it: PostgreSQL's text types refuse U+0000,
 * and a lone UTF-16 surrogate has no UTF-8 form (the driver would write U+FFFD or fail). Every string a client
 * sends (JSON bodies, query strings, path parameters, multipart fields) is checked here once, at the edge,
 * so a bad character is a 400 naming its field rather than a failed insert logged with the tenant's text.
 */

declare global {
  interface String {
    /** ES2024 (Node 20+): false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

export type UnstorableReason = 'nul' | 'lone-surrogate' | 'forbidden-key' | 'nul-in-key' | 'lone-surrogate-in-key';

export interface UnstorableText {
  /** Where, as the error envelope names fields: `body.messages[0].content`. */
  path: string;
  reason: UnstorableReason;
}

/**
 * `__proto__` sets a prototype when a body is copied or merged; no field of any request is named so, and the
 * JSON parser would drop it silently, so it is refused wherever it appears in a body.
 */
const prototypeKey = '__proto__';
/**
 * `constructor` and `prototype` reach a class (`constructor.prototype`). They are refused only as a body's own
 * top-level fields, which every route's schema names: inside free-form objects (a tool's JSON Schema, a
 * `metadata` map, a `responseSchema`) they are ordinary property names.
 */
const topLevelForbiddenKeys = new Set(['constructor', 'prototype']);

function problemOf(text: string): 'nul' | 'lone-surrogate' | undefined {
  // Two native scans and no allocation: this runs on every string of every request.
  if (text.indexOf('\u0000') !== -1) return 'nul';
  if (!text.isWellFormed()) return 'lone-surrogate';
  return undefined;
}

/**
 * Which field names are refused at one level of a value: none, `__proto__` (inside a checked body), or
 * `__proto__`, `constructor` and `prototype` (a checked body's own top level). A name rather than an options
 * object because the walk below runs on every request and allocates nothing.
 */
type KeyRule = 'any-key' | 'no-proto' | 'no-proto-or-class';

/** The rule for the values inside one governed by `rule`: only the top level refuses the class keys. */
function nestedRule(rule: KeyRule): KeyRule {
  return rule === 'any-key' ? 'any-key' : 'no-proto';
}

function keyProblemOf(key: string, rule: KeyRule): UnstorableReason | undefined {
  const problem = problemOf(key);
  if (problem !== undefined) return problem === 'nul' ? 'nul-in-key' : 'lone-surrogate-in-key';
  if (rule === 'any-key') return undefined;
  if (key === prototypeKey || (rule === 'no-proto-or-class' && topLevelForbiddenKeys.has(key))) return 'forbidden-key';
  return undefined;
}

/**
 * Whether anything in `value` is refused: the fast path, run on every body, query and parameter object. It
 * tracks no path and allocates nothing (a body of large token arrays costs one type check per number); the
 * path is found by `locate` only once this says there is something to find.
 */
function holdsProblem(value: unknown, rule: KeyRule): boolean {
  if (typeof value === 'string') return problemOf(value) !== undefined;
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      // Numbers, booleans and null (most of a token array) are passed over without a call.
      if (
        (typeof item === 'string' || (typeof item === 'object' && item !== null)) &&
        holdsProblem(item, nestedRule(rule))
      )
        return true;
    }
    return false;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (keyProblemOf(key, rule) !== undefined) return true;
    if (holdsProblem(Reflect.get(value, key), nestedRule(rule))) return true;
  }
  return false;
}

const plainKey = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function stepOf(key: string): string {
  return plainKey.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** The first problem in `value` with its path: the slow path, walked only when `holdsProblem` found one. */
function locate(value: unknown, path: string, rule: KeyRule): UnstorableText | undefined {
  if (typeof value === 'string') {
    const reason = problemOf(value);
    return reason === undefined ? undefined : { path, reason };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = locate(value[index], `${path}[${index}]`, nestedRule(rule));
      if (found) return found;
    }
    return undefined;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const keyProblem = keyProblemOf(key, rule);
    // A key that cannot be stored is not repeated in the path: it is the text that cannot be shown or stored.
    if (keyProblem === 'forbidden-key') return { path: path + stepOf(key), reason: keyProblem };
    if (keyProblem !== undefined) return { path, reason: keyProblem };
    const found = locate(Reflect.get(value, key), path + stepOf(key), nestedRule(rule));
    if (found) return found;
  }
  return undefined;
}

/**
 * The first string (or field name) in a parsed value that storage cannot hold, or, when `forbidKeys` is set,
 * a `__proto__` field anywhere or a `constructor` or `prototype` field of the value itself (a JSON body's top
 * level); undefined when there is none. Depth-first, in the value's own order. The value is a parsed body,
 * query or parameter object: its depth is bounded by the JSON parser's nesting limit before it gets here.
 */
export function findUnstorableText(
  value: unknown,
  root: string,
  options: { forbidKeys?: boolean } = {},
): UnstorableText | undefined {
  const rule: KeyRule = options.forbidKeys === true ? 'no-proto-or-class' : 'any-key';
  if (!holdsProblem(value, rule)) return undefined;
  return locate(value, root, rule);
}

/** The envelope's message for what `findUnstorableText` found. */
export function describeUnstorableText({ path, reason }: UnstorableText): string {
  switch (reason) {
    case 'nul':
      return `${path} contains the character U+0000 (NUL), which cannot be stored: remove it`;
    case 'lone-surrogate':
      return `${path} contains a lone UTF-16 surrogate (text that is not valid Unicode): send well-formed text`;
    case 'nul-in-key':
      return `${path} has a field name containing the character U+0000 (NUL)`;
    case 'lone-surrogate-in-key':
      return `${path} has a field name containing a lone UTF-16 surrogate (not valid Unicode)`;
    case 'forbidden-key':
      return `${path} is not an accepted field name (__proto__ is refused anywhere, constructor and prototype as top-level fields)`;
  }
}
