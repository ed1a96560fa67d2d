import { redacted, type Secret } from './secret.ts';

const redactedBytes = Buffer.from(redacted);
/** Shorter values are not searched for: a short header value (`1`, `v2`) would cut ordinary text. */
const minimumFormLength = 8;

/**
 * One credential as an answer may spell it: a unit per character, each unit the spellings of that character.
 * A letter or digit is itself. Any other character is itself, or escaped as JSON writes it (`\/`, `\"`,
 * `\u002B` in either case of hex), or percent-encoded as a URL writes it (`%2F` in either case), whatever
 * each encoder leaves alone: a spelling is matched character by character, so a key written back half escaped
 * (a JSON encoder that escapes `+` and not `/`) is found too.
 */
export interface CredentialForm {
  readonly units: readonly (readonly Buffer[])[];
  /** The bytes searched for to find where a spelling may begin: the form's opening letters and digits, or else each first byte its first character may be spelled with. */
  readonly openings: readonly Buffer[];
  /** The bytes a spelling may begin with. */
  readonly firstBytes: readonly number[];
  /** The most bytes a spelling of the whole credential takes. */
  readonly longest: number;
}

/** Forms already built, by credential: an exchange builds its forms for the same few keys again and again. */
const formCache = new Map<string, CredentialForm>();
const formCacheLimit = 1_000;

/**
 * What to cut out of an answer so that no credential of its request is left in it: each secret header's value,
 * or for a `Bearer <key>` header the bare key (a provider quotes the key it refused, not the header; the header
 * quoted is left as `Bearer [redacted]`). The longest first, so that a credential holding another is cut whole.
 */
export function credentialForms(secrets: Iterable<Secret>): CredentialForm[] {
  const values = new Set<string>();
  for (const secret of secrets) {
    const value = secret.reveal();
    const bare = value.replace(/^Bearer\s+/i, '');
    const form = bare.length >= minimumFormLength ? bare : value;
    if (form.length >= minimumFormLength) values.add(form);
  }
  return [...values].sort((a, b) => b.length - a.length).map(formOf);
}

function formOf(value: string): CredentialForm {
  let form = formCache.get(value);
  if (!form) {
    if (formCache.size >= formCacheLimit) formCache.clear();
    const units = Array.from(value, (character) => spellingsOf(character).map((spelling) => Buffer.from(spelling)));
    let plain = 0;
    while (plain < units.length && units[plain]!.length === 1) plain++;
    const firstBytes = [...new Set(units[0]!.map((spelling) => spelling[0]!))];
    form = {
      units,
      openings:
        plain > 0
          ? [Buffer.concat(units.slice(0, plain).map((unit) => unit[0]!))]
          : firstBytes.map((byte) => Buffer.of(byte)),
      firstBytes,
      longest: units.reduce((sum, unit) => sum + Math.max(...unit.map((spelling) => spelling.length)), 0),
    };
    formCache.set(value, form);
  }
  return form;
}

/** The ways an answer may write one character of a credential, the longest first (the order they are tried in). */
function spellingsOf(character: string): string[] {
  if (/^[A-Za-z0-9]$/.test(character)) return [character];
  const spellings = new Set([character, JSON.stringify(character).slice(1, -1)]);
  if (character === '/') spellings.add('\\/');
  const code = character.codePointAt(0)!;
  if (code <= 0xffff) {
    const hex = code.toString(16).padStart(4, '0');
    spellings.add(`\\u${hex.toUpperCase()}`).add(`\\u${hex}`);
  }
  const percent = [...Buffer.from(character)].map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`);
  spellings.add(percent.join('')).add(percent.join('').toLowerCase());
  return [...spellings].sort((a, b) => b.length - a.length);
}

/**
 * Where a spelling of the form that begins at `at` ends: its end, `partial` when the bytes end before it does
 * (everything up to their end spelling its beginning), or -1. Each character takes the longest of its spellings
 * that matches, and no choice is undone: two spellings of a character differ within their first two bytes, but
 * for a backslash, whose one-byte spelling begins its escaped ones.
 */
function matchAt(bytes: Buffer, at: number, form: CredentialForm): number | 'partial' {
  let position = at;
  for (const unit of form.units) {
    let next = -1;
    for (const spelling of unit) {
      const available = Math.min(spelling.length, bytes.length - position);
      if (bytes.compare(spelling, 0, available, position, position + available) !== 0) continue;
      if (available < spelling.length) return 'partial';
      next = position + spelling.length;
      break;
    }
    if (next === -1) return -1;
    position = next;
  }
  return position;
}

/** The spellings of the form in `bytes`, as [start, end) ranges, in order. */
function* spelledAt(bytes: Buffer, form: CredentialForm): Generator<[number, number]> {
  let from = 0;
  while (from < bytes.length) {
    let start = -1;
    for (const first of form.openings) {
      const at = bytes.indexOf(first, from);
      if (at !== -1 && (start === -1 || at < start)) start = at;
    }
    if (start === -1) return;
    const end = matchAt(bytes, start, form);
    if (typeof end === 'number' && end !== -1) {
      yield [start, end];
      from = end;
    } else from = start + 1;
  }
}

/** Whether any of the forms is spelled in `bytes`. */
export function quotesAnyForm(bytes: Buffer, forms: readonly CredentialForm[]): boolean {
  return forms.some((form) => !spelledAt(bytes, form).next().done);
}

/** `bytes` with every spelling of each form replaced by `[redacted]` (the same buffer when none occurs). */
function withFormsCut(bytes: Buffer, forms: readonly CredentialForm[]): Buffer {
  let clean = bytes;
  for (const form of forms) {
    const parts: Buffer[] = [];
    let from = 0;
    for (const [start, end] of spelledAt(clean, form)) {
      parts.push(clean.subarray(from, start), redactedBytes);
      from = end;
    }
    if (parts.length === 0) continue;
    parts.push(clean.subarray(from));
    clean = Buffer.concat(parts);
  }
  return clean;
}

/** How many of the last bytes of `bytes` begin a spelling of some form without completing it: they wait for the next chunk. */
function pendingPrefixLength(bytes: Buffer, forms: readonly CredentialForm[]): number {
  let longest = 0;
  for (const form of forms) {
    // Only within a spelling's length of the end can one begin and not end (the cut above searched the rest), and
    // only where a byte that may begin one stands.
    const tail = bytes.subarray(Math.max(0, bytes.length - form.longest + 1));
    for (const first of form.firstBytes) {
      for (let at = tail.indexOf(first); at !== -1 && tail.length - at > longest; at = tail.indexOf(first, at + 1)) {
        if (matchAt(tail, at, form) === 'partial') longest = tail.length - at;
      }
    }
  }
  return longest;
}

/**
 * Cuts credentials out of an answer's bytes chunk by chunk. Bytes that could be the start of a credential split
 * across chunks wait for the next chunk (or the end); nothing else is held, so a stream's events pass as they
 * arrive.
 */
export class CredentialScrubber {
  private pending: Buffer | undefined;

  constructor(private readonly forms: readonly CredentialForm[]) {}

  /** It holds credentials: printed, it shows none (it rides on a request as undici's `opaque`). */
  toJSON(): string {
    return redacted;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return redacted;
  }

  /** The chunk (after what was kept before) with the credentials cut out, less what is kept for the next one. */
  next(chunk: Buffer): Buffer | undefined {
    const bytes = withFormsCut(this.pending ? Buffer.concat([this.pending, chunk]) : chunk, this.forms);
    const waiting = pendingPrefixLength(bytes, this.forms);
    this.pending = waiting > 0 ? Buffer.from(bytes.subarray(bytes.length - waiting)) : undefined;
    if (bytes.length === waiting) return undefined;
    return waiting > 0 ? bytes.subarray(0, bytes.length - waiting) : bytes;
  }

  /** What was kept, once the answer has ended: it did not become a credential. */
  end(): Buffer | undefined {
    const kept = this.pending;
    this.pending = undefined;
    return kept;
  }
}
