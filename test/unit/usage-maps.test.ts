import { describe, expect, it } from 'vitest';
import {
  streamUsageAfter,
  usageOf as anthropicUsage,
  wireUsage as anthropicWireUsage,
} from '../../src/protocols/anthropic/messages.ts';
import { usageFromMetadata as geminiUsage } from '../../src/protocols/gemini/generate-content.ts';
import { usageOf as openAiUsage } from '../../src/protocols/openai/chat-completions.ts';
import { responsesUsageOf as responsesUsage } from '../../src/protocols/openai/responses.ts';

describe('usage maps', () => {
  it('count the cached part of an Anthropic prompt as input, whole and streamed', () => {
    expect(
      anthropicUsage({
        input_tokens: 10,
        cache_creation_input_tokens: 1_000,
        cache_read_input_tokens: 5_000,
        output_tokens: 7,
      }),
    ).toEqual({ inputTokens: 6_010, outputTokens: 7, cachedInputTokens: 5_000 });
    const started = streamUsageAfter({}, { input_tokens: 10, cache_read_input_tokens: 5_000, output_tokens: 1 });
    expect(anthropicUsage(started)).toEqual({ inputTokens: 5_010, outputTokens: 1, cachedInputTokens: 5_000 });
    expect(anthropicUsage(streamUsageAfter(started, { output_tokens: 42 }))).toEqual({
      inputTokens: 5_010,
      outputTokens: 42,
      cachedInputTokens: 5_000,
    });
    // message_delta's input counts are nullable: null repeats nothing, so the cached 5,000 still count.
    const repeated = streamUsageAfter(started, {
      input_tokens: 10,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
      output_tokens: 50,
    });
    expect(anthropicUsage(repeated)).toEqual({ inputTokens: 5_010, outputTokens: 50, cachedInputTokens: 5_000 });
  });

  it("write a prompt's cache reads apart from Anthropic's input_tokens, as the protocol counts them", () => {
    expect(anthropicWireUsage({ inputTokens: 1_002, outputTokens: 3, cachedInputTokens: 1_000 })).toEqual({
      input_tokens: 2,
      output_tokens: 3,
      cache_read_input_tokens: 1_000,
    });
    expect(anthropicWireUsage({ inputTokens: 5, outputTokens: 3 })).toEqual({ input_tokens: 5, output_tokens: 3 });
  });

  it('read a usage object without counts as no report, so the gateway counts instead of charging nothing', () => {
    expect(openAiUsage({})).toBeUndefined();
    expect(openAiUsage(null)).toBeUndefined();
    expect(openAiUsage({ prompt_tokens: 3 })).toEqual({ inputTokens: 3, outputTokens: 0 });
    expect(anthropicUsage({})).toBeUndefined();
  });

  it('make each reported part whole before adding them: a negative part takes nothing away, a huge one is not none', () => {
    expect(anthropicUsage({ input_tokens: 4_000, cache_read_input_tokens: -4_000, output_tokens: 500 })).toEqual({
      inputTokens: 4_000,
      outputTokens: 500,
      cachedInputTokens: 0,
    });
    // JSON's 1e400 reads as Infinity; two counts of 1e308 add up to it.
    expect(anthropicUsage({ input_tokens: 10, output_tokens: Number.POSITIVE_INFINITY })).toEqual({
      inputTokens: 10,
      outputTokens: Number.MAX_SAFE_INTEGER,
    });
    expect(
      geminiUsage({ promptTokenCount: 3, candidatesTokenCount: 1e308, thoughtsTokenCount: 1e308, totalTokenCount: 3 }),
    ).toEqual({ inputTokens: 3, outputTokens: Number.MAX_SAFE_INTEGER, reasoningTokens: Number.MAX_SAFE_INTEGER });
    expect(openAiUsage({ prompt_tokens: -5, completion_tokens: 3.2 })).toEqual({ inputTokens: 0, outputTokens: 4 });
    expect(responsesUsage({ input_tokens: JSON.parse('1e400'), output_tokens: -1 })).toEqual({
      inputTokens: Number.MAX_SAFE_INTEGER,
      outputTokens: 0,
    });
    expect(geminiUsage({ promptTokenCount: 3.2, toolUsePromptTokenCount: -9, candidatesTokenCount: 2 })).toEqual({
      inputTokens: 4,
      outputTokens: 2,
    });
  });
});
