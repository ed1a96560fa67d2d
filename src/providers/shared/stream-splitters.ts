import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';

/**
 * A whole event of a stream: its data (undefined for one that carries none, such as a comment or the close of
 * a JSON array), and the offset (exclusive) in the piece just read at which its bytes end, where a relay can
 * cut the stream leaving no half event.
 */
export interface StreamEvent {
  data: string | undefined;
  end: number;
}

/**
 * Cuts the bytes of a stream, piece by piece, into its events, each returned once complete. The bytes are
 * walked once: the same walk finds where each event ends (for the relay) and what it carries (for the meter).
 */
export type StreamSplitter = (bytes: Uint8Array) => StreamEvent[];

/** The data of the events, those that carry any. */
export function dataOf(events: readonly StreamEvent[]): string[] {
  const data: string[] = [];
  for (const event of events) if (event.data !== undefined) data.push(event.data);
  return data;
}

const tooLarge = (limit: number) =>
  new UpstreamUnreachableError('protocol', `the upstream sent a stream event larger than ${limit} characters`);

const lf = 0x0a;
const cr = 0x0d;
/** Bytes are at most four per character: an event under way longer than this is larger than any allowed one. */
const maxBytesPerCharacter = 4;

/**
 * The bytes of the event under way, kept from piece to piece until it completes (and bounded: an upstream's
 * endless line or event breaks the stream instead of being buffered whole).
 */
class PendingEvent {
  private pieces: Uint8Array[] = [];
  private size = 0;

  constructor(private readonly maxEventCharacters: number) {}

  keep(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.pieces.push(bytes);
    this.size += bytes.length;
    // Counted in characters only when the bytes alone may be too many (they never are for ASCII under the bound).
    if (this.size > this.maxEventCharacters && this.characters() > this.maxEventCharacters)
      throw tooLarge(this.maxEventCharacters);
  }

  /**
   * The whole event's text: what was kept, then the bytes of `piece` from `start` to `end`; nothing is kept
   * after. Decoded by the Buffer's own slice, which costs far less per call than a TextDecoder on small events
   * (both replace malformed bytes alike, and neither drops a byte order mark).
   */
  take(piece: Buffer, { start, end }: { start: number; end: number }): string {
    if (this.pieces.length === 0) return piece.toString('utf8', start, end);
    const bytes = Buffer.concat([...this.pieces, piece.subarray(start, end)]);
    this.pieces = [];
    this.size = 0;
    return bytes.toString('utf8');
  }

  private characters(): number {
    if (this.size > this.maxEventCharacters * maxBytesPerCharacter) return this.size;
    return Buffer.concat(this.pieces).toString('utf8').length;
  }
}

/**
 * The `data` of one server-sent event's text (its lines, without the blank line that ended it): its `data`
 * fields joined by line feeds, or undefined when it has none (a comment, or only other fields), which
 * dispatches nothing.
 */
function sseData(text: string): string | undefined {
  // Most events are one `data: ` line and the blank line that ends it: read without splitting.
  const lineEnd = text.indexOf('\n');
  if (lineEnd !== -1 && lineEnd >= text.length - 2 && text.startsWith('data: ') && !text.includes('\r'))
    return text.slice(6, lineEnd);
  let data: string | undefined;
  const lines = text.includes('\r') ? text.split(/\r\n|\r|\n/) : text.split('\n');
  for (const line of lines) {
    if (!line.startsWith('data')) continue;
    let value: string;
    if (line.length === 4) value = '';
    else if (line.charCodeAt(4) === 0x3a) value = line.charCodeAt(5) === 0x20 ? line.slice(6) : line.slice(5);
    else continue;
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}

/**
 * Server-sent events: each ends at a blank line (a line terminator, CRLF, LF or CR, right after another). The
 * terminators are found with native searches; only the bytes of a whole event are decoded and read. A CR that
 * may start a CRLF ends an event only once the next byte is read. The stream's byte order mark is dropped.
 */
export function sseSplitter(maxEventCharacters: number): StreamSplitter {
  const pending = new PendingEvent(maxEventCharacters);
  let atLineStart = false;
  let afterCr = false;
  /** The event ended with a CR at the end of the last piece: it ends after this piece's first byte if that is an LF. */
  let endAfterLf = false;
  let first = true;
  return (chunk) => {
    let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (first && bytes.length > 0) {
      first = false;
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    }
    const shift = chunk.length - bytes.length;
    const events: StreamEvent[] = [];
    let start = 0;
    const complete = (end: number, textEnd: number) => {
      events.push({ data: sseData(pending.take(bytes, { start, end: textEnd })), end: end + shift });
      start = end;
    };
    let index = 0;
    if (endAfterLf && bytes.length > 0) {
      endAfterLf = false;
      const after = bytes[0] === lf ? 1 : 0;
      complete(after, 0);
      index = after;
      afterCr = false;
    }
    let nextLf = bytes.indexOf(lf, index);
    let nextCr = bytes.indexOf(cr, index);
    while (nextLf !== -1 || nextCr !== -1) {
      const at = nextCr === -1 || (nextLf !== -1 && nextLf < nextCr) ? nextLf : nextCr;
      if (at > index) {
        // Other bytes before this terminator: a line under way.
        atLineStart = false;
        afterCr = false;
      }
      if (bytes[at] === lf) {
        nextLf = bytes.indexOf(lf, at + 1);
        if (afterCr) afterCr = false;
        else if (atLineStart) {
          complete(at + 1, at + 1);
          atLineStart = false;
        } else atLineStart = true;
      } else {
        nextCr = bytes.indexOf(cr, at + 1);
        afterCr = true;
        if (!atLineStart) atLineStart = true;
        else if (at + 1 === bytes.length) {
          atLineStart = false;
          endAfterLf = true;
        } else {
          // A CR ending a blank line ends the event, with the LF after it if there is one.
          const end = bytes[at + 1] === lf ? at + 2 : at + 1;
          complete(end, at + 1);
          atLineStart = false;
          afterCr = false;
          if (end === at + 2) nextLf = bytes.indexOf(lf, end);
        }
      }
      index = at + 1;
      if (start > index) index = start;
    }
    if (index < bytes.length) {
      atLineStart = false;
      afterCr = false;
    }
    pending.keep(bytes.subarray(start));
    return events;
  };
}

const quote = 0x22;
const backslash = 0x5c;

/**
 * A JSON array of objects written element by element (Gemini's stream without `alt=sse`): each element's text,
 * bounded like an event, ending at its closing brace; the array's closing bracket is an event without data.
 * Only nesting and strings are tracked (the bytes of a multi-byte character are never ASCII); each element's
 * own syntax is left to JSON.parse.
 */
export function jsonArraySplitter(maxEventCharacters: number): StreamSplitter {
  const pending = new PendingEvent(maxEventCharacters);
  let state: 'before' | 'between' | 'inside' | 'after' = 'before';
  let depth = 0;
  let inString = false;
  let escaped = false;
  return (chunk) => {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const events: StreamEvent[] = [];
    let start = 0;
    for (let index = 0; index < bytes.length; index++) {
      const byte = bytes[index]!;
      if (state === 'inside') {
        if (inString) {
          if (escaped) escaped = false;
          else if (byte === backslash) escaped = true;
          else if (byte === quote) inString = false;
        } else if (byte === quote) inString = true;
        else if (byte === 0x7b || byte === 0x5b) depth++;
        else if ((byte === 0x7d || byte === 0x5d) && --depth === 0) {
          events.push({ data: pending.take(bytes, { start, end: index + 1 }), end: index + 1 });
          state = 'between';
        }
        continue;
      }
      if (byte === 0x20 || byte === lf || byte === cr || byte === 0x09) continue;
      if (state === 'before') {
        if (byte !== 0x5b) throw broken('it does not open with [');
        state = 'between';
      } else if (state === 'between') {
        if (byte === 0x2c) continue;
        if (byte === 0x5d) {
          state = 'after';
          events.push({ data: undefined, end: index + 1 });
        } else if (byte === 0x7b) {
          state = 'inside';
          depth = 1;
          start = index;
        } else throw broken(`an element opens with ${JSON.stringify(String.fromCharCode(byte))}`);
      } else throw broken('there is more after its end');
    }
    if (state === 'inside') pending.keep(bytes.subarray(start));
    return events;
  };
}

const broken = (message: string) =>
  new UpstreamUnreachableError('protocol', `the upstream stream is not a JSON array of objects: ${message}`);
