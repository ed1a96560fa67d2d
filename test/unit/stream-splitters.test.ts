import { describe, expect, it } from 'vitest';
import { UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import {
  dataOf,
  jsonArraySplitter,
  sseSplitter,
  type StreamSplitter,
} from '../../src/providers/shared/stream-splitters.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

/** Feeds `pieces` to a splitter: the data of the events it completed, or the failure it broke with. */
function run(split: StreamSplitter, pieces: (string | Uint8Array)[]): string[] | Error {
  const events: string[] = [];
  try {
    for (const piece of pieces) events.push(...dataOf(split(typeof piece === 'string' ? bytes(piece) : piece)));
    return events;
  } catch (error) {
    return error as Error;
  }
}

/** The bytes of each event a splitter completes over `pieces`, cut at the ends it reports, as text. */
function framed(split: StreamSplitter, pieces: (string | Uint8Array)[]): string[] {
  const events: Buffer[] = [];
  let pending = Buffer.alloc(0);
  for (const piece of pieces) {
    const data = Buffer.from(piece);
    let start = 0;
    for (const { end } of split(data)) {
      events.push(Buffer.concat([pending, data.subarray(start, end)]));
      pending = Buffer.alloc(0);
      start = end;
    }
    pending = Buffer.concat([pending, data.subarray(start)]);
  }
  return events.map((event) => event.toString('utf8'));
}

const inPieces = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, index) => text.slice(index * size, (index + 1) * size));

describe('stream splitters', () => {
  it('end server-sent events at a blank line of LF, CRLF or CR, across pieces', () => {
    const pieces = ['data: a\n\ndata: b\r\n', '\r\ndata: c\r', '\rdata: d\n'];
    expect(framed(sseSplitter(1024), pieces)).toEqual(['data: a\n\n', 'data: b\r\n\r\n', 'data: c\r\r']);
    expect(run(sseSplitter(1024), pieces)).toEqual(['a', 'b', 'c']);
  });

  it('read an event whatever its bytes are cut into', () => {
    const stream = '\uFEFFevent: x\ndata: {"a":\r\ndata:"é"}\r\n\r\n: a comment\n\ndata\n\nid: 1\r\rdata: 2\r\r\n';
    const whole = Buffer.from(stream);
    for (let size = 1; size <= whole.length; size++) {
      const pieces = Array.from({ length: Math.ceil(whole.length / size) }, (_, index) =>
        whole.subarray(index * size, (index + 1) * size),
      );
      expect(run(sseSplitter(1024), pieces)).toEqual(['{"a":\n"é"}', '', '2']);
      expect(framed(sseSplitter(1024), pieces).join('')).toBe(stream);
    }
  });

  it('end JSON-array elements at their closing bracket, brackets and quotes in strings aside', () => {
    const pieces = ['[{"a":"}]\\"{"', ',"b":[1,{}]}', ',\r\n{"c":2}]'];
    expect(framed(jsonArraySplitter(1024), pieces)).toEqual(['[{"a":"}]\\"{","b":[1,{}]}', ',\r\n{"c":2}', ']']);
  });

  it('pass many events whose total is far over the limit, each under it', () => {
    const stream = Array.from({ length: 500 }, (_, index) => `data: {"n":${index}}\n\n`).join('');
    const events = run(sseSplitter(1024), inPieces(stream, 100));
    expect(events).toHaveLength(500);
  });

  it('refuse an event-stream line that grows past the limit without ending, instead of buffering it', () => {
    const failure = run(sseSplitter(1024), inPieces(`data: {"pad":"${'y'.repeat(3_000)}`, 500));
    expect(failure).toBeInstanceOf(UpstreamUnreachableError);
    expect((failure as Error).message).toMatch(/a stream event larger than 1024 characters/);
  });

  it('count the limit in characters, not bytes', () => {
    expect(run(sseSplitter(1024), inPieces(`data: ${'é'.repeat(1000)}\n\n`, 300))).toHaveLength(1);
  });

  it('refuse an event of short lines that never ends (no blank line)', () => {
    const failure = run(sseSplitter(1024), inPieces('data: abcdefgh\n'.repeat(200), 64));
    expect(failure).toBeInstanceOf(UpstreamUnreachableError);
  });

  it('refuse a JSON-array element that grows past the limit, and pass elements under it', () => {
    expect(run(jsonArraySplitter(1024), ['[{"a":1}', ',\r\n{"b":"x"}', ']'])).toEqual(['{"a":1}', '{"b":"x"}']);
    const failure = run(jsonArraySplitter(1024), ['[', ...inPieces(`{"pad":"${'z'.repeat(3_000)}"}`, 300)]);
    expect(failure).toBeInstanceOf(UpstreamUnreachableError);
  });
});
