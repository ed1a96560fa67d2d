import { Type, type Static, type TSchema } from 'typebox';
import { wholeTokens, type FinishReason, type TokenUsage } from '../../domain/chat.ts';
import { wireCheck } from '../wire-check.ts';
import {
  functionDefinitionFields,
  InputAudioPart,
  RefusalPart,
  JsonObjectFormat,
  jsonSchemaFormatFields,
  ProviderRouting,
  TextFormat,
  toolChoiceWords,
} from './chat-completions.ts';
import { openTaggedUnion } from '../tagged-union.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const InputTextPart = Type.Object({ type: Type.Literal('input_text'), text: Type.String() });
export const OutputTextPart = Type.Object({ type: Type.Literal('output_text'), text: Type.String() });
export const isResponsesTextPart = wireCheck(Type.Union([InputTextPart, OutputTextPart]));
export const InputImagePart = Type.Object({
  type: Type.Literal('input_image'),
  image_url: Type.Optional(Nullable(Type.String({ description: 'An http(s) URL or a data: URL' }))),
  file_id: Type.Optional(Nullable(Type.String())),
  detail: Type.Optional(Type.String({ description: 'auto, low or high' })),
});
export const isInputImagePart = wireCheck(InputImagePart);
const InputFilePart = Type.Object({
  type: Type.Literal('input_file'),
  file_data: Type.Optional(Type.String()),
  file_id: Type.Optional(Nullable(Type.String())),
  file_url: Type.Optional(Type.String()),
  filename: Type.Optional(Type.String()),
});
/** One part of an input message's content (or of a function call's output). */
export const ResponsesContentPart = openTaggedUnion(
  [InputTextPart, OutputTextPart, InputImagePart, InputFilePart, InputAudioPart, RefusalPart],
  { description: 'A content part' },
);
export type ResponsesContentPart = Static<typeof ResponsesContentPart>;

/** A message item: `type: "message"`, or left out. */
export const ResponsesMessageItem = Type.Object({
  type: Type.Optional(Type.Literal('message')),
  role: Type.String({ minLength: 1, description: 'user, assistant, system or developer' }),
  content: Type.Union([Type.String(), Type.Array(ResponsesContentPart)]),
});
export type ResponsesMessageItem = Static<typeof ResponsesMessageItem>;
export const isResponsesMessageItem = wireCheck(ResponsesMessageItem);
export const FunctionCallItem = Type.Object({
  type: Type.Literal('function_call'),
  call_id: Type.String(),
  name: Type.String(),
  arguments: Type.String({ description: 'JSON text' }),
});
export const isFunctionCallItem = wireCheck(FunctionCallItem);
export const FunctionCallOutputItem = Type.Object({
  type: Type.Literal('function_call_output'),
  call_id: Type.String(),
  output: Type.Union([Type.String(), Type.Array(ResponsesContentPart)]),
});
export const isFunctionCallOutputItem = wireCheck(FunctionCallOutputItem);

/** One item of the input: a message, a function call and its output, or another kind (reasoning, references...). */
export const ResponsesInputItem = openTaggedUnion([ResponsesMessageItem, FunctionCallItem, FunctionCallOutputItem], {
  description: 'An input item',
  untagged: ResponsesMessageItem,
});
export type ResponsesInputItem = Static<typeof ResponsesInputItem>;

/** An earlier item named by its id instead of sent again (a client keeping state with `store`). */
export const ItemReference = Type.Object({ type: Type.Literal('item_reference'), id: Type.String() });
export const isItemReference = wireCheck(ItemReference);

/** A function tool, its definition's fields written on the tool itself (Chat nests them under `function`). */
export const ResponsesFunctionTool = Type.Object({ type: Type.Literal('function'), ...functionDefinitionFields });
export const isResponsesFunctionTool = wireCheck(ResponsesFunctionTool);
export const ResponsesTool = openTaggedUnion([ResponsesFunctionTool], {
  description: 'A tool: a function, or one of the built-in tools',
});
export type ResponsesTool = Static<typeof ResponsesTool>;

export const ResponsesNamedToolChoice = Type.Object({ type: Type.Literal('function'), name: Type.String() });
export const isResponsesNamedToolChoice = wireCheck(ResponsesNamedToolChoice);
export const ResponsesToolChoice = Type.Union([
  ...toolChoiceWords,
  openTaggedUnion([ResponsesNamedToolChoice], { description: 'A named tool' }),
]);
export type ResponsesToolChoice = Static<typeof ResponsesToolChoice>;

/** A JSON schema answer format, the schema's fields on the format itself. */
export const ResponsesJsonSchemaFormat = Type.Object({ type: Type.Literal('json_schema'), ...jsonSchemaFormatFields });
export const isResponsesJsonSchemaFormat = wireCheck(ResponsesJsonSchemaFormat);
export const ResponsesTextSettings = Type.Object({
  format: Type.Optional(
    openTaggedUnion([TextFormat, JsonObjectFormat, ResponsesJsonSchemaFormat], { description: 'The answer format' }),
  ),
  verbosity: Type.Optional(Nullable(Type.String({ description: 'low, medium or high' }))),
});
export type ResponsesTextSettings = Static<typeof ResponsesTextSettings>;

/** A Responses API request as clients send it; unnamed fields are kept and forwarded. */
export const ResponsesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    input: Type.Union([Type.String({ minLength: 1 }), Type.Array(ResponsesInputItem, { minItems: 1 })]),
    instructions: Type.Optional(Type.String()),
    stream: Type.Optional(Type.Boolean()),
    max_output_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    tools: Type.Optional(Type.Array(ResponsesTool)),
    tool_choice: Type.Optional(ResponsesToolChoice),
    parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
    text: Type.Optional(ResponsesTextSettings),
    metadata: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
    provider: Type.Optional(ProviderRouting),
    store: Type.Optional(Nullable(Type.Boolean())),
    reasoning: Type.Optional(
      Nullable(
        Type.Object({
          effort: Type.Optional(Nullable(Type.String())),
          summary: Type.Optional(Nullable(Type.String())),
        }),
      ),
    ),
    include: Type.Optional(Nullable(Type.Array(Type.String()))),
    previous_response_id: Type.Optional(Nullable(Type.String())),
    conversation: Type.Optional(
      Nullable(Type.Union([Type.String(), Type.Object({ id: Type.String() }, { additionalProperties: true })])),
    ),
    prompt: Type.Optional(Nullable(Type.Object({ id: Type.String() }, { additionalProperties: true }))),
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
  return usage
    ? { inputTokens: wholeTokens(usage.input_tokens), outputTokens: wholeTokens(usage.output_tokens) }
    : undefined;
}

/** The protocol always writes both details: 0 where the provider did not tell the parts apart. */
export function wireResponsesUsage(usage: TokenUsage) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** How a Response ends: `completed`, or `incomplete` with the protocol's reason. */
export type ResponseEnd =
  | { status: 'completed' }
  | { status: 'incomplete'; reason: 'max_output_tokens' | 'content_filter' };

/** A Response's end for a canonical finish: one cut by the output limit or by a content filter is `incomplete`. */
export function responseEndOf(reason: FinishReason | undefined): ResponseEnd {
  if (reason?.unified === 'length') return { status: 'incomplete', reason: 'max_output_tokens' };
  if (reason?.unified === 'content-filter') return { status: 'incomplete', reason: 'content_filter' };
  return { status: 'completed' };
}

/**
 * Responses fields that make OpenAI itself read input it keeps, which the gateway is not sent: an earlier response,
 * a conversation, a stored prompt.
 */
export const storedInputResponsesFields = ['previous_response_id', 'conversation', 'prompt'] as const;

/**
 * The built-in tools that read what they retrieve into the model's input (billed so): web search (`web_search`,
 * `web_search_preview` and their dated versions), search in the client's vector stores (`file_search`), and
 * remote MCP servers (`mcp`), whose tools' answers the model reads.
 */
const isRetrievalTool = wireCheck(
  Type.Object({
    type: Type.Union([Type.Literal('file_search'), Type.Literal('mcp'), Type.String({ pattern: '^web_search' })]),
  }),
);

/**
 * Whether a Responses request, as it is forwarded, makes its upstream read input the request only names, which
 * no prompt bound can count: input the server keeps (an earlier response, a conversation, a stored prompt), or
 * what a retrieval tool finds. What the input items carry is their decoder's to say (DecodedChat.uncountedInput).
 */
export function responsesReadsServerInput(body: Readonly<Record<string, unknown>>): boolean {
  if (storedInputResponsesFields.some((field) => body[field] !== undefined && body[field] !== null)) return true;
  return Array.isArray(body.tools) && body.tools.some((tool: unknown) => isRetrievalTool(tool));
}

/**
 * Responses fields only OpenAI itself keeps (stored responses, conversations and prompts, its reasoning); other
 * servers do not take them.
 */
export const openAiOnlyResponsesFields = ['store', 'reasoning', 'include', ...storedInputResponsesFields] as const;
