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

/** Spellings already worked out, by credential: every exchange asks again for the same few keys'. */
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
      /[+=<>&'`]|[^\x00-\x7f]/g,
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
  return encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
}

/** Whether any of the forms occurs in `bytes`. */
export function quotesAnyForm(bytes: Buffer, forms: readonly Buffer[]): boolean {
  return forms.some((form) => bytes.includes(form));
}

/** `bytes` with every occurrence of each form replaced by `[redacted]` (the same buffer when none occurs). */
function withFormsCut(bytes: Buffer, forms: readonly Buffer[]): Buffer {
  let clean = bytes;
  for (const form of forms) {
    let at = clean.indexOf(form);
    if (at === -1) continue;
    const parts: Buffer[] = [];
    let from = 0;
    while (at !== -1) {
      parts.push(clean.subarray(from, at), redactedBytes);
      from = at + form.length;
      at = clean.indexOf(form, from);
    }
    parts.push(clean.subarray(from));
    clean = Buffer.concat(parts);
  }
  return clean;
}

/** How many of the last bytes of `bytes` begin some form without completing it: they wait for the next chunk. */
function pendingPrefixLength(bytes: Buffer, forms: readonly Buffer[]): number {
  let longest = 0;
  for (const form of forms) {
    const first = form[0]!;
    // Only where the form's first byte stands among the last (length - 1) bytes can a prefix of it end the chunk.
    const earliest = Math.max(0, bytes.length - form.length + 1);
    const tail = bytes.subarray(earliest);
    for (let at = tail.lastIndexOf(first); at !== -1; at = at === 0 ? -1 : tail.lastIndexOf(first, at - 1)) {
      const length = tail.length - at;
      if (length > longest && tail.compare(form, 0, length, at) === 0) longest = length;
    }
  }
  return longest;
}

/**
 * Where what waits for the next chunk begins: at the earliest unfinished beginning of a form among the last bytes,
 * moved back to the start of any form that occurs across that point (so the bytes before it can be cut on their
 * own). Occurrences that overlap one another (a key whose beginning repeats its end) could move it back again
 * and again: once it would go further back than twice the longest form from the end, it goes forward instead,
 * to the end of the occurrence across it, which is then cut with what goes out, so what waits stays bounded.
 */
function keptFrom(bytes: Buffer, forms: readonly Buffer[]): number {
  let kept = bytes.length - pendingPrefixLength(bytes, forms);
  if (kept === bytes.length) return kept;
  const floor = Math.max(0, bytes.length - 2 * (forms[0]?.length ?? 0));
  for (let moved = true; moved; ) {
    moved = false;
    for (const form of forms) {
      const at = bytes.indexOf(form, Math.max(0, kept - form.length + 1));
      if (at === -1 || at >= kept) continue;
      if (at < floor) return at + form.length;
      kept = at;
      moved = true;
    }
  }
  return kept;
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

  /**
   * The chunk (after what was kept before) with the credentials cut out, less what is kept for the next one. What
   * is kept is decided on the bytes as they came, before any cut: a shorter credential complete at the end may be
   * the beginning of a longer one that the next chunk completes, and is kept with it, so that the longer is cut
   * whole; a credential that begins before what is kept is kept whole too, so that no cut falls across the two.
   */
  next(chunk: Buffer): Buffer | undefined {
    const bytes = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    const kept = keptFrom(bytes, this.forms);
    this.pending = kept < bytes.length ? Buffer.from(bytes.subarray(kept)) : undefined;
    return kept === 0 ? undefined : withFormsCut(bytes.subarray(0, kept), this.forms);
  }

  /** What was kept, once the answer has ended, with any credential in it cut out. */
  end(): Buffer | undefined {
    const kept = this.pending;
    this.pending = undefined;
    return kept && withFormsCut(kept, this.forms);
  }
}
