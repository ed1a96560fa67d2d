import { describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/domain/tokenizer.ts';
import { OutputLimit } from '../../src/domain/output-limit.ts';
import { anthropicRelayMeter } from '../../src/providers/anthropic/anthropic-relay.ts';
import { geminiRelayMeter } from '../../src/providers/gemini/gemini-relay.ts';
import { openAiRelayMeter } from '../../src/providers/openai/openai-relay.ts';
import type { RelayMeter, RelayMeterOptions, RelayOperation } from '../../src/providers/provider-adapter.ts';
import { servedAs } from '../../src/providers/shared/served-model.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

function meterFor(
  make: (operation: RelayOperation, options: RelayMeterOptions) => RelayMeter,
  operation: RelayOperation,
  { streaming = true, maxTokens = 1000 }: { streaming?: boolean; maxTokens?: number } = {},
): RelayMeter {
  return make(operation, {
    streaming,
    maxEventCharacters: 4096,
    limit: new OutputLimit(maxTokens, countTextTokens),
    servedAs: servedAs(operation, 'catalog-id'),
  });
}

/** Everything a meter relays of `pieces`, then its end. */
function relayed(meter: RelayMeter, pieces: readonly string[]): string {
  return pieces.map((piece) => text(meter.push(bytes(piece)))).join('') + text(meter.end());
}

const chatChunk = (fields: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'c', ...fields })}\n\n`;

/** The catalog id set where each protocol names its model, by the relay meter that already reads each event. */
describe('a relayed answer names the catalog model', () => {
  it('sets the model of each chat chunk, keeps every other byte, and leaves a tool argument named model alone', () => {
    const tool = { tool_calls: [{ index: 0, function: { arguments: '{"model":"up"}' } }] };
    const stream = [
      chatChunk({ model: 'up', choices: [{ index: 0, delta: tool }] }),
      ': keep-alive\n\n',
      chatChunk({ model: 'up', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      'data: [DONE]\n\n',
    ];
    const whole = stream.join('');
    // Cut inside the first chunk's model, so the renamed event spans two pieces.
    const at = whole.indexOf('"up"') + 2;
    const out = relayed(meterFor(openAiRelayMeter, 'chat-completions'), [whole.slice(0, at), whole.slice(at)]);
    expect(out).toBe(stream.join('').replaceAll('"model":"up"', '"model":"catalog-id"'));
    expect(out).toContain('"arguments":"{\\"model\\":\\"up\\"}"');
  });

  it('names the model where the top-level field is not plainly first: nested objects before it, spaces, a quoted key', () => {
    const events = [
      'data: {"id":"c","choices":[{"index":0,"delta":{"model":"up"}}],"model":"up"}\n\n',
      'data: {"id":"c", "model" : "up", "choices":[]}\n\n',
      'data: {"x\\"model":"up","model":"up","choices":[]}\n\n',
      'data: {"id":"é—","model":"up","choices":[]}\n\n',
      'data:{"id":"c","model":"up","choices":[]}\n\n',
    ];
    // Event by event, and all in one piece (spliced and rewritten events side by side in one relayed buffer).
    const outs = [events, [events.join('')]].map((pieces) =>
      relayed(meterFor(openAiRelayMeter, 'chat-completions'), pieces)
        .split('\n\n')
        .filter((event) => event !== '')
        .map((event) => JSON.parse(event.replace(/^data: ?/, ''))),
    );
    expect(outs[1]).toEqual(outs[0]);
    expect(outs[0]).toEqual([
      { id: 'c', choices: [{ index: 0, delta: { model: 'up' } }], model: 'catalog-id' },
      { id: 'c', model: 'catalog-id', choices: [] },
      { 'x"model': 'up', model: 'catalog-id', choices: [] },
      { id: 'é—', model: 'catalog-id', choices: [] },
      { id: 'c', model: 'catalog-id', choices: [] },
    ]);
  });

  it('names the model of an event that names it twice (a client reads the last) and of data sent on several lines', () => {
    const twice = 'data: {"model":"up","id":"c","choices":[{"index":0,"delta":{"content":"Hi"}}],"model":"up"}\n\n';
    const lines = 'event: chunk\r\ndata: {"id":"c",\r\ndata: "model":"up","choices":[]}\r\nid: 7\r\n\r\n';
    const out = relayed(meterFor(openAiRelayMeter, 'chat-completions'), [twice, lines]);
    expect(out).not.toContain('"up"');
    const events = out.split('\n\n').filter((event) => event !== '');
    expect(JSON.parse(events[0]!.replace(/^data: /, ''))).toEqual({
      model: 'catalog-id',
      id: 'c',
      choices: [{ index: 0, delta: { content: 'Hi' } }],
    });
    // The other fields of the event are kept; its data is now on one line.
    expect(events[1]).toBe('event: chunk\ndata: {"id":"c","model":"catalog-id","choices":[]}\nid: 7');
  });

  it('passes an event that already names the catalog id byte for byte', () => {
    const event = 'data: { "id": "c",  "model": "catalog-id", "choices": [] }\n\n';
    expect(relayed(meterFor(openAiRelayMeter, 'chat-completions'), [event])).toBe(event);
  });

  it('sets the nested model of message_start, keeping its event line, and names it in a length finish', () => {
    const event = (payload: Record<string, unknown> & { type: string }) =>
      `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`;
    const start = event({ type: 'message_start', message: { id: 'm', model: 'up', content: [], usage: {} } });
    const out = relayed(meterFor(anthropicRelayMeter, 'messages'), [start]);
    expect(out).toBe(start.replace('"model":"up"', '"model":"catalog-id"'));
  });

  it('sets the model of a whole answer but not of a tool input that names one', () => {
    const answer = {
      id: 'm',
      type: 'message',
      role: 'assistant',
      model: 'up',
      content: [{ type: 'tool_use', id: 't', name: 'pick', input: { model: 'up' } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 1, output_tokens: 1 },
    };
    const meter = meterFor(anthropicRelayMeter, 'messages', { streaming: false });
    expect(JSON.parse(relayed(meter, [JSON.stringify(answer)]))).toEqual({ ...answer, model: 'catalog-id' });
  });

  it('splices the model of a whole answer in place, keeping every other byte as it came', () => {
    const answer = '{"id":"c","model":"up","object":"chat.completion","choices":[],  "extra" :  "kept"}';
    const meter = meterFor(openAiRelayMeter, 'chat-completions', { streaming: false });
    expect(relayed(meter, [answer])).toBe(answer.replace('"model":"up"', '"model":"catalog-id"'));
  });

  it('passes a whole answer that names the catalog id byte for byte', () => {
    const answer = '{ "id": "c", "model": "catalog-id", "object": "chat.completion", "choices": [] }';
    const meter = meterFor(openAiRelayMeter, 'chat-completions', { streaming: false });
    expect(relayed(meter, [answer])).toBe(answer);
  });

  it('sets modelVersion in each element of a Gemini JSON array, and in the length finish that closes it', () => {
    const element = (textPart: string) =>
      JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: textPart }] } }], modelVersion: 'up' });
    const meter = meterFor(geminiRelayMeter, 'stream-generate-content-json', { maxTokens: 1 });
    const out = relayed(meter, [`[${element('one')}`, `,\r\n${element(' two three four')}`]);
    expect(out.startsWith(`[${element('one').replace('"up"', '"catalog-id"')}`)).toBe(true);
    expect(out).not.toContain('"up"');
    expect(JSON.parse(out).at(-1)).toMatchObject({ modelVersion: 'catalog-id' });
  });
});
