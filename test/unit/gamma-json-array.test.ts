import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { relayedJsonArray } from '../../src/surfaces/gamma/json-array-stream.ts';

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
