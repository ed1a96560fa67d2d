import { describe, expect, it } from 'vitest';
import { answeredAs } from '../../src/gateway/served-model.ts';
import type { RelayOperation } from '../../src/providers/provider-adapter.ts';

async function relayed(pieces: string[], operation: RelayOperation = 'chat-completions'): Promise<string[]> {
  async function* source() {
    for (const piece of pieces) yield Buffer.from(piece);
  }
  const out: string[] = [];
  for await (const chunk of answeredAs(source(), 'catalog-id', operation)) out.push(Buffer.from(chunk).toString());
  return out;
}

/** The catalog id set in relayed answers: whole answers read at once, events and arrays walked object by object. */
describe('answeredAs', () => {
  it('sets the model of a whole answer and keeps the bytes around it', async () => {
    const answer = { id: 'a', model: 'upstream-id', choices: [{ message: { content: 'a "model": {"x": "}"}' } }] };
    const [out] = await relayed([`\n  ${JSON.stringify(answer, null, 2)}\n`]);
    expect(out).toBe(`\n  ${JSON.stringify({ ...answer, model: 'catalog-id' })}\n`);
  });

  it('passes a whole answer that already names the catalog id byte for byte', async () => {
    const text = '{ "model": "catalog-id",  "object": "chat.completion" }';
    expect(await relayed([text])).toEqual([text]);
  });

  it('sets each object of a piece holding several, and leaves what is between them', async () => {
    const out = await relayed(['data: {"model":"up","n":1}\n\ndata: {"model" : "up"}\n\ndata: [DONE]\n\n']);
    expect(out).toEqual(['data: {"model":"catalog-id","n":1}\n\ndata: {"model":"catalog-id"}\n\ndata: [DONE]\n\n']);
    expect(await relayed(['{"model":"up"}{"model":"up"}'])).toEqual(['{"model":"catalog-id"}{"model":"catalog-id"}']);
  });

  it('sets nested model fields of the operation', async () => {
    const [out] = await relayed(['{"type":"message_start","message":{"model":"up"}}'], 'messages');
    expect(JSON.parse(out!)).toEqual({ type: 'message_start', message: { model: 'catalog-id' } });
  });
});
