import { createParser } from 'eventsource-parser';
import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';

/** Cuts the text of a stream, piece by piece, into the data of its events, each returned once complete. */
export type StreamSplitter = (text: string) => string[];

const tooLarge = (limit: number) =>
  new UpstreamUnreachableError('protocol', `the upstream sent a stream event larger than ${limit} characters`);

/**
 * Server-sent events: each event's `data`. An event (and so any line of it) that grows past `maxEventCharacters`
 * before it completes breaks the stream instead of being buffered whole: an upstream's endless line or event.
 */
export function sseSplitter(maxEventCharacters: number): StreamSplitter {
  const completed: string[] = [];
  let pending = 0;
  const parser = createParser({
    onEvent: (event) => {
      completed.push(event.data);
      pending = 0;
    },
  });
  return (text) => {
    parser.feed(text);
    // Counted from the last event on, so an event that never ends is refused instead of buffered.
    if (completed.length === 0) {
      pending += text.length;
      if (pending > maxEventCharacters) throw tooLarge(maxEventCharacters);
    }
    return completed.splice(0);
  };
}

/** A JSON array of objects written element by element (Gemini's stream without `alt=sse`): each element's text, bounded like an event. */
export function jsonArraySplitter(maxEventCharacters: number): StreamSplitter {
  const splitter = new JsonArraySplitter(maxEventCharacters);
  return (text) => splitter.feed(text);
}

const broken = (message: string) =>
  new UpstreamUnreachableError('protocol', `the upstream stream is not a JSON array of objects: ${message}`);

/**
 * Splits a JSON array of objects that arrives in pieces (a stream written element by element) into the text
 * of each element as it completes, so each can be checked like an event of an event stream. It tracks only
 * nesting and strings; each element's own syntax is left to JSON.parse.
 */
class JsonArraySplitter {
  private state: 'before' | 'between' | 'inside' | 'after' = 'before';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private element: string[] = [];
  private elementLength = 0;

  constructor(private readonly maxElementCharacters: number) {}

  /** The elements completed by this piece, in order. */
  feed(text: string): string[] {
    const completed: string[] = [];
    let start = 0;
    for (let index = 0; index < text.length; index++) {
      const char = text[index]!;
      if (this.state === 'inside') {
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (char === '\\') this.escaped = true;
          else if (char === '"') this.inString = false;
        } else if (char === '"') this.inString = true;
        else if (char === '{' || char === '[') this.depth++;
        else if ((char === '}' || char === ']') && --this.depth === 0) {
          this.element.push(text.slice(start, index + 1));
          completed.push(this.element.join(''));
          this.element = [];
          this.elementLength = 0;
          this.state = 'between';
        }
        continue;
      }
      if (char === ' ' || char === '\n' || char === '\r' || char === '\t') continue;
      if (this.state === 'before') {
        if (char !== '[') throw broken('it does not open with [');
        this.state = 'between';
      } else if (this.state === 'between') {
        if (char === ',') continue;
        if (char === ']') this.state = 'after';
        else if (char === '{') {
          this.state = 'inside';
          this.depth = 1;
          start = index;
        } else throw broken(`an element opens with ${JSON.stringify(char)}`);
      } else throw broken('there is more after its end');
    }
    if (this.state === 'inside') {
      this.element.push(text.slice(start));
      this.elementLength += text.length - start;
      if (this.elementLength > this.maxElementCharacters) throw tooLarge(this.maxElementCharacters);
    }
    return completed;
  }
}
