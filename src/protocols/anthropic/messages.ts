import { Type, type Static } from 'typebox';
import { tokenSum, usageDetails, wholeTokens, type FinishReason, type TokenUsage } from '../../domain/chat.ts';
import { closedTaggedUnion, conditional, knownMemberOf, openTaggedUnion, stringOr } from '../tagged-union.ts';
import { wireCheck } from '../wire-check.ts';
import { maxEmbeddingParts } from '../../domain/embedding.ts';
import type { SubsetRules } from '../../domain/json-schema.ts';

/** A JSON Schema, as tools and answer formats carry one: an object whose keywords the gateway passes on. */
const JsonSchemaObject = Type.Record(Type.String(), Type.Unknown(), { description: 'A JSON Schema' });

export const TextBlock = Type.Object({ type: Type.Literal('text'), text: Type.String() });

const Base64Source = Type.Object({ type: Type.Literal('base64'), media_type: Type.String(), data: Type.String() });
const UrlSource = Type.Object({ type: Type.Literal('url'), url: Type.String() });
const FileSource = Type.Object({ type: Type.Literal('file'), file_id: Type.String() });
const imageSources = [Base64Source, UrlSource, FileSource] as const;
export const isKnownImageSource = knownMemberOf(imageSources);

export const ImageBlock = Type.Object({
  type: Type.Literal('image'),
  source: openTaggedUnion(imageSources, { description: 'base64 data with its media type, a URL, or a file id' }),
});

const documentSources = [
  Base64Source,
  Type.Object({ type: Type.Literal('text'), media_type: Type.String(), data: Type.String() }),
  UrlSource,
  Type.Object({ type: Type.Literal('content'), content: stringOr(Type.Array(Type.Object({ type: Type.String() }))) }),
  FileSource,
] as const;

const DocumentBlock = Type.Object({
  type: Type.Literal('document'),
  source: openTaggedUnion(documentSources, { description: 'a PDF, plain text, a URL, content blocks or a file id' }),
  title: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  context: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

const ToolUseBlock = Type.Object({
  type: Type.Literal('tool_use'),
  id: Type.String(),
  name: Type.String(),
  input: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "The tool's arguments" })),
});

const toolResultBlocks = [TextBlock, ImageBlock, DocumentBlock] as const;

const ToolResultBlock = Type.Object({
  type: Type.Literal('tool_result'),
  tool_use_id: Type.String(),
  content: Type.Optional(stringOr(Type.Array(openTaggedUnion(toolResultBlocks)))),
  is_error: Type.Optional(Type.Boolean()),
});

/** The model's reasoning, sent back as it came; `signature` proves it unaltered to an Anthropic upstream. */
const ThinkingBlock = Type.Object({
  type: Type.Literal('thinking'),
  thinking: Type.String(),
  signature: Type.Optional(Type.String()),
});
const RedactedThinkingBlock = Type.Object({ type: Type.Literal('redacted_thinking'), data: Type.String() });

const contentBlocks = [
  TextBlock,
  ImageBlock,
  DocumentBlock,
  ToolUseBlock,
  ToolResultBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
] as const;
/** A content block of a message; blocks of other types (search results, server tools' blocks) are kept as sent. */
export const ContentBlock = openTaggedUnion(contentBlocks);
export type ContentBlock = Static<typeof ContentBlock>;
export const isKnownContentBlock = knownMemberOf(contentBlocks);

/**
 * The server tools that read what they retrieve into the model's input (billed so): web search and web fetch,
 * by their versioned types (`web_search_20250305`, `web_fetch_20250910`...).
 */
const isRetrievalTool = wireCheck(Type.Object({ type: Type.String({ pattern: '^web_(?:search|fetch)_' }) }));

/**
 * Whether a messages request, as it is forwarded, makes its upstream read input the request only names, which
 * no prompt bound can count: a thread (the server holds the conversation and `continue` reads it; the shape is
 * the server's to check, so any thread is taken as one it reads), or what a retrieval tool or MCP server finds. What the
 * messages' blocks carry is their decoder's to say (DecodedChat.uncountedInput).
 */
export function messagesReadServerInput(body: Readonly<Record<string, unknown>>): boolean {
  if (body.thread !== undefined && body.thread !== null) return true;
  // Remote MCP servers (the MCP connector): the model reads their tools' answers.
  if (Array.isArray(body.mcp_servers) && body.mcp_servers.length > 0) return true;
  return Array.isArray(body.tools) && body.tools.some((tool: unknown) => isRetrievalTool(tool));
}

const MessageParam = Type.Object({
  role: Type.String({ minLength: 1, description: '`user` or `assistant`' }),
  content: stringOr(Type.Array(ContentBlock)),
});

/** A tool the client runs: its name, and the JSON Schema of its input (`type` absent or `custom`). */
export const ClientTool = Type.Object({
  type: Type.Optional(Type.Literal('custom')),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  input_schema: Type.Optional(JsonSchemaObject),
  strict: Type.Optional(Type.Boolean()),
});
export type ClientTool = Static<typeof ClientTool>;

/** A tool the provider runs itself (web search, code execution, ...), named by its versioned `type`. */
const ServerTool = Type.Object({ type: Type.String(), name: Type.Optional(Type.String()) });

/** A client tool, checked as such, or a server tool, passed on as sent. */
const Tool = Type.Unsafe<ClientTool | Static<typeof ServerTool>>({
  ...ServerTool,
  required: [],
  // Type absent or `custom`: the client's own tool.
  ...conditional({ properties: { type: { const: 'custom' } } }, ClientTool),
});
export type Tool = Static<typeof Tool>;
/** Whether a tool (checked against `Tool`) is the client's own: its type is absent or `custom`. */
export const isClientTool = (tool: Tool): tool is ClientTool => tool.type === undefined || tool.type === 'custom';

/**
 * Keywords the protocol's held answers (`output_config.format`, a strict tool's input_schema) refuse: "For
 * 'integer' type, property 'minimum' is not supported". Numbers' bounds, strings' lengths, objects' property
 * counts, arrays' constraints past a `minItems` of 0 or 1, and an object open to other properties ("For 'object'
 * type, 'additionalProperties: true' is not supported"). Any other JSON Schema it takes (a tool that is not strict
 * takes all of them).
 */
export function heldAnswerRefuses(keyword: string, value: unknown): boolean {
  if (keyword === 'minItems') return typeof value === 'number' && value > 1;
  if (keyword === 'additionalProperties') return value !== false;
  return heldAnswerRefusedKeywords.has(keyword);
}

/**
 * The subset of JSON Schema the protocol holds answers to: without the keywords it refuses, and every object
 * closed, which it wants said ("For 'object' type, 'additionalProperties' must be explicitly set to false").
 */
export const heldAnswerSubset: SubsetRules = { refuses: heldAnswerRefuses, closesObjects: true };

const heldAnswerRefusedKeywords: ReadonlySet<string> = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
]);

const parallelSwitch = { disable_parallel_tool_use: Type.Optional(Type.Boolean()) };
export const ToolChoice = closedTaggedUnion([
  Type.Object({ type: Type.Literal('auto'), ...parallelSwitch }),
  Type.Object({ type: Type.Literal('any'), ...parallelSwitch }),
  Type.Object({ type: Type.Literal('tool'), name: Type.String(), ...parallelSwitch }),
  Type.Object({ type: Type.Literal('none') }),
]);
export type ToolChoice = Static<typeof ToolChoice>;

const thinkingConfigs = [
  Type.Object({ type: Type.Literal('enabled'), budget_tokens: Type.Integer({ minimum: 1 }) }),
  Type.Object({ type: Type.Literal('disabled') }),
] as const;
/** Extended thinking: on with a budget, or off; newer kinds (`adaptive`) are the upstream's to take. */
export const ThinkingConfig = openTaggedUnion(thinkingConfigs);
export type ThinkingConfig = Static<typeof ThinkingConfig>;
export const isKnownThinkingConfig = knownMemberOf(thinkingConfigs);

const outputFormats = [Type.Object({ type: Type.Literal('json_schema'), schema: JsonSchemaObject })] as const;
/** The answer's format: JSON following a schema, the one kind the protocol has. */
export const OutputFormat = openTaggedUnion(outputFormats);
export type OutputFormat = Static<typeof OutputFormat>;
export const isKnownOutputFormat = knownMemberOf(outputFormats);

/** A messages request as clients send it; unnamed fields are kept and forwarded. */
export const MessagesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    max_tokens: Type.Integer({ minimum: 1 }),
    messages: Type.Array(MessageParam, { minItems: 1 }),
    system: Type.Optional(
      stringOr(Type.Array(closedTaggedUnion([TextBlock])), { description: 'Text, or text blocks' }),
    ),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    stream: Type.Optional(Type.Boolean()),
    tools: Type.Optional(Type.Array(Tool)),
    tool_choice: Type.Optional(ToolChoice),
    stop_sequences: Type.Optional(Type.Array(Type.String(), { maxItems: 16 })),
    metadata: Type.Optional(Type.Object({ user_id: Type.Optional(Type.Union([Type.String(), Type.Null()])) })),
    thinking: Type.Optional(ThinkingConfig),
    output_config: Type.Optional(
      Type.Object({ format: Type.Optional(OutputFormat), effort: Type.Optional(Type.String()) }),
    ),
    /** The older place of `output_config.format`, which the protocol still takes. */
    output_format: Type.Optional(OutputFormat),
    /**
     * Message threads (beta): `{type: "create"}`, or `{type: "continue", previous_message_id}` with only the new
     * messages, the server holding the rest of the conversation. Its shape is the server's to check.
     */
    thread: Type.Optional(
      Type.Unknown({ description: 'A message thread to create or continue (beta); the server holds the conversation' }),
    ),
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

const answerBlocks = [
  TextBlock,
  Type.Object({
    type: Type.Literal('tool_use'),
    id: Type.String(),
    name: Type.String(),
    input: Type.Record(Type.String(), Type.Unknown(), { description: "The tool's arguments" }),
  }),
  Type.Object({ type: Type.Literal('thinking'), thinking: Type.String(), signature: Type.Optional(Type.String()) }),
  RedactedThinkingBlock,
] as const;
/** A content block of an answer; the provider's own tools answer blocks of more types, relayed as they come. */
const AnswerBlock = openTaggedUnion(answerBlocks);

/**
 * A block as content_block_start opens it, its content to come in deltas: the protocol sends `text: ""` and
 * `input: {}`, which compatible servers leave out, and nothing reads.
 */
const startedBlocks = [
  Type.Object({ type: Type.Literal('text'), text: Type.Optional(Type.String()) }),
  Type.Object({
    type: Type.Literal('tool_use'),
    id: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    input: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
  Type.Object({
    type: Type.Literal('thinking'),
    thinking: Type.Optional(Type.String()),
    signature: Type.Optional(Type.String()),
  }),
  RedactedThinkingBlock,
] as const;
const StartedBlock = openTaggedUnion(startedBlocks);
export type StartedBlock = Static<typeof StartedBlock>;
export const isKnownStartedBlock = knownMemberOf(startedBlocks);

/** The name a started block carries: a tool's, the client's or one the provider runs itself (server_tool_use). */
export function blockName(block: StartedBlock): string | undefined {
  if (isKnownStartedBlock(block)) return block.type === 'tool_use' ? block.name : undefined;
  return typeof block.name === 'string' ? block.name : undefined;
}

const StopReason = Type.Union([Type.String(), Type.Null()]);

/** A whole (non-streamed) Message. */
export const Message = Type.Object({
  id: Type.Optional(Type.String()),
  type: Type.Literal('message'),
  role: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  content: Type.Array(AnswerBlock),
  stop_reason: Type.Optional(StopReason),
  stop_sequence: Type.Optional(StopReason),
  usage: MessagesUsage,
});
export type Message = Static<typeof Message>;
export const isMessage = wireCheck(Message);

const deltas = [
  Type.Object({ type: Type.Literal('text_delta'), text: Type.String() }),
  Type.Object({ type: Type.Literal('input_json_delta'), partial_json: Type.String() }),
  Type.Object({ type: Type.Literal('thinking_delta'), thinking: Type.String() }),
  Type.Object({ type: Type.Literal('signature_delta'), signature: Type.String() }),
] as const;
export const isKnownDelta = knownMemberOf(deltas);
const blockIndex = Type.Optional(Type.Integer({ minimum: 0 }));

const streamEvents = [
  Type.Object({
    type: Type.Literal('message_start'),
    message: Type.Object({ id: Type.Optional(Type.String()), usage: Type.Optional(MessagesUsage) }),
  }),
  Type.Object({ type: Type.Literal('content_block_start'), index: blockIndex, content_block: StartedBlock }),
  Type.Object({ type: Type.Literal('content_block_delta'), index: blockIndex, delta: openTaggedUnion(deltas) }),
  Type.Object({ type: Type.Literal('content_block_stop'), index: blockIndex }),
  Type.Object({
    type: Type.Literal('message_delta'),
    delta: Type.Object({ stop_reason: Type.Optional(StopReason), stop_sequence: Type.Optional(StopReason) }),
    usage: Type.Optional(MessagesUsage),
  }),
  Type.Object({ type: Type.Literal('message_stop') }),
  Type.Object({ type: Type.Literal('ping') }),
  Type.Object({
    type: Type.Literal('error'),
    error: Type.Object({ type: Type.Optional(Type.String()), message: Type.Optional(Type.String()) }),
  }),
] as const;
/** One event of a messages stream; events of types the protocol adds later pass as they come. */
export const MessagesStreamEvent = openTaggedUnion(streamEvents);
export type MessagesStreamEvent = Static<typeof MessagesStreamEvent>;
export const isMessagesStreamEvent = wireCheck(MessagesStreamEvent);
/** Whether a checked stream event is of a type the gateway reads (the others it passes over). */
export const isKnownStreamEvent = knownMemberOf(streamEvents);

const ContentDelta = streamEvents[2].properties.delta;
/** The text a content_block_delta adds: a text or a tool input fragment (thinking is not the answer's output). */
export function deltaOutput(delta: Static<typeof ContentDelta>): string {
  if (!isKnownDelta(delta)) return '';
  return delta.type === 'text_delta' ? delta.text : delta.type === 'input_json_delta' ? delta.partial_json : '';
}

const base64Part = <Tag extends string>(tag: Tag) =>
  Type.Object({
    type: Type.Literal(tag),
    data: Type.String({ minLength: 1, description: 'Base64, or a data: URL' }),
    mediaType: Type.Optional(Type.String({ description: 'Required with raw base64 (a PDF file may leave it out)' })),
  });
const urlPart = <Tag extends string>(tag: Tag) =>
  Type.Object({ type: Type.Literal(tag), url: Type.String({ minLength: 1 }) });

/** A part of one multimodal embedding input; its types are the domain's embedding part types. */
export const BetaEmbeddingPart = closedTaggedUnion([
  Type.Object({ type: Type.Literal('text'), text: Type.String({ minLength: 1 }) }),
  base64Part('imageBase64'),
  urlPart('imageUrl'),
  base64Part('audioBase64'),
  urlPart('audioUrl'),
  base64Part('fileBase64'),
  base64Part('videoBase64'),
]);
export type BetaEmbeddingPart = Static<typeof BetaEmbeddingPart>;

/** An embeddings request of the beta surface's extension: texts, or inputs of parts embedded together. */
export const BetaEmbeddingsRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300 }),
    input: stringOr(
      Type.Array(
        stringOr(Type.Object({ content: Type.Array(BetaEmbeddingPart, { maxItems: maxEmbeddingParts }) }), {
          description: 'A text, or an object whose content parts are embedded together',
        }),
        { minItems: 1 },
      ),
    ),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    encoding_format: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type BetaEmbeddingsRequest = Static<typeof BetaEmbeddingsRequest>;

/** The protocol's error body, with an error status and as the `error` event of a stream. */
export const AnthropicError = Type.Object({
  type: Type.Literal('error'),
  error: Type.Object({ type: Type.String(), message: Type.String() }),
});
export type AnthropicError = Static<typeof AnthropicError>;

const finishReasons: Readonly<Record<string, FinishReason['unified']>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
  // The answer was cut where the context window ended: a length limit's finish.
  model_context_window_exceeded: 'length',
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
    inputTokens: tokenSum(counts),
    outputTokens: wholeTokens(usage.output_tokens),
    ...usageDetails(usage.cache_read_input_tokens, undefined),
  };
}

/**
 * A stream's usage reports (message_start's, then message_delta's) merged field by field: a count a report
 * carries is a running total and replaces the one before it; one it leaves out or sends as null (message_delta's
 * input counts are nullable) keeps the one before. `usageOf` reads what the merged report bills.
 */
export function streamUsageAfter(current: MessagesUsage, report: MessagesUsage): MessagesUsage {
  return {
    input_tokens: report.input_tokens ?? current.input_tokens,
    output_tokens: report.output_tokens ?? current.output_tokens,
    cache_creation_input_tokens: report.cache_creation_input_tokens ?? current.cache_creation_input_tokens,
    cache_read_input_tokens: report.cache_read_input_tokens ?? current.cache_read_input_tokens,
  };
}

/** The protocol's input_tokens leave out what was read from the cache, which it counts apart. */
export const wireUsage = (usage: TokenUsage | undefined) => {
  const input = usage?.inputTokens ?? 0;
  const cached = Math.min(usage?.cachedInputTokens ?? 0, input);
  return {
    input_tokens: input - cached,
    output_tokens: usage?.outputTokens ?? 0,
    ...(cached > 0 ? { cache_read_input_tokens: cached } : {}),
  };
};
