import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ChatStreamEvent } from '../../src/domain/chat.ts';
import { relayedJsonArray, translatedJsonArray } from '../../src/surfaces/gamma/json-array-stream.ts';

const log: FastifyBaseLogger = pino({ level: 'silent' });
const streamError = {
  error: { code: 502, message: 'the upstream provider failed while streaming', status: 'UNAVAILABLE' },
};
const element = '{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}';

/** What the client receives of a relayed array whose upstream sent `pieces`, then failed or ended. */
async function relayed(
  pieces: readonly string[],
  { fails = false, complete = false }: { fails?: boolean; complete?: boolean } = {},
): Promise<string> {
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const piece of pieces) yield new TextEncoder().encode(piece);
    if (fails) throw new Error('the upstream went away');
  }
  const reading = () => ({ complete, sawError: false, sawTerminator: false });
  let text = '';
  for await (const chunk of relayedJsonArray(log, body(), reading)) text += Buffer.from(chunk).toString('utf8');
  return text;
}

describe('a relayed streamGenerateContent JSON array', () => {
  it('ends a cut array with the error element, after an element, a comma or the opening bracket', async () => {
    for (const pieces of [[`[${element}`], [`[${element},\r\n`], ['[ '], []]) {
      for (const fails of [true, false]) {
        const elements: unknown[] = JSON.parse(await relayed(pieces, { fails }));
        expect(elements.at(-1)).toEqual(streamError);
        expect(elements).toHaveLength(pieces.join('').includes('{') ? 2 : 1);
      }
    }
  });

  it('leaves a complete array as it came, and closes one the upstream left open', async () => {
    expect(await relayed([`[${element}`, ']'], { complete: true })).toBe(`[${element}]`);
    expect(await relayed([`[${element}\r\n`], { complete: true })).toBe(`[${element}\r\n]`);
  });
});

/** The array written for a translated answer's canonical events, which fail after `failAfter` of them when given. */
async function translated(events: readonly ChatStreamEvent[], failAfter?: number): Promise<string> {
  async function* source(): AsyncGenerator<ChatStreamEvent> {
    for (const [index, event] of events.entries()) {
      if (index === failAfter) throw new Error('the upstream went away');
      yield event;
    }
    if (failAfter === events.length) throw new Error('the upstream went away');
  }
  let text = '';
  for await (const piece of translatedJsonArray(log, source(), 'gemini-model')) text += piece;
  return text;
}

describe('a translated streamGenerateContent JSON array', () => {
  const finish: ChatStreamEvent = {
    type: 'finish',
    finishReason: { unified: 'stop', raw: 'end_turn' },
    usage: { inputTokens: 3, outputTokens: 2 },
  };
  const candidate = (parts: unknown[], finishReason?: string) => ({
    candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}), index: 0 }],
    modelVersion: 'gemini-model',
  });

  it('writes one element per chunk, separated as Google does, the finish last with the usage', async () => {
    const text = await translated([
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'tool-call-start', index: 0, id: 'call_1', name: 'lookup' },
      { type: 'tool-call-delta', index: 0, arguments: '{"q":' },
      { type: 'tool-call-delta', index: 0, arguments: '"x"}' },
      finish,
    ]);
    expect(text.startsWith('[{')).toBe(true);
    expect(text.split(',\r\n')).toHaveLength(4);
    expect(JSON.parse(text)).toEqual([
      candidate([{ text: 'Hel' }]),
      candidate([{ text: 'lo' }]),
      // The call's fragments are held until it is whole.
      candidate([{ functionCall: { id: 'call_1', name: 'lookup', args: { q: 'x' } } }]),
      {
        ...candidate([{ text: '' }], 'STOP'),
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
      },
    ]);
  });

  it('writes an empty array for an answer with no events', async () => {
    expect(await translated([])).toBe('[]');
  });

  it('ends a failed answer with the error element and closes the array, after elements or before any', async () => {
    expect(JSON.parse(await translated([{ type: 'text-delta', text: 'Hi' }, finish], 1))).toEqual([
      candidate([{ text: 'Hi' }]),
      streamError,
    ]);
    // A call still being assembled when the answer fails has written nothing: the error is the only element.
    expect(
      JSON.parse(await translated([{ type: 'tool-call-start', index: 0, id: 'call_1', name: 'lookup' }, finish], 1)),
    ).toEqual([streamError]);
    expect(JSON.parse(await translated([finish], 0))).toEqual([streamError]);
  });
});
