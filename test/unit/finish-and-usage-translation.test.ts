import { describe, expect, it } from 'vitest';
import type { FinishReason } from '../../src/domain/chat.ts';
import {
  finishReasonOf as anthropicFinish,
  deltaOutput,
  stopReasonOf,
  wireUsage as anthropicUsage,
} from '../../src/protocols/anthropic/messages.ts';
import {
  finishReasonOf as geminiFinish,
  usageFromMetadata,
  wireFinishReasons as geminiFinishReasons,
  wireUsageMetadata,
} from '../../src/protocols/gemini/generate-content.ts';
import {
  calledFinish,
  finishReasonOf as openAiFinish,
  wireFinishReasons as openAiFinishReasons,
  wireUsage as openAiUsage,
} from '../../src/protocols/openai/chat-completions.ts';
import { responseEndOf, responsesUsageOf, wireResponsesUsage } from '../../src/protocols/openai/responses.ts';
import { messageOf } from '../../src/surfaces/beta/messages-codec.ts';

/**
 * How the end of an answer and its token usage cross protocols: each protocol's finish read as the canonical
 * reason, and the canonical reason and usage written as every other protocol's, without HTTP.
 */
describe('finish reasons read from each protocol', () => {
  it("reads Anthropic's stop reasons, keeping an unknown one raw as other", () => {
    expect(
      ['end_turn', 'stop_sequence', 'max_tokens', 'tool_use', 'refusal', 'pause_turn'].map(anthropicFinish),
    ).toEqual([
      { unified: 'stop', raw: 'end_turn' },
      { unified: 'stop', raw: 'stop_sequence' },
      { unified: 'length', raw: 'max_tokens' },
      { unified: 'tool-calls', raw: 'tool_use' },
      { unified: 'content-filter', raw: 'refusal' },
      { unified: 'other', raw: 'pause_turn' },
    ]);
  });

  it("reads OpenAI's finish reasons, the legacy function_call a tool call too", () => {
    expect(['stop', 'length', 'tool_calls', 'function_call', 'content_filter', 'surprise'].map(openAiFinish)).toEqual([
      { unified: 'stop', raw: 'stop' },
      { unified: 'length', raw: 'length' },
      { unified: 'tool-calls', raw: 'tool_calls' },
      { unified: 'tool-calls', raw: 'function_call' },
      { unified: 'content-filter', raw: 'content_filter' },
      { unified: 'other', raw: 'surprise' },
    ]);
  });

  it("reads OpenAI's stop as a tool-call finish only when the choice made calls (a forced call ends with stop)", () => {
    expect(calledFinish(openAiFinish('stop'), true)).toEqual({ unified: 'tool-calls', raw: 'stop' });
    expect(calledFinish(openAiFinish('stop'), false)).toEqual({ unified: 'stop', raw: 'stop' });
    expect(calledFinish(openAiFinish('length'), true)).toEqual({ unified: 'length', raw: 'length' });
  });

  it("reads Gemini's STOP as a tool-call finish only when the turn made calls, and its blocks as content filter", () => {
    expect(geminiFinish('STOP', { madeCalls: false })).toEqual({ unified: 'stop', raw: 'STOP' });
    expect(geminiFinish('STOP', { madeCalls: true })).toEqual({ unified: 'tool-calls', raw: 'STOP' });
    // Only STOP becomes a tool-call finish: a turn cut short while calling stays cut short.
    expect(geminiFinish('MAX_TOKENS', { madeCalls: true })).toEqual({ unified: 'length', raw: 'MAX_TOKENS' });
    const filters = ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII'];
    // An image the model made and the filter blocked ends the answer as a filter does, not as a normal stop.
    for (const raw of [...filters, 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION'])
      expect(geminiFinish(raw, { madeCalls: false }).unified, raw).toBe('content-filter');
    // Calls the model failed to make (or made where none was allowed, or too many) end it as failed calls do.
    for (const raw of ['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS'])
      expect(geminiFinish(raw, { madeCalls: false }).unified, raw).toBe('error');
    expect(geminiFinish('LANGUAGE', { madeCalls: false })).toEqual({ unified: 'other', raw: 'LANGUAGE' });
  });

  // Google's FinishReason: IMAGE_OTHER, "image generation stopped for a reason not otherwise specified", is the last
  // of the image reasons that withhold the image made; NO_IMAGE, "the model was expected to generate an image, but
  // none was generated", is a model failing at what it was asked, as a malformed call is.
  it("reads Gemini's withheld image (IMAGE_OTHER) as a content filter and a missing one (NO_IMAGE) as an error", () => {
    expect(geminiFinish('IMAGE_OTHER', { madeCalls: false })).toEqual({
      unified: 'content-filter',
      raw: 'IMAGE_OTHER',
    });
    expect(geminiFinish('NO_IMAGE', { madeCalls: false })).toEqual({ unified: 'error', raw: 'NO_IMAGE' });
    // A turn that also made calls is no tool-call finish either: only STOP is.
    expect(geminiFinish('NO_IMAGE', { madeCalls: true }).unified).toBe('error');
    // Written in another protocol, the withheld image ends as that protocol's content filter.
    const withheld = geminiFinish('IMAGE_OTHER', { madeCalls: false });
    expect([stopReasonOf(withheld), openAiFinishReasons[withheld.unified], responseEndOf(withheld)]).toEqual([
      'refusal',
      'content_filter',
      { status: 'incomplete', reason: 'content_filter' },
    ]);
  });
});

describe('a finish written in another protocol', () => {
  const written = (reason: FinishReason) => ({
    anthropic: stopReasonOf(reason),
    openai: openAiFinishReasons[reason.unified],
    gemini: geminiFinishReasons[reason.unified],
    responses: responseEndOf(reason),
  });

  it("writes Gemini's MAX_TOKENS as max_tokens, length and an incomplete Response", () => {
    expect(written(geminiFinish('MAX_TOKENS', { madeCalls: false }))).toEqual({
      anthropic: 'max_tokens',
      openai: 'length',
      gemini: 'MAX_TOKENS',
      responses: { status: 'incomplete', reason: 'max_output_tokens' },
    });
  });

  it("writes OpenAI's tool_calls as tool_use and as Gemini's STOP", () => {
    expect(written(openAiFinish('tool_calls'))).toEqual({
      anthropic: 'tool_use',
      openai: 'tool_calls',
      gemini: 'STOP',
      responses: { status: 'completed' },
    });
  });

  it("writes Anthropic's refusal as content_filter, SAFETY and a Response incomplete for its content filter", () => {
    expect(written(anthropicFinish('refusal'))).toEqual({
      anthropic: 'refusal',
      openai: 'content_filter',
      gemini: 'SAFETY',
      responses: { status: 'incomplete', reason: 'content_filter' },
    });
  });

  it('writes an error or an unknown finish as a plain stop where the protocol has no such reason', () => {
    expect(written(geminiFinish('MALFORMED_FUNCTION_CALL', { madeCalls: false }))).toEqual({
      anthropic: 'end_turn',
      openai: 'stop',
      gemini: 'OTHER',
      responses: { status: 'completed' },
    });
    expect(responseEndOf(undefined)).toEqual({ status: 'completed' });
  });

  it("keeps Anthropic's stop_sequence only when Anthropic said it", () => {
    expect(stopReasonOf(anthropicFinish('stop_sequence'))).toBe('stop_sequence');
    expect(stopReasonOf(openAiFinish('stop'))).toBe('end_turn');
  });
});

describe('token usage across protocols', () => {
  it("counts Gemini's tool-use prompt as input and its thoughts as output, absent counts as zero", () => {
    expect(
      usageFromMetadata({
        promptTokenCount: 10,
        toolUsePromptTokenCount: 4,
        candidatesTokenCount: 7,
        thoughtsTokenCount: 20,
        cachedContentTokenCount: 3,
        totalTokenCount: 41,
      }),
    ).toEqual({ inputTokens: 14, outputTokens: 27, cachedInputTokens: 3, reasoningTokens: 20 });
    expect(usageFromMetadata({})).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it("reads a Response's usage, and none when the Response has none", () => {
    expect(responsesUsageOf({ input_tokens: 36, output_tokens: 87 })).toEqual({
      inputTokens: 36,
      outputTokens: 87,
    });
    expect(responsesUsageOf({ output_tokens: 5 })).toEqual({ inputTokens: 0, outputTokens: 5 });
    expect(responsesUsageOf(null)).toBeUndefined();
    expect(responsesUsageOf(undefined)).toBeUndefined();
  });

  it('writes the same usage in each protocol, with the totals they carry', () => {
    const usage = { inputTokens: 12, outputTokens: 30 };
    expect(openAiUsage(usage)).toEqual({ prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 });
    expect(anthropicUsage(usage)).toEqual({ input_tokens: 12, output_tokens: 30 });
    expect(wireUsageMetadata(usage)).toEqual({ promptTokenCount: 12, candidatesTokenCount: 30, totalTokenCount: 42 });
    expect(wireResponsesUsage(usage)).toEqual({
      input_tokens: 12,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 42,
    });
  });

  it('writes no usage as zeros for Anthropic, whose Message always has it, and as nothing for Gemini', () => {
    expect(anthropicUsage(undefined)).toEqual({ input_tokens: 0, output_tokens: 0 });
    expect(wireUsageMetadata(undefined)).toBeUndefined();
  });
});

describe("what an Anthropic stream's deltas add to the answer", () => {
  it('adds text and tool input fragments, and nothing for thinking or signatures', () => {
    expect(deltaOutput({ type: 'text_delta', text: 'Hello' })).toBe('Hello');
    expect(deltaOutput({ type: 'input_json_delta', partial_json: '{"city":' })).toBe('{"city":');
    expect(deltaOutput({ type: 'thinking_delta', thinking: 'let me see' })).toBe('');
    expect(deltaOutput({ type: 'signature_delta', signature: 'EqQBCgIYAhIM' })).toBe('');
  });
});

describe('a collected answer as an Anthropic Message', () => {
  const finish = (finishReason: FinishReason) => ({
    type: 'finish' as const,
    finishReason,
    usage: { inputTokens: 9, outputTokens: 4 },
  });

  it('writes the text, then one tool_use block per call with its arguments as an object, and the tool_use stop', () => {
    const message = messageOf('claude-model', {
      text: 'Checking.',
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      finish: finish(openAiFinish('tool_calls')),
      alternatives: [],
    });
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_[0-9a-f]{24}$/),
      type: 'message',
      role: 'assistant',
      model: 'claude-model',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 9, output_tokens: 4 },
    });
  });

  it('leaves out an empty text beside calls, keeps it when there is nothing else, and names a matched stop sequence', () => {
    const callsOnly = messageOf('m', {
      text: '',
      toolCalls: [{ id: 'c', name: 'f', arguments: 'not json' }],
      finish: undefined,
      alternatives: [],
    });
    expect(callsOnly.content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input: {} }]);
    expect(callsOnly.stop_reason).toBe('end_turn');
    expect(callsOnly.usage).toEqual({ input_tokens: 0, output_tokens: 0 });

    const stopped = messageOf('m', {
      text: '',
      toolCalls: [],
      finish: finish({ unified: 'stop', raw: 'stop_sequence', stopSequence: '###' }),
      alternatives: [],
    });
    expect(stopped.content).toEqual([{ type: 'text', text: '' }]);
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: '###' });
  });
});
