import { Type, type Static } from 'typebox';
import {
  logprobOf,
  usageDetails,
  wholeTokens,
  type FinishReason,
  type TokenChance,
  type TokenLogprob,
  type TokenUsage,
} from '../../domain/chat.ts';
import { objectWithOneOf, wireCheck } from '../wire-check.ts';
import { openTaggedUnion } from '../tagged-union.ts';
import { describesObject, findSchemaObject, isSchemaObject, type SchemaObject } from '../../domain/json-schema.ts';

const Nullable = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) => Type.Union([schema, Type.Null()]);

/** A JSON Schema, as tools' parameters and response formats carry one (passed on as given). */
export const JsonSchemaObject = Type.Record(Type.String(), Type.Unknown(), { description: 'A JSON Schema object' });

export const ChatTextPart = Type.Object({ type: Type.Literal('text'), text: Type.String() });
export type ChatTextPart = Static<typeof ChatTextPart>;
export const ChatImagePart = Type.Object({
  type: Type.Literal('image_url'),
  image_url: Type.Object({
    url: Type.String({ description: 'An http(s) URL or a data: URL' }),
    detail: Type.Optional(Type.String({ description: 'auto, low or high' })),
  }),
});
export type ChatImagePart = Static<typeof ChatImagePart>;
/** Audio, as Chat and Responses both write it. */
export const InputAudioPart = Type.Object({
  type: Type.Literal('input_audio'),
  input_audio: Type.Object({ data: Type.String({ description: 'Base64' }), format: Type.String() }),
});
const ChatFilePart = Type.Object({
  type: Type.Literal('file'),
  file: Type.Object({
    file_data: Type.Optional(Type.String()),
    file_id: Type.Optional(Type.String()),
    filename: Type.Optional(Type.String()),
  }),
});
/** An assistant's refusal, as Chat and Responses both write it. */
export const RefusalPart = Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() });

/** One part of a message's content. */
export const ChatContentPart = openTaggedUnion(
  [ChatTextPart, ChatImagePart, InputAudioPart, ChatFilePart, RefusalPart],
  { description: 'A content part' },
);
export type ChatContentPart = Static<typeof ChatContentPart>;
export const isChatTextPart = wireCheck(ChatTextPart);
export const isChatImagePart = wireCheck(ChatImagePart);
export const isRefusalPart = wireCheck(RefusalPart);

/** A function call an assistant message made. */
export const ChatFunctionCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String(), arguments: Type.String({ description: 'JSON text' }) }),
});
export type ChatFunctionCall = Static<typeof ChatFunctionCall>;
export const isChatFunctionCall = wireCheck(ChatFunctionCall);
const ChatToolCall = openTaggedUnion([ChatFunctionCall], { description: 'A tool call' });

/** A message of the conversation; fields of other roles and kinds are kept. */
export const ChatMessage = Type.Object(
  {
    role: Type.String({ minLength: 1, description: 'developer, system, user, assistant or tool' }),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(ChatContentPart), Type.Null()])),
    name: Type.Optional(Type.String()),
    tool_calls: Type.Optional(Nullable(Type.Array(ChatToolCall))),
    tool_call_id: Type.Optional(Type.String()),
    /** An assistant's refusal, in place of its content, as the API answered it and a client sends it back. */
    refusal: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: true },
);
export type ChatMessage = Static<typeof ChatMessage>;

/** A function tool's definition: Chat nests it under `function`, Responses writes its fields on the tool. */
export const functionDefinitionFields = {
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Nullable(Type.String())),
  parameters: Type.Optional(Nullable(JsonSchemaObject)),
  strict: Type.Optional(Nullable(Type.Boolean())),
};

export const ChatFunctionTool = Type.Object({
  type: Type.Literal('function'),
  function: Type.Object(functionDefinitionFields),
});
export type ChatFunctionTool = Static<typeof ChatFunctionTool>;
export const isChatFunctionTool = wireCheck(ChatFunctionTool);
export const ChatTool = openTaggedUnion([ChatFunctionTool], { description: 'A tool' });
export type ChatTool = Static<typeof ChatTool>;

/** The tool choices every protocol of the family names by a word (literals each, so a union of them reads flat). */
export const toolChoiceWords = [Type.Literal('none'), Type.Literal('auto'), Type.Literal('required')] as const;
export type ToolChoiceWord = Static<(typeof toolChoiceWords)[number]>;
export const ChatNamedToolChoice = Type.Object({
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String() }),
});
export const isChatNamedToolChoice = wireCheck(ChatNamedToolChoice);
export const ChatToolChoice = Type.Union([
  ...toolChoiceWords,
  openTaggedUnion([ChatNamedToolChoice], { description: 'A named tool' }),
]);
export type ChatToolChoice = Static<typeof ChatToolChoice>;

/** The answer formats; Chat nests a schema's fields under `json_schema`, Responses writes them on the format. */
export const jsonSchemaFormatFields = {
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  schema: Type.Optional(JsonSchemaObject),
  strict: Type.Optional(Nullable(Type.Boolean())),
};
export const TextFormat = Type.Object({ type: Type.Literal('text') });
export const JsonObjectFormat = Type.Object({ type: Type.Literal('json_object') });
export const isPlainFormat = wireCheck(Type.Union([TextFormat, JsonObjectFormat]));
export const ChatJsonSchemaFormat = Type.Object({
  type: Type.Literal('json_schema'),
  json_schema: Type.Object(jsonSchemaFormatFields),
});
export const isChatJsonSchemaFormat = wireCheck(ChatJsonSchemaFormat);
export const ChatResponseFormat = openTaggedUnion([TextFormat, JsonObjectFormat, ChatJsonSchemaFormat], {
  description: 'The answer format',
});
export type ChatResponseFormat = Static<typeof ChatResponseFormat>;

export const StreamOptions = Type.Object({
  include_usage: Type.Optional(Nullable(Type.Boolean())),
  include_obfuscation: Type.Optional(Nullable(Type.Boolean())),
});

/** The routing object routers (OpenRouter and the like) read; the gateway reads `allow_fallbacks`. */
export const ProviderRouting = Type.Object({ allow_fallbacks: Type.Optional(Nullable(Type.Boolean())) });

/** A chat-completions request as clients send it. The protocol is forwarded as given, so unnamed fields are kept. */
export const ChatCompletionsRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    messages: Type.Array(ChatMessage, { minItems: 1 }),
    stream: Type.Optional(Type.Boolean()),
    stream_options: Type.Optional(Nullable(StreamOptions)),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 16 }), Type.Null()])),
    seed: Type.Optional(Type.Integer()),
    tools: Type.Optional(Type.Array(ChatTool)),
    tool_choice: Type.Optional(ChatToolChoice),
    parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
    response_format: Type.Optional(ChatResponseFormat),
    logprobs: Type.Optional(Nullable(Type.Boolean())),
    top_logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    logit_bias: Type.Optional(Nullable(Type.Record(Type.String(), Type.Number()))),
    reasoning_effort: Type.Optional(Nullable(Type.String())),
    verbosity: Type.Optional(Nullable(Type.String())),
    web_search_options: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
    provider: Type.Optional(ProviderRouting),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: 128 })),
  },
  { additionalProperties: true },
);
export type ChatCompletionsRequest = Static<typeof ChatCompletionsRequest>;

/** Token counts as the protocol reports them; compatible servers leave either count out at times. */
export const ChatUsage = Type.Object({
  prompt_tokens: Type.Optional(Type.Number()),
  completion_tokens: Type.Optional(Type.Number()),
  // Compatible servers write a count they do not keep as null.
  prompt_tokens_details: Type.Optional(
    Nullable(Type.Object({ cached_tokens: Type.Optional(Nullable(Type.Number())) })),
  ),
  completion_tokens_details: Type.Optional(
    Nullable(Type.Object({ reasoning_tokens: Type.Optional(Nullable(Type.Number())) })),
  ),
});
export type ChatUsage = Static<typeof ChatUsage>;

/**
 * One fragment of a streamed tool call (its `type` is not read). Compatible servers write fields they do not send
 * as null: vLLM a later fragment's `function.name`, others its `id` and `type` too, Fireworks the first fragment's
 * `arguments`. A null reads as a field not sent.
 */
const ToolCallFragment = Type.Object({
  index: Type.Optional(Type.Integer()),
  id: Type.Optional(Nullable(Type.String())),
  function: Type.Optional(
    Type.Object({
      name: Type.Optional(Nullable(Type.String())),
      arguments: Type.Optional(Nullable(Type.String())),
    }),
  ),
});
export type ToolCallFragment = Static<typeof ToolCallFragment>;

const TopLogprob = Type.Object({
  token: Type.String(),
  logprob: Type.Number(),
  bytes: Type.Optional(Nullable(Type.Array(Type.Integer({ minimum: 0, maximum: 255 })))),
});
type TopLogprob = Static<typeof TopLogprob>;
const TokenLogprobWire = Type.Object({
  ...TopLogprob.properties,
  top_logprobs: Type.Optional(Nullable(Type.Array(TopLogprob))),
});

/** A choice's log probabilities: of its content's tokens, or of its refusal's. */
export const ChoiceLogprobs = Type.Object({
  content: Type.Optional(Nullable(Type.Array(TokenLogprobWire))),
  refusal: Type.Optional(Nullable(Type.Array(TokenLogprobWire))),
});
export type ChoiceLogprobs = Static<typeof ChoiceLogprobs>;
const isChoiceLogprobs = wireCheck(ChoiceLogprobs);

/**
 * The log probabilities a choice carries, read apart from the chunk: compatible servers send the legacy
 * completions shape too, which is not read (the tokens are answered without them) rather than failing the answer.
 */
export function tokenLogprobsOf(logprobs: unknown): TokenLogprob[] {
  if (!isChoiceLogprobs(logprobs)) return [];
  const chance = ({ token, logprob }: TopLogprob): TokenChance => ({ token, logprob: logprobOf(logprob) });
  return [...(logprobs.content ?? []), ...(logprobs.refusal ?? [])].map((entry) => ({
    ...chance(entry),
    top: (entry.top_logprobs ?? []).map(chance),
  }));
}

/** The protocol's shape of log probabilities, each token with its UTF-8 bytes as the protocol gives them. */
export function wireLogprobs(tokens: readonly TokenLogprob[]): ChoiceLogprobs {
  const chance = ({ token, logprob }: TokenChance): TopLogprob => ({
    token,
    logprob,
    bytes: [...Buffer.from(token, 'utf8')],
  });
  return { content: tokens.map((entry) => ({ ...chance(entry), top_logprobs: entry.top.map(chance) })), refusal: null };
}

const ChunkChoice = Type.Object({
  index: Type.Optional(Type.Integer({ minimum: 0 })),
  delta: Type.Optional(
    Type.Object({
      content: Type.Optional(Nullable(Type.String())),
      /** The model's refusal, streamed in place of content (structured outputs); its answer ends with `stop`. */
      refusal: Type.Optional(Nullable(Type.String())),
      tool_calls: Type.Optional(Nullable(Type.Array(ToolCallFragment))),
    }),
  ),
  /** Read with `tokenLogprobsOf`, so a shape the gateway cannot read costs the log probabilities only. */
  logprobs: Type.Optional(Type.Unknown()),
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

/** Whether a schema asks for a JSON object at its root: the only answer format the protocol takes. */
export function objectRootSchema(schema: Readonly<Record<string, unknown>>): boolean {
  return schema.type === 'object';
}

/**
 * Keywords a strict schema may not use (the API refuses them: "In context=('properties', 'name'), 'minLength' is
 * not permitted"): the string lengths, object and array constraints past `minItems`/`maxItems`, compositions other
 * than `anyOf`, conditionals and `default`.
 */
export const strictRefusedKeywords: ReadonlySet<string> = new Set([
  'minLength',
  'maxLength',
  'patternProperties',
  'unevaluatedProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'unevaluatedItems',
  'contains',
  'minContains',
  'maxContains',
  'uniqueItems',
  'oneOf',
  'allOf',
  'not',
  'dependentRequired',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'default',
]);

/**
 * Whether the protocol can hold an answer to `schema` strictly (`strict: true`): an object at the root, every
 * object in it closed (`additionalProperties: false`) with every property required, and none of the keywords
 * strict refuses. A schema of another protocol, which holds answers to any schema, may not be one; the protocol
 * refuses it as strict.
 */
export function strictSchema(schema: Readonly<Record<string, unknown>>): boolean {
  // A request's schema is asked about by the capability check, the dropped-parameter check and the encoding:
  // it is walked once.
  let known = strictness.get(schema);
  if (known === undefined) {
    known = objectRootSchema(schema) && findSchemaObject(schema, refusedAsStrict) === undefined;
    strictness.set(schema, known);
  }
  return known;
}

const strictness = new WeakMap<object, boolean>();

/** Whether one schema object of a strict schema is one the protocol refuses (its sub-schemas are asked apart). */
function refusedAsStrict(node: SchemaObject): boolean {
  for (const keyword in node) if (strictRefusedKeywords.has(keyword)) return true;
  if (!describesObject(node)) return false;
  if (node.additionalProperties !== false) return true;
  const properties = isSchemaObject(node.properties) ? node.properties : undefined;
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  for (const name in properties) if (!required.has(name)) return true;
  return false;
}

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

/**
 * The finish of a choice that made tool calls: OpenAI ends a call of the function a request named with `stop`, as
 * Google's compatible endpoint, older Ollama and other compatible servers end any turn of calls, which other
 * protocols would read as an answer given; it is a tool-call finish, said in the unified reason only.
 */
export function calledFinish(finish: FinishReason, madeCalls: boolean): FinishReason {
  return madeCalls && finish.unified === 'stop' ? { unified: 'tool-calls', raw: finish.raw } : finish;
}

/**
 * The finish of a choice that streamed a refusal: the protocol ends it with `stop`, which other protocols would
 * read as an answer given; it is a content filter's (Anthropic's `refusal`), said in the unified reason only.
 */
export function refusedFinish(finish: FinishReason, refused: boolean): FinishReason {
  return refused && finish.unified === 'stop' ? { unified: 'content-filter', raw: undefined } : finish;
}

/** Usage as reported; an object without either count reports nothing (the gateway then counts). */
export function usageOf(usage: ChatUsage | null | undefined): TokenUsage | undefined {
  if (!usage || (usage.prompt_tokens === undefined && usage.completion_tokens === undefined)) return undefined;
  return {
    inputTokens: wholeTokens(usage.prompt_tokens),
    outputTokens: wholeTokens(usage.completion_tokens),
    ...usageDetails(usage.prompt_tokens_details?.cached_tokens, usage.completion_tokens_details?.reasoning_tokens),
  };
}

export function wireUsage(usage: TokenUsage): ChatUsage & { total_tokens: number } {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    ...(usage.cachedInputTokens === undefined
      ? {}
      : { prompt_tokens_details: { cached_tokens: usage.cachedInputTokens } }),
    ...(usage.reasoningTokens === undefined
      ? {}
      : { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } }),
  };
}

/** An assistant message naming earlier audio output by id (`audio.id`), which the server keeps and reads again. */
export const isStoredAudioMessage = wireCheck(Type.Object({ audio: Type.Object({ id: Type.String() }) }));

/**
 * Whether a chat request, as it is forwarded, makes its upstream read input the request only names, which no
 * prompt bound can count: a web search (`web_search_options`), whose findings the search models read (and the
 * servers bill) as input. What the messages carry is their decoder's to say (DecodedChat.uncountedInput).
 */
export function chatReadsServerInput(body: Readonly<Record<string, unknown>>): boolean {
  return body.web_search_options !== undefined && body.web_search_options !== null;
}
