/** Largest non-streamed answer read whole by default: to check it before relaying, and to read its usage. */
const defaultMaxCopiedBytes = 16 * 1024 * 1024;

/** A whole JSON body as read: its bytes and the value they parse to. */
export interface ReadJson {
  bytes: Buffer;
  value: unknown;
}

/**
 * A bounded copy of a JSON body, parsed once it is complete. Given `alreadyRead` (a body another reader already
 * parsed), a copy whose one chunk is that very buffer is not joined or parsed again.
 */
export class JsonCopy {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  private joined: Buffer | undefined;

  constructor(
    private readonly maxBytes = defaultMaxCopiedBytes,
    private readonly alreadyRead?: ReadJson,
  ) {}

  push(chunk: Uint8Array): void {
    this.size += chunk.length;
    this.joined = undefined;
    if (this.size <= this.maxBytes) this.chunks.push(chunk);
  }

  get overflowed(): boolean {
    return this.size > this.maxBytes;
  }

  /** The whole body as read, once it is known to fit. */
  bytes(): Buffer {
    this.joined ??= this.readBefore()?.bytes ?? Buffer.concat(this.chunks);
    return this.joined;
  }

  /** The parsed body, or undefined when it was too large or not JSON. */
  parse(): unknown {
    return this.read()?.value;
  }

  /** The body read whole and parsed, or undefined when it was too large or not JSON. */
  read(): ReadJson | undefined {
    if (this.overflowed) return undefined;
    const before = this.readBefore();
    if (before) return before;
    const bytes = this.bytes();
    try {
      return { bytes, value: JSON.parse(bytes.toString('utf8')) };
    } catch {
      return undefined;
    }
  }

  private readBefore(): ReadJson | undefined {
    const { alreadyRead, chunks } = this;
    return alreadyRead && chunks.length === 1 && chunks[0] === alreadyRead.bytes ? alreadyRead : undefined;
  }
}
