import { describe, expect, it } from 'vitest';
import { streamUsageAfter, usageOf as anthropicUsage } from '../../src/protocols/anthropic/messages.ts';
import { usageOf as openAiUsage } from '../../src/protocols/openai/chat-completions.ts';

describe('usage maps', () => {
  it('count the cached part of an Anthropic prompt as input, whole and streamed', () => {
    expect(
      anthropicUsage({
        input_tokens: 10,
        cache_creation_input_tokens: 1_000,
        cache_read_input_tokens: 5_000,
        output_tokens: 7,
      }),
    ).toEqual({ inputTokens: 6_010, outputTokens: 7 });
    const started = streamUsageAfter(
      { inputTokens: 0, outputTokens: 0 },
      { input_tokens: 10, cache_read_input_tokens: 5_000, output_tokens: 1 },
    );
    expect(started).toEqual({ inputTokens: 5_010, outputTokens: 1 });
    expect(streamUsageAfter(started, { output_tokens: 42 })).toEqual({ inputTokens: 5_010, outputTokens: 42 });
  });

  it('read a usage object without counts as no report, so the gateway counts instead of charging nothing', () => {
    expect(openAiUsage({})).toBeUndefined();
    expect(openAiUsage(null)).toBeUndefined();
    expect(openAiUsage({ prompt_tokens: 3 })).toEqual({ inputTokens: 3, outputTokens: 0 });
    expect(anthropicUsage({})).toBeUndefined();
  });
});
