import { redacted, type Secret } from './secret.ts';

const redactedBytes = Buffer.from(redacted);
/** Shorter values are not searched for: a short header value (`1`, `v2`) would cut ordinary text. */
const minimumFormLength = 8;

/**
 * What to cut out of an answer so that no credential of its request is left in it: each secret header's value,
 * or for a `Bearer <key>` header the bare key (a provider quotes the key it refused, not the header; the header
 * quoted is left as `Bearer [redacted]`), each as sent and as the encoders a provider's answer is commonly
 * written with spell it back (`spellings`). The longest first, so that a credential holding another is cut whole.
 * Each is a whole spelling found with one search: a key that an answer escapes in some other mix is not cut.
 */
export function credentialForms(secrets: Iterable<Secret>): Buffer[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    const value = secret.reveal();
    const bare = value.replace(/^Bearer\s+/i, '');
    const form = bare.length >= minimumFormLength ? bare : value;
    if (form.length < minimumFormLength) continue;
    for (const spelling of spellingsOf(form)) forms.add(spelling);
  }
  return [...forms].sort((a, b) => b.length - a.length).map((form) => Buffer.from(form));
}

/** Spellings already worked out, by credential: every exchange asks again for those of the same few keys. */
const knownSpellings = new Map<string, readonly string[]>();
const knownSpellingsLimit = 1_000;

function spellingsOf(value: string): readonly string[] {
  let known = knownSpellings.get(value);
  if (!known) {
    if (knownSpellings.size >= knownSpellingsLimit) knownSpellings.clear();
    known = [...new Set(spellings(value))];
    knownSpellings.set(value, known);
  }
  return known;
}

/**
 * A credential as sent, and as answers commonly quote it: in JSON (as JavaScript and Python write it, with `\/`
 * as PHP does, and with `+`, `=` and the like as `\u002B`, as .NET does), and percent-encoded in a URL (every
 * reserved character as `encodeURIComponent` does, all but `/` as Python's `quote` does, only `/` as Go's
 * `PathEscape` does, the hex in either case). For a key of letters, digits, `-` and `_` these are all one.
 */
function spellings(value: string): string[] {
  const inJson = JSON.stringify(value).slice(1, -1);
  const inUrl = percentEncoded(value);
  const inUrlButSlash = inUrl.replaceAll('%2F', '/');
  return [
    value,
    inJson,
    inJson.replaceAll('/', '\\/'),
    inJson.replace(
      /[+=<>&'`]|[^ -~]/g,
      (character) => `\\u${character.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`,
    ),
    inUrl,
    lowerHex(inUrl),
    inUrlButSlash,
    lowerHex(inUrlButSlash),
    value.replaceAll('/', '%2F'),
  ];
}

/** The value as a URL's query writes it; a value that cannot be (a lone surrogate) as it is. */
function percentEncoded(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value;
  }
}

function lowerHex(encoded: string): string {
  return encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase());
}

/**
 * Where the earliest of the forms that `bytes` ends with the beginning of (and not the whole) begins, at `from` or
 * later; -1 when none does. Only the last (longest form - 1) bytes can hold one.
 */
function unfinishedFrom(bytes: Buffer, forms: readonly Buffer[], from: number): number {
  let earliest = -1;
  for (const form of forms) {
    const first = form[0]!;
    let at = bytes.indexOf(first, Math.max(from, bytes.length - form.length + 1));
    for (; at !== -1 && (earliest === -1 || at < earliest); at = bytes.indexOf(first, at + 1)) {
      if (bytes.compare(form, 0, bytes.length - at, at) === 0) {
        earliest = at;
        break;
      }
    }
  }
  return earliest;
}

/**
 * One pass over the bytes, left to right: each occurrence of a form, the earliest first (the longest of those
 * that begin at one place), is cut to `[redacted]`; the bytes between go out as they are. Unless `final`, the
 * pass stops where the bytes end with the beginning of a form that begins no later than the next occurrence
 * (a longer form may begin where a shorter one ends the bytes): what follows waits for the next chunk. So no
 * occurrence is ever let out, whether it lies in one chunk, across chunks, or overlaps another.
 */
function scan(bytes: Buffer, forms: readonly Buffer[], final: boolean): { out: Buffer[]; kept: number } {
  const out: Buffer[] = [];
  // The next occurrence of each form at or after `from`, looked for again only once `from` has passed it.
  const next = forms.map(() => -2);
  let unfinished = -2;
  let from = 0;
  for (;;) {
    let start = -1;
    let length = 0;
    forms.forEach((form, index) => {
      if (next[index]! !== -1 && next[index]! < from) next[index] = bytes.indexOf(form, from);
      const at = next[index]!;
      if (at !== -1 && (start === -1 || at < start)) {
        start = at;
        length = form.length;
      }
    });
    if (!final && (unfinished === -2 || (unfinished !== -1 && unfinished < from)))
      unfinished = unfinishedFrom(bytes, forms, from);
    if (!final && unfinished !== -1 && (start === -1 || unfinished <= start)) {
      out.push(bytes.subarray(from, unfinished));
      return { out, kept: unfinished };
    }
    if (start === -1) {
      // Nothing cut and nothing kept: the chunk goes out as the very buffer it came in.
      out.push(from === 0 ? bytes : bytes.subarray(from));
      return { out, kept: bytes.length };
    }
    out.push(bytes.subarray(from, start), redactedBytes);
    from = start + length;
  }
}

/** Whether any of the forms occurs in `bytes`. */
export function quotesAnyForm(bytes: Buffer, forms: readonly Buffer[]): boolean {
  return forms.some((form) => bytes.includes(form));
}

/**
 * Cuts credentials out of an answer's bytes chunk by chunk. Bytes that could be the start of a credential split
 * across chunks wait for the next chunk (or the end); nothing else is held, so a stream's events pass as they
 * arrive.
 */
export class CredentialScrubber {
  private pending: Buffer | undefined;

  constructor(private readonly forms: readonly Buffer[]) {}

  /** It holds credentials: printed, it shows none (it rides on a request as undici's `opaque`). */
  toJSON(): string {
    return redacted;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return redacted;
  }

  /** The chunk (after what was kept before) with the credentials cut out, less what is kept for the next one. */
  next(chunk: Buffer): Buffer | undefined {
    const bytes = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    const { out, kept } = scan(bytes, this.forms, false);
    this.pending = kept < bytes.length ? Buffer.from(bytes.subarray(kept)) : undefined;
    return joined(out);
  }

  /** What was kept, once the answer has ended, with any credential in it cut out. */
  end(): Buffer | undefined {
    const kept = this.pending;
    this.pending = undefined;
    return kept && joined(scan(kept, this.forms, true).out);
  }
}

/** The pieces as one buffer (the piece itself when there is one), or undefined when they hold nothing. */
function joined(pieces: Buffer[]): Buffer | undefined {
  const nonEmpty = pieces.filter((piece) => piece.length > 0);
  if (nonEmpty.length === 0) return undefined;
  return nonEmpty.length === 1 ? nonEmpty[0] : Buffer.concat(nonEmpty);
}
