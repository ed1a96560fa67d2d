import { describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/domain/tokenizer.ts';
import { OutputLimit } from '../../src/domain/output-limit.ts';
import { anthropicRelayMeter } from '../../src/providers/anthropic/anthropic-relay.ts';
import { openAiRelayMeter } from '../../src/providers/openai/openai-relay.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

describe('the output limit', () => {
  it('counts nothing while the text has fewer bytes than the limit has tokens, then counts it once when asked', () => {
    const counted: string[] = [];
    const limit = new OutputLimit(10, (piece) => {
      counted.push(piece);
      return countTextTokens(piece);
    });
    limit.add('word ');
    expect(limit.reached).toBe(false);
    expect(counted).toEqual([]);
    limit.add('word word ');
    expect(counted).toEqual([]);
    expect(limit.reached).toBe(false);
    expect(counted).toEqual(['word word word ']);
    limit.add('word word word word word word word ');
    expect(limit.delivered).toBeGreaterThanOrEqual(10);
    expect(limit.reached).toBe(true);
  });

  it('takes the running usage an upstream reports when it says more than was counted', () => {
    const limit = new OutputLimit(100, countTextTokens);
    limit.add('word');
    limit.report(100);
    expect(limit.reached).toBe(true);
  });
});

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'c1', created: 7, model: 'm', choices: [{ index: 0, delta: { content } }] })}\n\n`;

describe('a relay meter with the output limit', () => {
  it('relays whole events only, holding back the one not yet complete', () => {
    const meter = openAiRelayMeter('chat-completions', {
      streaming: true,
      maxEventCharacters: 1024,
      limit: new OutputLimit(100, countTextTokens),
    });
    const stream = chunk('one ') + chunk('two ');
    const cutAt = stream.length - 10;
    expect(text(meter.push(bytes(stream.slice(0, cutAt))))).toBe(chunk('one '));
    expect(text(meter.push(bytes(stream.slice(cutAt))))).toBe(chunk('two '));
    expect(meter.cut).toBe(false);
  });

  it('cuts a chat stream at the first output past the limit, inside a chunk, and ends it as a length finish', () => {
    const meter = openAiRelayMeter('chat-completions', {
      streaming: true,
      maxEventCharacters: 1024,
      limit: new OutputLimit(2, countTextTokens),
    });
    const relayed = meter.push(bytes(chunk('one') + chunk(' two') + chunk(' three') + chunk(' four')));
    expect(text(relayed)).toBe(chunk('one') + chunk(' two'));
    expect(meter.cut).toBe(true);
    expect(meter.reading().output.text).toBe('one two');
    const ending = text(meter.end());
    expect(JSON.parse(ending.slice('data: '.length))).toEqual({
      id: 'c1',
      created: 7,
      model: 'm',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: {}, finish_reason: 'length' }],
    });
    expect(meter.reading().complete).toBe(true);
  });

  it('closes an open content block before a messages stream ends as max_tokens', () => {
    const meter = anthropicRelayMeter('messages', {
      streaming: true,
      maxEventCharacters: 1024,
      limit: new OutputLimit(1, countTextTokens),
    });
    const event = (payload: Record<string, unknown> & { type: string }) =>
      `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`;
    const delta = event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'word ' } });
    const start = event({ type: 'content_block_start', index: 0, content_block: { type: 'text' } });
    expect(text(meter.push(bytes(start + delta + delta)))).toBe(start + delta);
    expect(
      text(meter.end())
        .split('\n')
        .filter((line) => line.startsWith('event: ')),
    ).toEqual(['event: content_block_stop', 'event: message_delta', 'event: message_stop']);
  });

  it('does not close a content block whose start the limit refused', () => {
    const meter = anthropicRelayMeter('messages', {
      streaming: true,
      maxEventCharacters: 1024,
      limit: new OutputLimit(1, countTextTokens),
    });
    const event = (payload: Record<string, unknown> & { type: string }) =>
      `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`;
    const relayed =
      event({ type: 'content_block_start', index: 0, content_block: { type: 'text' } }) +
      event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'word' } }) +
      event({ type: 'content_block_stop', index: 0 });
    const refused = event({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', name: 'find' } });
    expect(text(meter.push(bytes(relayed + refused)))).toBe(relayed);
    expect(
      text(meter.end())
        .split('\n')
        .filter((line) => line.startsWith('event: ')),
    ).toEqual(['event: message_delta', 'event: message_stop']);
    expect(meter.reading().output.text).toBe('word');
  });

  it('never counts a stream whose output ends as it nears the limit', () => {
    const counted: string[] = [];
    const meter = openAiRelayMeter('chat-completions', {
      streaming: true,
      maxEventCharacters: 1024,
      limit: new OutputLimit(3, (piece) => {
        counted.push(piece);
        return countTextTokens(piece);
      }),
    });
    const finish = `data: ${JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`;
    expect(text(meter.push(bytes(chunk('one two') + finish)))).toBe(chunk('one two') + finish);
    expect(counted).toEqual([]);
    // Output after it is asked about: counted, and refused once the limit is reached.
    expect(text(meter.push(bytes(chunk(' three four'))))).toBe(chunk(' three four'));
    expect(counted).toEqual(['one two']);
  });

  it('marks a whole answer past the limit as a length finish, its content as it came', () => {
    const meter = openAiRelayMeter('chat-completions', {
      streaming: false,
      maxEventCharacters: 1024,
      limit: new OutputLimit(5, countTextTokens),
    });
    const answer = {
      choices: [{ index: 0, message: { content: 'word '.repeat(50) }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 50 },
    };
    expect(meter.push(bytes(JSON.stringify(answer)))).toHaveLength(0);
    expect(JSON.parse(text(meter.end()))).toEqual({
      ...answer,
      choices: [{ ...answer.choices[0], finish_reason: 'length' }],
    });
  });
});
