import { Type, type Static } from '@fastify/type-provider-typebox';
import {
  toolDefinition,
  type ChatRequest,
  type ChatStreamEvent,
  type ResponseFormat,
  type ToolChoice,
} from '../../domain/chat.ts';
import type { TextChunk } from './answer-schemas.ts';

/** A JSON object of any fields (a JSON Schema, an options object). */
const JsonObject = Type.Record(Type.String(), Type.Unknown());

const Message = Type.Object(
  {
    role: Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

/** Parameters that mirror one protocol's field take that protocol's shape: OpenAI chat's for tools and formats, Anthropic's for thinking. */
const FunctionTool = Type.Object({
  type: Type.Literal('function'),
  function: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 128 }),
    description: Type.Optional(Type.String()),
    parameters: Type.Optional(JsonObject),
    strict: Type.Optional(Type.Boolean()),
  }),
});

const ToolChoiceField = Type.Union([
  Type.Literal('auto'),
  Type.Literal('none'),
  Type.Literal('required'),
  Type.Object({
    type: Type.Literal('function'),
    function: Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) }),
  }),
]);

const ResponseFormatField = Type.Union([
  Type.Object({ type: Type.Literal('text') }),
  Type.Object({ type: Type.Literal('json_object') }),
  Type.Object({
    type: Type.Literal('json_schema'),
    json_schema: Type.Object({
      name: Type.String({ minLength: 1, maxLength: 64 }),
      description: Type.Optional(Type.String()),
      schema: Type.Optional(JsonObject),
      strict: Type.Optional(Type.Boolean()),
    }),
  }),
]);

const ThinkingField = Type.Union([
  Type.Object({ type: Type.Literal('enabled'), budget_tokens: Type.Integer({ minimum: 1 }) }),
  Type.Object({ type: Type.Literal('disabled') }),
]);

/** Model-dependent fields forwarded when the model accepts them (spec: Native: text completion). */
const optionalFields = {
  topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 16 })])),
  tools: Type.Optional(Type.Array(FunctionTool, { maxItems: 128 })),
  toolChoice: Type.Optional(ToolChoiceField),
  responseFormat: Type.Optional(ResponseFormatField),
  seed: Type.Optional(Type.Integer()),
  presencePenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  frequencyPenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  topK: Type.Optional(Type.Integer({ minimum: 0 })),
  repetitionPenalty: Type.Optional(Type.Number({ minimum: 0 })),
  minP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  topA: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  logprobs: Type.Optional(Type.Boolean()),
  topLogprobs: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
  logitBias: Type.Optional(Type.Record(Type.String(), Type.Number({ minimum: -100, maximum: 100 }))),
  structuredOutputs: Type.Optional(Type.Boolean()),
  parallelToolCalls: Type.Optional(Type.Boolean()),
  includeReasoning: Type.Optional(Type.Boolean()),
  reasoningEffort: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
  webSearchOptions: Type.Optional(JsonObject),
  verbosity: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
  thinking: Type.Optional(ThinkingField),
};

export const optionalFieldNames = Object.keys(optionalFields) as Array<keyof typeof optionalFields>;

export const TextCompletionBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    messages: Type.Array(Message, { minItems: 1 }),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    maxTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    ...optionalFields,
  },
  { additionalProperties: false },
);

export type TextCompletionBody = Static<typeof TextCompletionBody>;

function toolChoiceOf(choice: Static<typeof ToolChoiceField>): ToolChoice {
  return typeof choice === 'string' ? choice : { name: choice.function.name };
}

function responseFormatOf(format: Static<typeof ResponseFormatField>): ResponseFormat {
  if (format.type !== 'json_schema') return { type: format.type };
  const { name, description, schema, strict } = format.json_schema;
  return {
    type: 'json_schema',
    name,
    ...(description !== undefined ? { description } : {}),
    ...(schema !== undefined ? { schema } : {}),
    ...(strict !== undefined ? { strict } : {}),
  };
}

/** The request's generation parameters in the canonical model; the shapes were checked by the body schema. */
export function decodeParameters(body: TextCompletionBody): Omit<Partial<ChatRequest>, 'upstreamModel' | 'messages'> {
  const { tools, toolChoice, responseFormat, thinking, stop, ...plain } = body;
  return {
    maxTokens: plain.maxTokens,
    temperature: plain.temperature,
    topP: plain.topP,
    seed: plain.seed,
    topK: plain.topK,
    presencePenalty: plain.presencePenalty,
    frequencyPenalty: plain.frequencyPenalty,
    repetitionPenalty: plain.repetitionPenalty,
    minP: plain.minP,
    topA: plain.topA,
    logprobs: plain.logprobs,
    topLogprobs: plain.topLogprobs,
    logitBias: plain.logitBias,
    structuredOutputs: plain.structuredOutputs,
    parallelToolCalls: plain.parallelToolCalls,
    includeReasoning: plain.includeReasoning,
    reasoningEffort: plain.reasoningEffort,
    webSearchOptions: plain.webSearchOptions,
    verbosity: plain.verbosity,
    stop: typeof stop === 'string' ? [stop] : stop,
    tools: tools?.map((tool) => toolDefinition(tool.function)),
    toolChoice: toolChoice && toolChoiceOf(toolChoice),
    responseFormat: responseFormat && responseFormatOf(responseFormat),
    thinking:
      thinking &&
      (thinking.type === 'enabled' ? { type: 'enabled', budgetTokens: thinking.budget_tokens } : { type: 'disabled' }),
  };
}

/**
 * The spec's TextChunk for a canonical event. Tool calls, which the spec's chunk has no field for, travel in
 * `toolCalls` as OpenAI's streamed fragments: the first of a call with its id and name, then argument text;
 * log probabilities in `logprobs`, in a chunk of their own before the output they describe.
 */
export function textChunkOf(event: ChatStreamEvent): TextChunk {
  switch (event.type) {
    case 'text-delta':
      return { delta: event.text };
    case 'tool-call-start':
      return {
        delta: '',
        toolCalls: [
          { index: event.index, id: event.id, type: 'function', function: { name: event.name, arguments: '' } },
        ],
      };
    case 'tool-call-delta':
      return { delta: '', toolCalls: [{ index: event.index, function: { arguments: event.arguments } }] };
    case 'logprobs':
      return {
        delta: '',
        logprobs: event.tokens.map(({ token, logprob, top }) => ({ token, logprob, topLogprobs: [...top] })),
      };
    // The native request asks for one completion, whose end is the `finish`.
    case 'choice-finish':
      return { delta: '' };
    case 'finish': {
      const usage = event.usage && {
        promptTokens: event.usage.inputTokens,
        completionTokens: event.usage.outputTokens,
        totalTokens: event.usage.inputTokens + event.usage.outputTokens,
      };
      return { delta: '', finishReason: event.finishReason.unified, ...(usage ? { usage } : {}) };
    }
  }
}
