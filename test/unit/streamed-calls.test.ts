import { afterAll, describe, expect, it } from 'vitest';
import type { ChatStreamEvent } from '../../src/domain/chat.ts';
import type { ChatCompletionChunk, ToolCallFragment } from '../../src/protocols/openai/chat-completions.ts';
import { createOpenAiAdapter } from '../../src/providers/openai/openai-adapter.ts';
import { StreamedCalls } from '../../src/providers/openai/streamed-calls.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { startFakeServer } from '../fakes/fake-server.ts';
import { sseEvent } from '../fakes/wire.ts';
import { collect, replayTarget } from '../support/vendor-fixtures.ts';

/** Each fragment's events, as the decoder reads a choice's fragments in order. */
const followed = (fragments: ToolCallFragment[]) => {
  const calls = new StreamedCalls();
  return fragments.map((fragment) => calls.follow(fragment));
};
const start = (index: number, id: string, name: string) => ({ type: 'tool-call-start', index, id, name });
const text = (index: number, piece: string) => ({ type: 'tool-call-delta', index, arguments: piece });

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
      [start(0, 'call_1', 'lookup')],
      [text(0, '{"q')],
      [text(0, 'uery"')],
      [text(0, ':1}')],
      // Another index is another call, even under the same id.
      [start(1, 'call_1', 'lookup'), text(1, '{}')],
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
      [start(0, 'call_a', 'read'), text(0, '{"path":"x"}')],
      [start(1, 'call_b', 'read'), text(1, '{"path":')],
      [text(1, '"y"}')],
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
      [start(0, 'function-call-0', 'lookup'), text(0, '{"query":"Sydney"}')],
      [start(1, 'function-call-1', 'lookup'), text(1, '{"query":')],
      [text(1, '"Paris"}')],
      [],
    ]);
  });

  it('gives a call opened without an id one of its own, and reads no call into arguments that name none', () => {
    const [orphan, opened] = followed([
      { index: 3, function: { arguments: '{}' } },
      { index: 0, function: { name: 'f' } },
    ]);
    expect(orphan).toEqual([]);
    expect(opened).toEqual([start(0, expect.stringMatching(/^call_/), 'f')]);
  });

  it('starts a call opened without its name once a later fragment names it, alone or with arguments', () => {
    expect(
      followed([
        { index: 0, id: 'call_1', function: { arguments: '' } },
        { index: 0, function: { name: 'lookup' } },
        { index: 0, function: { arguments: '{}' } },
        // Opened with an empty name, then named with the arguments.
        { index: 1, id: 'call_2', function: { name: '', arguments: '' } },
        { index: 1, id: 'call_2', function: { name: 'bash', arguments: '{"c":1}' } },
      ]),
    ).toEqual([
      [],
      [start(0, 'call_1', 'lookup')],
      [text(0, '{}')],
      [],
      [start(1, 'call_2', 'bash'), text(1, '{"c":1}')],
    ]);
  });

  it('starts a call still unnamed without a name at its first arguments, at another call, or when released', () => {
    expect(
      followed([
        { index: 0, id: 'call_1', function: { arguments: '' } },
        { index: 0, function: { arguments: '{}' } },
        // Too late: the call has started.
        { index: 0, function: { name: 'lookup' } },
        { index: 1, id: 'call_2' },
        { index: 2, id: 'call_3', function: { name: 'read', arguments: '' } },
      ]),
    ).toEqual([
      [],
      [start(0, 'call_1', ''), text(0, '{}')],
      [],
      [],
      [start(1, 'call_2', ''), start(2, 'call_3', 'read')],
    ]);
    const calls = new StreamedCalls();
    expect(calls.follow({ index: 0, id: 'call_1' })).toEqual([]);
    expect(calls.release()).toEqual([start(0, 'call_1', '')]);
    expect(calls.release()).toEqual([]);
    expect(calls.madeCalls).toBe(true);
  });
});

describe('the calls the OpenAI decoder reads from a chat completion stream', () => {
  const http = new UpstreamHttp();
  afterAll(() => http.close());

  /**
   * The canonical events of a stream of `chunks` (SSE events), as a loopback upstream sends them, then `[DONE]`,
   * for a request of `choices` completions.
   */
  async function decoded(chunks: string[], choices = 1): Promise<ChatStreamEvent[]> {
    const upstream = await startFakeServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of chunks) response.write(chunk);
      response.end('data: [DONE]\n\n');
    });
    try {
      const request = { upstreamModel: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], choices } as const;
      const target = replayTarget(`${upstream.url}/v1`);
      return await collect(createOpenAiAdapter(http).text!.streamChat(request, { target }));
    } finally {
      await upstream.close();
    }
  }
  /** A chunk of one choice, as OpenAI writes it. */
  const chunk = (delta: object, { finish = null, choice = 0 }: { finish?: string | null; choice?: number } = {}) => {
    const written = {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1_723_031_664,
      model: 'gpt-4o-mini',
      choices: [{ index: choice, delta, logprobs: null, finish_reason: finish }],
    };
    return sseEvent<ChatCompletionChunk>(written);
  };
  /** A call's first fragment, without its name. */
  const unnamed = (index: number, id: string) => ({ index, id, type: 'function', function: { arguments: '' } });
  const finished = { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: undefined };

  it('starts a call still unnamed before the next output of its choice, text or another call', async () => {
    const events = await decoded([
      chunk({ role: 'assistant', tool_calls: [unnamed(0, 'call_1')] }),
      chunk({ content: 'Looking.' }),
      chunk({ tool_calls: [unnamed(1, 'call_2')] }),
      chunk({ tool_calls: [{ index: 2, id: 'call_3', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({}, { finish: 'tool_calls' }),
    ]);
    expect(events).toEqual([
      start(0, 'call_1', ''),
      { type: 'text-delta', text: 'Looking.' },
      start(1, 'call_2', ''),
      start(2, 'call_3', 'f'),
      finished,
    ]);
  });

  it('starts a call still unnamed as its choice finishes, or the stream ends without its finish', async () => {
    const events = await decoded(
      [
        chunk({ role: 'assistant', tool_calls: [unnamed(0, 'call_b')] }, { choice: 1 }),
        chunk({}, { choice: 1, finish: 'tool_calls' }),
        chunk({ role: 'assistant', tool_calls: [unnamed(0, 'call_a')] }),
      ],
      2,
    );
    expect(events).toEqual([
      { ...start(0, 'call_b', ''), choice: 1 },
      { type: 'choice-finish', choice: 1, finishReason: finished.finishReason },
      start(0, 'call_a', ''),
      { ...finished, finishReason: { unified: 'other', raw: undefined } },
    ]);
  });
});
