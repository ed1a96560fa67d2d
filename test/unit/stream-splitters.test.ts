import { describe, expect, it } from 'vitest';
import { UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { jsonArraySplitter, sseSplitter } from '../../src/providers/shared/stream-splitters.ts';

/** Feeds `pieces` to a splitter: the events it completed, or the failure it broke with. */
function run(split: (text: string) => string[], pieces: string[]): string[] | Error {
  const events: string[] = [];
  try {
    for (const piece of pieces) events.push(...split(piece));
    return events;
  } catch (error) {
    return error as Error;
  }
}

const inPieces = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, index) => text.slice(index * size, (index + 1) * size));

describe('stream splitters', () => {
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
