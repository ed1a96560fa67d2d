import { redacted, type Secret } from './secret.ts';

const redactedBytes = Buffer.from(redacted);
/** Shorter values are not searched for: a short header value (`1`, `v2`) would cut ordinary text. */
const minimumFormLength = 8;

/**
 * What to cut out of an answer so that no credential of its request is left in it: each secret header's value,
 * or for a `Bearer <key>` header the bare key (a provider quotes the key it refused, not the header; the header
 * quoted is left as `Bearer [redacted]`), each also as a provider may write it back: escaped in JSON (`\/`
 * included, as some encoders write a slash) and percent-encoded in a URL. The longest first, so that a credential
 * holding another is cut whole.
 */
export function credentialForms(secrets: Iterable<Secret>): Buffer[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    const value = secret.reveal();
    const bare = value.replace(/^Bearer\s+/i, '');
    const form = bare.length >= minimumFormLength ? bare : value;
    if (form.length < minimumFormLength) continue;
    const inJson = JSON.stringify(form).slice(1, -1);
    for (const spelling of [form, inJson, inJson.replaceAll('/', '\\/'), percentEncoded(form)]) forms.add(spelling);
  }
  return [...forms].sort((a, b) => b.length - a.length).map((form) => Buffer.from(form));
}

/** The value as a URL's query writes it; a value that cannot be (a lone surrogate) as it is. */
function percentEncoded(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value;
  }
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
    // Only where the form's first byte stands among the last (length - 1) bytes can a prefix of it end the chunk:
    // only those are searched, not the chunk the cut above already searched whole.
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
