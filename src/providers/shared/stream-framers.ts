/**
 * Finds where the events of a stream end in its bytes, piece by piece: the offsets (within the piece just
 * read, exclusive) at which an event is complete. A relay cut at one of them leaves the client no half event.
 */
export type StreamFramer = (bytes: Uint8Array) => number[];

const lf = 0x0a;
const cr = 0x0d;

/**
 * Server-sent events end at a blank line: a line terminator (CRLF, LF or CR) right after another. A CR at the
 * end of an event is one only once the next byte is read (it may be the start of a CRLF).
 */
export function sseFramer(): StreamFramer {
  let atLineStart = false;
  let afterCr = false;
  let endAfterLf = false;
  return (bytes) => {
    const ends: number[] = [];
    for (let index = 0; index < bytes.length; index++) {
      const byte = bytes[index]!;
      if (endAfterLf) {
        endAfterLf = false;
        ends.push(byte === lf ? index + 1 : index);
        if (byte === lf) {
          afterCr = false;
          continue;
        }
      }
      if (byte === lf) {
        if (afterCr) afterCr = false;
        else if (atLineStart) {
          ends.push(index + 1);
          atLineStart = false;
        } else atLineStart = true;
      } else if (byte === cr) {
        afterCr = true;
        if (atLineStart) {
          endAfterLf = true;
          atLineStart = false;
        } else atLineStart = true;
      } else {
        atLineStart = false;
        afterCr = false;
      }
    }
    return ends;
  };
}

const quote = 0x22;
const backslash = 0x5c;

/**
 * A JSON array written element by element: an event ends with its element's closing bracket, and the array
 * with its own. Only nesting and strings are tracked (the bytes of a multi-byte character are never ASCII);
 * each element's syntax is left to the splitter that parses it.
 */
export function jsonArrayFramer(): StreamFramer {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let opened = false;
  return (bytes) => {
    const ends: number[] = [];
    for (let index = 0; index < bytes.length; index++) {
      const byte = bytes[index]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === backslash) escaped = true;
        else if (byte === quote) inString = false;
      } else if (byte === quote) inString = true;
      else if (byte === 0x7b || byte === 0x5b) {
        if (opened || byte === 0x7b) depth++;
        opened = true;
      } else if (byte === 0x7d || byte === 0x5d) {
        if (depth > 0) depth--;
        if (depth === 0) ends.push(index + 1);
      }
    }
    return ends;
  };
}
