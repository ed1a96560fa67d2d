/** Largest non-streamed answer a meter keeps a copy of to read its usage. */
const maxCopiedBytes = 16 * 1024 * 1024;

/** A bounded copy of a relayed JSON body, parsed once it is complete. */
export class JsonCopy {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;

  push(chunk: Uint8Array): void {
    this.size += chunk.length;
    if (this.size <= maxCopiedBytes) this.chunks.push(chunk);
  }

  /** The parsed body, or undefined when it was too large or not JSON. */
  parse(): unknown {
    if (this.size > maxCopiedBytes) return undefined;
    try {
      return JSON.parse(Buffer.concat(this.chunks).toString('utf8'));
    } catch {
      return undefined;
    }
  }
}
