import { Transform, type TransformCallback } from 'node:stream';
import { redacted, type Secret } from '../../domain/secret.ts';

const redactedBytes = Buffer.from(redacted);
/** Shorter values are not searched for: a short header value (`1`, `v2`) would cut ordinary text. */
const minimumFormLength = 8;

/**
 * The spellings of a request's credentials an answer might quote: each secret header's value and, for a
 * `Bearer <key>` header, the bare key (a provider quotes the key it refused, not the header).
 */
export function credentialForms(secrets: Iterable<Secret>): Buffer[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    const value = secret.reveal();
    for (const form of [value, value.replace(/^Bearer\s+/i, '')]) if (form.length >= minimumFormLength) forms.add(form);
  }
  // The longest first, so that a key inside its own `Bearer <key>` form is cut with the whole header value.
  return [...forms].sort((a, b) => b.length - a.length).map((form) => Buffer.from(form));
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
    let at = bytes.lastIndexOf(first);
    const earliest = Math.max(0, bytes.length - form.length + 1);
    while (at >= earliest) {
      const length = bytes.length - at;
      if (length > longest && bytes.compare(form, 0, length, at) === 0) longest = length;
      at = at === 0 ? -1 : bytes.lastIndexOf(first, at - 1);
    }
  }
  return longest;
}

/**
 * An upstream answer with the credentials of its request cut out as its bytes pass: whatever a provider writes
 * (an error event in a stream, a task's failure, an error quoting the key it refused) reaches the client, the
 * logs, the traces and the usage records from here, so no later reader has to know the secrets. Bytes that
 * could be the start of a credential split across chunks wait for the next chunk (or the end); nothing else is
 * held, so a stream's events pass as they arrive.
 */
export class CredentialScrubber extends Transform {
  private pending: Buffer | undefined;

  constructor(private readonly forms: readonly Buffer[]) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const bytes = withFormsCut(this.pending ? Buffer.concat([this.pending, chunk]) : chunk, this.forms);
    const waiting = pendingPrefixLength(bytes, this.forms);
    this.pending = waiting > 0 ? Buffer.from(bytes.subarray(bytes.length - waiting)) : undefined;
    if (bytes.length > waiting) this.push(waiting > 0 ? bytes.subarray(0, bytes.length - waiting) : bytes);
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.pending) this.push(this.pending);
    done();
  }
}
