/** Largest non-streamed answer read whole by default: to check it before relaying, and to read its usage. */
const defaultMaxCopiedBytes = 16 * 1024 * 1024;

/** A bounded copy of a JSON body, parsed once it is complete. */
export class JsonCopy {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;

  constructor(private readonly maxBytes = defaultMaxCopiedBytes) {}

  push(chunk: Uint8Array): void {
    this.size += chunk.length;
    if (this.size <= this.maxBytes) this.chunks.push(chunk);
  }

  get overflowed(): boolean {
    return this.size > this.maxBytes;
  }

  /** The whole body as read, once it is known to fit. */
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  /** The parsed body, or undefined when it was too large or not JSON. */
  parse(): unknown {
    if (this.overflowed) return undefined;
    try {
      return JSON.parse(this.bytes().toString('utf8'));
    } catch {
      return undefined;
    }
  }
}
