import { Type, type Static } from 'typebox';
import type { FinishReason, TokenUsage } from '../../domain/chat.ts';
import { wireCheck } from '../wire-check.ts';

/** A messages request as clients send it; unnamed fields are kept and forwarded. */
export const MessagesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    max_tokens: Type.Integer({ minimum: 1 }),
    messages: Type.Array(Type.Object({ role: Type.String({ minLength: 1 }), content: Type.Unknown() }), {
      minItems: 1,
    }),
    system: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Object({}))])),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    stream: Type.Optional(Type.Boolean()),
    tools: Type.Optional(Type.Array(Type.Object({}))),
    tool_choice: Type.Optional(Type.Object({})),
    stop_sequences: Type.Optional(Type.Array(Type.String(), { maxItems: 16 })),
    metadata: Type.Optional(Type.Object({})),
    thinking: Type.Optional(Type.Object({})),
    output_config: Type.Optional(Type.Object({ format: Type.Optional(Type.Object({})) })),
    /** The older place of `output_config.format`, which the protocol still takes. */
    output_format: Type.Optional(Type.Object({})),
  },
  { additionalProperties: true },
);
export type MessagesRequest = Static<typeof MessagesRequest>;

/** A count_tokens request: the prompt of a messages request, without what only shapes the answer. */
export const CountTokensRequest = Type.Object(
  Type.Pick(MessagesRequest, ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking']).properties,
  { additionalProperties: true },
);
export type CountTokensRequest = Static<typeof CountTokensRequest>;

export const MessageTokensCount = Type.Object(
  { input_tokens: Type.Integer({ minimum: 0 }) },
  { description: "The prompt's input tokens" },
);

export const MessagesUsage = Type.Object({
  input_tokens: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  output_tokens: Type.Optional(Type.Number()),
  cache_creation_input_tokens: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  cache_read_input_tokens: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
});
export type MessagesUsage = Static<typeof MessagesUsage>;

/** A whole (non-streamed) Message. */
export const Message = Type.Object({
  type: Type.Literal('message'),
  content: Type.Array(Type.Object({ type: Type.String() })),
  stop_reason: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  usage: MessagesUsage,
});
export type Message = Static<typeof Message>;
export const isMessage = wireCheck(Message);

/** One event of a messages stream: every event names its type; the fields read are those of the types that carry them. */
export const MessagesStreamEvent = Type.Object({
  type: Type.String(),
  index: Type.Optional(Type.Integer({ minimum: 0 })),
  content_block: Type.Optional(
    Type.Object({ type: Type.String(), id: Type.Optional(Type.String()), name: Type.Optional(Type.String()) }),
  ),
  message: Type.Optional(Type.Object({ usage: Type.Optional(MessagesUsage) })),
  delta: Type.Optional(
    Type.Object({
      type: Type.Optional(Type.String()),
      text: Type.Optional(Type.String()),
      partial_json: Type.Optional(Type.String()),
      stop_reason: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    }),
  ),
  usage: Type.Optional(MessagesUsage),
  error: Type.Optional(Type.Object({ type: Type.Optional(Type.String()), message: Type.Optional(Type.String()) })),
});
export type MessagesStreamEvent = Static<typeof MessagesStreamEvent>;
export const isMessagesStreamEvent = wireCheck(MessagesStreamEvent);

/** The protocol's error body, with an error status and as the `error` event of a stream. */
export const AnthropicError = Type.Object({
  type: Type.Literal('error'),
  error: Type.Object({ type: Type.String(), message: Type.String() }),
});
export type AnthropicError = Static<typeof AnthropicError>;

/** An embeddings request of the beta surface's extension (text, or parts of several media). */
export const BetaEmbeddingsRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    input: Type.Union([Type.String(), Type.Array(Type.Unknown(), { minItems: 1 })]),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    encoding_format: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type BetaEmbeddingsRequest = Static<typeof BetaEmbeddingsRequest>;

const finishReasons: Readonly<Record<string, FinishReason['unified']>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
};

export function finishReasonOf(raw: string): FinishReason {
  return { unified: finishReasons[raw] ?? 'other', raw };
}

/** A canonical finish as the protocol's stop_reason; a stop at a stop sequence keeps its name. */
export function stopReasonOf(reason: FinishReason): string {
  if (reason.raw === 'stop_sequence') return 'stop_sequence';
  switch (reason.unified) {
    case 'length':
      return 'max_tokens';
    case 'tool-calls':
      return 'tool_use';
    case 'content-filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/**
 * Usage as reported: prompt caching reports the cached part of the prompt apart from `input_tokens`, and it is
 * input all the same (charged at the input price). An object without any count reports nothing.
 */
export function usageOf(usage: MessagesUsage): TokenUsage | undefined {
  const counts = [usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens];
  if (counts.every((count) => count === undefined || count === null) && usage.output_tokens === undefined)
    return undefined;
  return {
    inputTokens: counts.reduce<number>((sum, count) => sum + (count ?? 0), 0),
    outputTokens: usage.output_tokens ?? 0,
  };
}

/**
 * A stream's running usage after one more report (message_start's, then message_delta's): counts the report
 * carries replace those before them; prompt caching's counts are input too.
 */
export function streamUsageAfter(current: TokenUsage, report: MessagesUsage): TokenUsage {
  const inputs = [report.input_tokens, report.cache_creation_input_tokens, report.cache_read_input_tokens].filter(
    (count): count is number => typeof count === 'number',
  );
  return {
    inputTokens: inputs.length > 0 ? inputs.reduce((sum, count) => sum + count, 0) : current.inputTokens,
    outputTokens: report.output_tokens ?? current.outputTokens,
  };
}

export const wireUsage = (usage: TokenUsage | undefined) => ({
  input_tokens: usage?.inputTokens ?? 0,
  output_tokens: usage?.outputTokens ?? 0,
});
