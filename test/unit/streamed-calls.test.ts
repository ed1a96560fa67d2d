import { describe, expect, it } from 'vitest';
import type { ToolCallFragment } from '../../src/protocols/openai/chat-completions.ts';
import { StreamedCalls } from '../../src/providers/openai/streamed-calls.ts';

/** Each fragment's call, as the decoder reads a choice's fragments in order. */
const followed = (fragments: ToolCallFragment[]) => {
  const calls = new StreamedCalls();
  return fragments.map((fragment) => calls.follow(fragment));
};

describe('the calls of a streamed chat completion choice', () => {
  it('continues the call of an index whatever id and name its later fragments repeat, empty or null', () => {
    const first = { index: 0, id: 'call_1', function: { name: 'lookup', arguments: '' } };
    expect(
      followed([
        first,
        { index: 0, id: 'call_1', function: { name: 'lookup', arguments: '{"q' } },
        { index: 0, id: '', function: { name: '', arguments: 'uery"' } },
        { index: 0, id: null, function: { name: null, arguments: ':1}' } },
        { index: 1, id: 'call_1', function: { name: 'lookup', arguments: '{}' } },
      ]),
    ).toEqual([
      { index: 0, opened: { id: 'call_1', name: 'lookup' } },
      { index: 0 },
      { index: 0 },
      { index: 0 },
      // Another index is another call, even under the same id.
      { index: 1, opened: { id: 'call_1', name: 'lookup' } },
    ]);
  });

  it('opens a new call for a new id under an index already used (Ollama and SGLang send every call as index 0)', () => {
    expect(
      followed([
        { index: 0, id: 'call_a', function: { name: 'read', arguments: '{"path":"x"}' } },
        { index: 0, id: 'call_b', function: { name: 'read', arguments: '{"path":' } },
        { index: 0, function: { arguments: '"y"}' } },
      ]),
    ).toEqual([
      { index: 0, opened: { id: 'call_a', name: 'read' } },
      { index: 1, opened: { id: 'call_b', name: 'read' } },
      { index: 1 },
    ]);
  });

  it('without index, opens a call for each id other than the last one, and continues it otherwise', () => {
    expect(
      followed([
        { id: 'function-call-0', function: { name: 'lookup', arguments: '{"query":"Sydney"}' } },
        { id: 'function-call-1', function: { name: 'lookup', arguments: '{"query":' } },
        { id: 'function-call-1', function: { arguments: '"Paris"}' } },
        { function: { arguments: '' } },
      ]),
    ).toEqual([
      { index: 0, opened: { id: 'function-call-0', name: 'lookup' } },
      { index: 1, opened: { id: 'function-call-1', name: 'lookup' } },
      { index: 1 },
      { index: 1 },
    ]);
  });

  it('gives a call opened without an id one of its own, and reads no call into arguments that name none', () => {
    const [orphan, opened] = followed([
      { index: 3, function: { arguments: '{}' } },
      { index: 0, function: { name: 'f' } },
    ]);
    expect(orphan).toBeUndefined();
    expect(opened).toEqual({ index: 0, opened: { id: expect.stringMatching(/^call_/), name: 'f' } });
  });
});
