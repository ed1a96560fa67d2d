import { Type, type Static } from 'typebox';
import type { FinishReason, TokenUsage } from '../../domain/chat.ts';
import { objectWithOneOf, wireCheck } from '../wire-check.ts';

const Nullable = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) => Type.Union([schema, Type.Null()]);

/** A chat-completions request as clients send it. The protocol is forwarded as given, so unnamed fields are kept. */
export const ChatCompletionsRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    messages: Type.Array(Type.Object({ role: Type.String({ minLength: 1 }), content: Type.Optional(Type.Unknown()) }), {
      minItems: 1,
    }),
    stream: Type.Optional(Type.Boolean()),
    stream_options: Type.Optional(Type.Union([Type.Object({}), Type.Null()])),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 16 }), Type.Null()])),
    seed: Type.Optional(Type.Integer()),
    tools: Type.Optional(Type.Array(Type.Object({}))),
    tool_choice: Type.Optional(Type.Union([Type.String(), Type.Object({})])),
    response_format: Type.Optional(Type.Object({})),
    provider: Type.Optional(Type.Object({})),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: 128 })),
  },
  { additionalProperties: true },
);
export type ChatCompletionsRequest = Static<typeof ChatCompletionsRequest>;

/** Token counts as the protocol reports them; compatible servers leave either count out at times. */
export const ChatUsage = Type.Object({
  prompt_tokens: Type.Optional(Type.Number()),
  completion_tokens: Type.Optional(Type.Number()),
});
export type ChatUsage = Static<typeof ChatUsage>;

const ToolCallFragment = Type.Object({
  index: Type.Optional(Type.Integer()),
  id: Type.Optional(Type.String()),
  function: Type.Optional(Type.Object({ name: Type.Optional(Type.String()), arguments: Type.Optional(Type.String()) })),
});

const ChunkChoice = Type.Object({
  index: Type.Optional(Type.Integer({ minimum: 0 })),
  delta: Type.Optional(
    Type.Object({
      content: Type.Optional(Nullable(Type.String())),
      tool_calls: Type.Optional(Nullable(Type.Array(ToolCallFragment))),
    }),
  ),
  finish_reason: Type.Optional(Nullable(Type.String())),
});

/** An error body, as the protocol answers with an error status and as compatible servers send mid-stream. */
export const OpenAiError = Type.Object({
  error: Type.Object({
    message: Type.String(),
    type: Type.Optional(Type.String()),
    param: Type.Optional(Nullable(Type.String())),
    code: Type.Optional(Nullable(Type.String())),
  }),
});
export type OpenAiError = Static<typeof OpenAiError>;

/** One `data:` event of a chat-completions stream (every field the gateway reads; providers add more). */
export const ChatCompletionChunk = objectWithOneOf(
  {
    id: Type.Optional(Type.String()),
    created: Type.Optional(Type.Number()),
    model: Type.Optional(Type.String()),
    choices: Type.Optional(Type.Array(ChunkChoice)),
    usage: Type.Optional(Nullable(ChatUsage)),
    error: Type.Optional(Type.Object({ message: Type.Optional(Type.String()) })),
  },
  ['choices', 'error'],
);
export type ChatCompletionChunk = Static<typeof ChatCompletionChunk>;
export const isChatCompletionChunk = wireCheck(ChatCompletionChunk);

/** A whole (non-streamed) chat completion. */
export const ChatCompletion = Type.Object({
  choices: Type.Array(
    Type.Object({
      message: Type.Object({
        content: Type.Optional(Nullable(Type.String())),
        tool_calls: Type.Optional(
          Nullable(
            Type.Array(
              Type.Object({
                id: Type.String(),
                function: Type.Object({ name: Type.String(), arguments: Type.String() }),
              }),
            ),
          ),
        ),
      }),
      finish_reason: Type.Optional(Nullable(Type.String())),
    }),
  ),
  usage: Type.Optional(Nullable(ChatUsage)),
});
export type ChatCompletion = Static<typeof ChatCompletion>;
export const isChatCompletion = wireCheck(ChatCompletion);

/** The stream's terminator, a `data:` line that is not JSON. */
export const streamTerminator = '[DONE]';

const finishReasons: Readonly<Record<string, FinishReason['unified']>> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  content_filter: 'content-filter',
};

export const wireFinishReasons: Readonly<Record<FinishReason['unified'], string>> = {
  stop: 'stop',
  length: 'length',
  'tool-calls': 'tool_calls',
  'content-filter': 'content_filter',
  error: 'stop',
  other: 'stop',
};

export function finishReasonOf(raw: string): FinishReason {
  return { unified: finishReasons[raw] ?? 'other', raw };
}

/** Usage as reported; an object without either count reports nothing (the gateway then counts). */
export function usageOf(usage: ChatUsage | null | undefined): TokenUsage | undefined {
  if (!usage || (usage.prompt_tokens === undefined && usage.completion_tokens === undefined)) return undefined;
  return { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 };
}

export function wireUsage(usage: TokenUsage): Required<ChatUsage> & { total_tokens: number } {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}
