import { Type, type Static } from 'typebox';
import type { FinishReason, TokenUsage } from '../../domain/chat.ts';
import { wireCheck } from '../wire-check.ts';

/** A Responses API request as clients send it; unnamed fields are kept and forwarded. */
export const ResponsesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    input: Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.Object({}), { minItems: 1 })]),
    instructions: Type.Optional(Type.String()),
    stream: Type.Optional(Type.Boolean()),
    max_output_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    tools: Type.Optional(Type.Array(Type.Object({}))),
    tool_choice: Type.Optional(Type.Union([Type.String(), Type.Object({})])),
    text: Type.Optional(Type.Object({})),
    metadata: Type.Optional(Type.Object({})),
    provider: Type.Optional(Type.Object({})),
    store: Type.Optional(Type.Boolean()),
    reasoning: Type.Optional(Type.Object({})),
    include: Type.Optional(Type.Array(Type.String())),
    previous_response_id: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type ResponsesRequest = Static<typeof ResponsesRequest>;

export const ResponsesUsage = Type.Object({
  input_tokens: Type.Optional(Type.Number()),
  output_tokens: Type.Optional(Type.Number()),
});
export type ResponsesUsage = Static<typeof ResponsesUsage>;

/** A whole (non-streamed) Response object. */
export const ResponseObject = Type.Object({
  object: Type.Literal('response'),
  status: Type.Optional(Type.String()),
  output: Type.Array(Type.Object({ type: Type.String() })),
  usage: Type.Optional(Type.Union([ResponsesUsage, Type.Null()])),
});
export type ResponseObject = Static<typeof ResponseObject>;
export const isResponseObject = wireCheck(ResponseObject);

/** One event of a Responses stream: every event names its type; the terminal ones carry the Response. */
export const ResponsesStreamEvent = Type.Object({
  type: Type.String(),
  sequence_number: Type.Optional(Type.Integer()),
  output_index: Type.Optional(Type.Integer({ minimum: 0 })),
  item: Type.Optional(Type.Object({ type: Type.String() })),
  delta: Type.Optional(Type.String()),
  response: Type.Optional(
    Type.Object({
      id: Type.Optional(Type.String()),
      created_at: Type.Optional(Type.Number()),
      model: Type.Optional(Type.String()),
      usage: Type.Optional(Type.Union([ResponsesUsage, Type.Null()])),
    }),
  ),
});
export type ResponsesStreamEvent = Static<typeof ResponsesStreamEvent>;
export const isResponsesStreamEvent = wireCheck(ResponsesStreamEvent);

/** Event types that end a Responses stream: the answer is whole. */
export const terminalResponsesEvents: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete']);
/** Event types that report a failure inside the stream. */
export const failedResponsesEvents: ReadonlySet<string> = new Set(['error', 'response.failed']);

export function responsesUsageOf(usage: ResponsesUsage | null | undefined): TokenUsage | undefined {
  return usage ? { inputTokens: usage.input_tokens ?? 0, outputTokens: usage.output_tokens ?? 0 } : undefined;
}

export function wireResponsesUsage(usage: TokenUsage) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** A Response's status for a canonical finish: one cut by the output limit is `incomplete`. */
export function responseStatusOf(reason: FinishReason | undefined): 'completed' | 'incomplete' {
  return reason?.unified === 'length' ? 'incomplete' : 'completed';
}

/** Responses fields only OpenAI itself keeps (stored responses, its reasoning); other servers do not take them. */
export const openAiOnlyResponsesFields = ['store', 'reasoning', 'include', 'previous_response_id'] as const;
