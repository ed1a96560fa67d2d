import { type Agent, Dispatcher } from 'undici';
import { redacted, type Secret } from '../../domain/secret.ts';

const redactedBytes = Buffer.from(redacted);
/** Shorter values are not searched for: a short header value (`1`, `v2`) would cut ordinary text. */
const minimumFormLength = 8;

/**
 * What to cut out of an answer so that no credential of its request is left in it: each secret header's value,
 * or for a `Bearer <key>` header the bare key (a provider quotes the key it refused, not the header; the header
 * quoted is left as `Bearer [redacted]`). The longest first, so that a credential holding another is cut whole.
 */
export function credentialForms(secrets: Iterable<Secret>): Buffer[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    const value = secret.reveal();
    const bare = value.replace(/^Bearer\s+/i, '');
    const form = bare.length >= minimumFormLength ? bare : value;
    if (form.length >= minimumFormLength) forms.add(form);
  }
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

type Handler = Dispatcher.DispatchHandler;

/** An undici handler in front of a request's own: the answer's bytes pass the scrubber on their way to it. */
class ScrubbingHandler implements Handler {
  constructor(
    private readonly handler: Handler,
    private readonly scrubber: CredentialScrubber,
  ) {}

  onConnect(...connect: Parameters<NonNullable<Handler['onConnect']>>): void {
    this.handler.onConnect?.(...connect);
  }

  onHeaders(...headers: Parameters<NonNullable<Handler['onHeaders']>>): boolean {
    return this.handler.onHeaders?.(...headers) ?? true;
  }

  onData(chunk: Buffer): boolean {
    const clean = this.scrubber.next(chunk);
    return clean === undefined || (this.handler.onData?.(clean) ?? true);
  }

  onComplete(trailers: string[] | null): void {
    const kept = this.scrubber.end();
    if (kept) this.handler.onData?.(kept);
    this.handler.onComplete?.(trailers);
  }

  onError(error: Error): void {
    this.handler.onError?.(error);
  }

  onUpgrade(...upgrade: Parameters<NonNullable<Handler['onUpgrade']>>): void {
    this.handler.onUpgrade?.(...upgrade);
  }

  onResponseStarted(): void {
    this.handler.onResponseStarted?.();
  }

  onBodySent(...sent: Parameters<NonNullable<Handler['onBodySent']>>): void {
    this.handler.onBodySent?.(...sent);
  }
}

/**
 * An agent whose requests may name a scrubber as their `opaque`: their answers' bytes pass it before undici hands
 * them to the body, so every reader of the body gets them clean, whatever way it reads, error bodies that came
 * with their headers included. A request without one is dispatched as it is. The handler is undici's own kind, so
 * undici converts nothing: as an interceptor (`compose`) it cost 10-25 µs a request here, and a stream between the
 * body and its readers 15-150 µs, against about 2 µs.
 */
export class ScrubbingAgent extends Dispatcher {
  constructor(private readonly agent: Agent) {
    super();
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    if (callback) this.agent.close(callback);
    else return this.agent.close();
  }

  override destroy(): Promise<void>;
  override destroy(error: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(error: Error | null, callback: () => void): void;
  override destroy(first?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
    const error = typeof first === 'function' ? null : (first ?? null);
    const done = typeof first === 'function' ? first : callback;
    if (done) this.agent.destroy(error, done);
    else return this.agent.destroy(error);
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Handler): boolean {
    const scrubber = 'opaque' in options && options.opaque instanceof CredentialScrubber ? options.opaque : undefined;
    if (!scrubber) return this.agent.dispatch(options, handler);
    // A handler of undici's newer kind would get none of its callbacks through this one: refused loudly.
    if (handler.onRequestStart) throw new TypeError('the credential scrubber handles undici request handlers only');
    return this.agent.dispatch(options, new ScrubbingHandler(handler, scrubber));
  }
}
