/** Largest non-streamed answer read whole: to check it before relaying, and to read its usage. */
const maxCopiedBytes = 16 * 1024 * 1024;

/** A bounded copy of a JSON body, parsed once it is complete. */
export class JsonCopy {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;

  push(chunk: Uint8Array): void {
    this.size += chunk.length;
    if (this.size <= maxCopiedBytes) this.chunks.push(chunk);
  }

  get overflowed(): boolean {
    return this.size > maxCopiedBytes;
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
