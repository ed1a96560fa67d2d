/** Largest non-streamed answer read whole by default: to check it before relaying, and to read its usage. */
const defaultMaxCopiedBytes = 16 * 1024 * 1024;

/** A whole JSON body as read: its bytes, its text and the value it parses to. */
export interface ReadJson {
  bytes: Buffer;
  text: string;
  value: unknown;
}

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
    return this.read()?.value;
  }

  /** The body read whole and parsed, or undefined when it was too large or not JSON. */
  read(): ReadJson | undefined {
    if (this.overflowed) return undefined;
    const bytes = this.bytes();
    const text = bytes.toString('utf8');
    try {
      return { bytes, text, value: JSON.parse(text) };
    } catch {
      return undefined;
    }
  }
}
