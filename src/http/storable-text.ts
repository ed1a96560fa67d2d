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
 * Field names that reach JavaScript's object machinery when a body is copied or merged (`__proto__` sets a
 * prototype; `constructor.prototype` reaches a class). No request schema of the gateway names them.
 */
const forbiddenKeys = new Set(['__proto__', 'constructor', 'prototype']);

function problemOf(text: string): 'nul' | 'lone-surrogate' | undefined {
  // Two native scans and no allocation: this runs on every string of every request.
  if (text.indexOf('\u0000') !== -1) return 'nul';
  if (!text.isWellFormed()) return 'lone-surrogate';
  return undefined;
}

const plainKey = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The path of the steps walked, built only once something is found. */
function pathOf(root: string, steps: readonly (string | number)[]): string {
  let path = root;
  for (const step of steps) path += typeof step === 'number' ? `[${step}]` : plainKey.test(step) ? `.${step}` : `[${JSON.stringify(step)}]`;
  return path;
}

interface Walk {
  forbidKeys: boolean;
  steps: (string | number)[];
  reason?: UnstorableReason;
}

function walk(value: unknown, state: Walk): boolean {
  if (typeof value === 'string') {
    const reason = problemOf(value);
    if (reason === undefined) return false;
    state.reason = reason;
    return true;
  }
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      state.steps.push(index);
      if (walk(value[index], state)) return true;
      state.steps.pop();
    }
    return false;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const keyProblem = problemOf(key);
    if (keyProblem !== undefined) {
      // The key itself is not repeated in the path: it is the text that cannot be shown or stored.
      state.reason = keyProblem === 'nul' ? 'nul-in-key' : 'lone-surrogate-in-key';
      return true;
    }
    state.steps.push(key);
    if (state.forbidKeys && forbiddenKeys.has(key)) {
      state.reason = 'forbidden-key';
      return true;
    }
    if (walk(Reflect.get(value, key), state)) return true;
    state.steps.pop();
  }
  return false;
}

/**
 * The first string (or field name) in a parsed value that storage cannot hold, or a field name in
 * `forbiddenKeys` when `forbidKeys` is set; undefined when there is none. One pass, depth-first, in the
 * value's own order. The value is a parsed body, query or parameter object: its depth is bounded by the JSON
 * parser's nesting limit before it gets here.
 */
export function findUnstorableText(value: unknown, root: string, options: { forbidKeys?: boolean } = {}): UnstorableText | undefined {
  const state: Walk = { forbidKeys: options.forbidKeys ?? false, steps: [] };
  if (!walk(value, state) || state.reason === undefined) return undefined;
  return { path: pathOf(root, state.steps), reason: state.reason };
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
      return `${path} is not an accepted field name (__proto__, constructor and prototype are refused)`;
  }
}
