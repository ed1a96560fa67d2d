/** The canonical chat model every surface decodes into and every provider adapter encodes from. */
export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export type ImageSource = { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };

/** A function call the model asked for; `arguments` is the JSON text of the call's argument object. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What the client's function returned for one call, answered in a `tool` message. */
export interface ToolResult {
  callId: string;
  /** The called function's name, which some protocols address results by. */
  name: string;
  output: string;
  isError?: boolean;
}

export type ChatPart =
  | { type: 'text'; text: string }
  | { type: 'image'; image: ImageSource }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'tool-result'; result: ToolResult };

/** A function the model may call; `parameters` is a JSON Schema object. */
export interface ToolDefinition {
  name: string;
  description?: string;
  parameters?: Readonly<Record<string, unknown>>;
  /** Calls must match `parameters` exactly (OpenAI's and Anthropic's `strict`). */
  strict?: boolean;
}

/**
 * A definition from a wire tool's fields, keeping a description, a schema and a strictness only when they have
 * the right type.
 */
export function toolDefinition({
  name,
  description,
  parameters,
  strict,
}: {
  name: string;
  description?: unknown;
  parameters?: unknown;
  strict?: unknown;
}): ToolDefinition {
  return {
    name,
    ...(typeof description === 'string' ? { description } : {}),
    ...(parameters !== null && typeof parameters === 'object' && !Array.isArray(parameters)
      ? { parameters: parameters as Record<string, unknown> }
      : {}),
    ...(typeof strict === 'boolean' ? { strict } : {}),
  };
}

/**
 * A tool's parameters as the schema of an object: a call's arguments are always a JSON object, and a schema that
 * names no type (`{}`, which OpenAI takes for any arguments) says so, as Anthropic's `input_schema` must (it
 * refuses one without `type: "object"`) and Gemini's `parametersJsonSchema` is to (its schema describes the object
 * of the arguments).
 */
export function argumentsSchema(parameters: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  return parameters.type === undefined ? { type: 'object', ...parameters } : parameters;
}

/** `required` means some tool must be called; `{ name }` means that one. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

/** Plain text, or ordered parts when the message carries images or tool calls and results. */
export interface ChatMessage {
  role: ChatRole;
  content: string | readonly ChatPart[];
}

export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/**
 * A tool result's text from the parts it came in (a tool may answer in several, as MCP servers often do): each
 * part on a line of its own, never run together. The result is one text in every protocol's canonical shape, and
 * Gemini's function response takes one string; an empty part says nothing and is left out.
 */
export function toolResultText(parts: readonly ChatPart[]): string {
  return parts.flatMap((part) => (part.type === 'text' && part.text !== '' ? [part.text] : [])).join('\n');
}

/**
 * A model's turn from its parts: text-only parts become one string (a turn the client kept in pieces, as
 * Gemini's streamed chunks, is one text); otherwise the parts stay as they are, in order.
 */
export function compactContent(parts: readonly ChatPart[]): ChatMessage['content'] {
  return parts.every((part) => part.type === 'text')
    ? parts.map((part) => (part as { text: string }).text).join('')
    : parts;
}

/**
 * A client's own message (system or user) from the parts it wrote: one text part is its string; several parts
 * stay parts, so that each protocol, all of which take a message in parts, gets each as it was written, never
 * run together. An empty text part says nothing and is left out: Anthropic refuses an empty text block anywhere
 * in a message, and Gemini an empty text part (run together, it never reached them).
 */
export function contentInParts(parts: readonly ChatPart[]): ChatMessage['content'] {
  const said = parts.filter((part) => part.type !== 'text' || part.text !== '');
  const [first] = said;
  if (first === undefined) return '';
  return said.length === 1 && first.type === 'text' ? first.text : said;
}

/**
 * The texts of the system messages, part by part and in order (an empty one says nothing): what a protocol that
 * takes a system prompt in parts is sent, one part each, never run together.
 */
export function systemTexts(messages: readonly ChatMessage[]): string[] {
  return messages.flatMap((message) =>
    message.role === 'system'
      ? partsOf(message.content).flatMap((part) => (part.type === 'text' && part.text !== '' ? [part.text] : []))
      : [],
  );
}

export function partsOf(content: ChatMessage['content']): readonly ChatPart[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

export function toolCallsIn(content: ChatMessage['content']): ToolCall[] {
  return partsOf(content).flatMap((part) => (part.type === 'tool-call' ? [part.call] : []));
}

/** A conversation whose tool results are named, and the call ids of those left without a name. */
export interface NamedToolResults {
  messages: ChatMessage[];
  /**
   * Ids no call before the result has: such a result keeps the name it was given, empty from these protocols. A
   * set, as surfaces look up each of their results in it: a list would make that quadratic in a client's results.
   */
  unmatched: ReadonlySet<string>;
}

/**
 * Names the tool results of `messages` by the calls they answer, for protocols that address results by
 * call id only; a result whose call is not in the conversation keeps the name it was given.
 */
export function nameToolResults(messages: ChatMessage[]): NamedToolResults {
  const names = new Map<string, string>();
  const unmatched = new Set<string>();
  const named = messages.map((message) => {
    for (const call of toolCallsIn(message.content)) names.set(call.id, call.name);
    if (typeof message.content === 'string' || !message.content.some((part) => part.type === 'tool-result'))
      return message;
    const content = message.content.map((part) => {
      if (part.type !== 'tool-result') return part;
      const name = names.get(part.result.callId);
      if (name === undefined && part.result.name === '') unmatched.add(part.result.callId);
      return { type: 'tool-result' as const, result: { ...part.result, name: name ?? part.result.name } };
    });
    return { ...message, content };
  });
  return { messages: named, unmatched };
}

/**
 * A client turn of protocols that put tool results among the user's parts, as canonical messages: the
 * results (which answer the calls before them) in a `tool` message, then whatever else the turn says.
 */
export function userTurn(parts: ChatPart[]): ChatMessage[] {
  const results = parts.filter((part) => part.type === 'tool-result');
  const rest = parts.filter((part) => part.type !== 'tool-result');
  return [
    ...(results.length > 0 ? [{ role: 'tool' as const, content: results }] : []),
    ...(rest.length > 0 || results.length === 0 ? [{ role: 'user' as const, content: contentInParts(rest) }] : []),
  ];
}

/** The JSON object a call's argument text holds; anything that is not an object becomes `{}`. */
export function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** All the text a model reads in a message: its text, and the names, arguments and outputs of tool calls. */
export function promptTextOf(content: ChatMessage['content']): string {
  return partsOf(content)
    .map((part) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'tool-call') return `${part.call.name} ${part.call.arguments}`;
      if (part.type === 'tool-result') return part.result.output;
      return '';
    })
    .join('');
}

export function imagesIn(messages: readonly ChatMessage[]): number {
  return messages.reduce(
    (count, message) =>
      count +
      (typeof message.content === 'string' ? 0 : message.content.filter((part) => part.type === 'image').length),
    0,
  );
}

/** `data:<type>;base64,<data>` URLs are inline images; anything else is fetched by the provider. */
export function imageFromUrl(url: string): ImageSource {
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return inline ? { kind: 'base64', mediaType: inline[1]!, data: inline[2]! } : { kind: 'url', url };
}

export function imageUrlOf(image: ImageSource): string {
  return image.kind === 'url' ? image.url : `data:${image.mediaType};base64,${image.data}`;
}

/** The answer's shape: free text, any JSON object, or JSON matching a schema. */
export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      description?: string;
      schema?: Readonly<Record<string, unknown>>;
      strict?: boolean;
    };

/**
 * The name of a JSON schema format whose protocol names none (beta's, gamma's), as OpenAI's requires one: no name
 * the client gave, so none that a protocol taking the schema alone goes without.
 */
export const unnamedFormat = 'response';

/**
 * A JSON schema format's schema for a protocol that takes the schema alone: the format's name goes in it as its
 * title, and its description as its description, where the schema has none of its own, so that what the client
 * told the model of the answer still reaches it.
 */
export function describedSchema(format: ResponseFormat | undefined): Readonly<Record<string, unknown>> | undefined {
  if (format?.type !== 'json_schema' || format.schema === undefined) return undefined;
  const { name, description, schema } = format;
  const title = name !== unnamedFormat && schema.title === undefined ? name : undefined;
  const described = schema.description === undefined ? description : undefined;
  if (title === undefined && described === undefined) return schema;
  return {
    ...schema,
    ...(title !== undefined ? { title } : {}),
    ...(described !== undefined ? { description: described } : {}),
  };
}

/**
 * Whether a protocol taking the schema alone goes without the format's name: the client's name, where the schema
 * has a title of its own that says another (or there is no schema to carry it).
 */
export function unkeptFormatName(format: ResponseFormat | undefined): boolean {
  if (format?.type !== 'json_schema' || format.name === unnamedFormat) return false;
  return format.schema === undefined || (format.schema.title !== undefined && format.schema.title !== format.name);
}

/**
 * The format of a protocol that holds every answer to its schema (Anthropic's, Gemini's): asked with
 * `structuredOutputs`, so that a protocol that cannot hold one strictly says so.
 */
export function heldFormat(
  format: ResponseFormat | undefined,
): Pick<ChatRequest, 'responseFormat' | 'structuredOutputs'> {
  return format?.type === 'json_schema'
    ? { responseFormat: format, structuredOutputs: true }
    : { responseFormat: format };
}

/** Extended thinking: on with a token budget for it, or off. */
export type ThinkingConfig = { type: 'enabled'; budgetTokens: number } | { type: 'disabled' };

/** OpenAI's web search options (`search_context_size`, `user_location`), which only that protocol carries. */
export type WebSearchOptions = Readonly<Record<string, unknown>>;

export interface ChatRequest {
  /** The upstream model id the catalog rewrote the client's model to. */
  upstreamModel: string;
  messages: readonly ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: readonly string[];
  seed?: number;
  tools?: readonly ToolDefinition[];
  toolChoice?: ToolChoice;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  repetitionPenalty?: number;
  minP?: number;
  topA?: number;
  logprobs?: boolean;
  topLogprobs?: number;
  /** Token id (as a string) -> bias from -100 to 100. */
  logitBias?: Readonly<Record<string, number>>;
  responseFormat?: ResponseFormat;
  /** Whether a JSON schema response format is enforced strictly. */
  structuredOutputs?: boolean;
  /**
   * Whether a tool asks its arguments held to its schema (`ToolDefinition.strict`): derived from the tools when
   * a request is translated, so that an adapter can say whether it holds them so (`carries`).
   */
  strictTools?: boolean;
  parallelToolCalls?: boolean;
  /** Whether the answer carries the model's reasoning text, where the protocol can send it. */
  includeReasoning?: boolean;
  /** `none`, `minimal`, `low`, `medium`, `high` and the like. */
  reasoningEffort?: string;
  webSearchOptions?: WebSearchOptions;
  verbosity?: string;
  thinking?: ThinkingConfig;
  /** Completions asked for at once (each may use the whole output limit); events of all but the first name theirs. */
  choices?: number;
}

/** The optional generation parameters of a chat request; each is named as the native API names it. */
export type ChatParameterName = Exclude<keyof ChatRequest, 'upstreamModel' | 'messages'>;

const parameterNames: Record<ChatParameterName, true> = {
  maxTokens: true,
  temperature: true,
  topP: true,
  stop: true,
  seed: true,
  tools: true,
  toolChoice: true,
  topK: true,
  presencePenalty: true,
  frequencyPenalty: true,
  repetitionPenalty: true,
  minP: true,
  topA: true,
  logprobs: true,
  topLogprobs: true,
  logitBias: true,
  responseFormat: true,
  structuredOutputs: true,
  strictTools: true,
  parallelToolCalls: true,
  includeReasoning: true,
  reasoningEffort: true,
  webSearchOptions: true,
  verbosity: true,
  thinking: true,
  choices: true,
};

export const chatParameterNames = Object.keys(parameterNames) as ChatParameterName[];

export function isChatParameter(name: string): name is ChatParameterName {
  return Object.hasOwn(parameterNames, name);
}

function copyParameter<K extends ChatParameterName>(
  target: Partial<ChatRequest>,
  source: Partial<ChatRequest>,
  name: K,
): void {
  if (source[name] !== undefined) target[name] = source[name];
}

/** The parameters `source` sets, except those named in `without` (a tool choice goes with its tools). */
export function chatParameters(source: Partial<ChatRequest>, without: readonly string[]): Partial<ChatRequest> {
  const parameters: Partial<ChatRequest> = {};
  for (const name of chatParameterNames) {
    if (without.includes(name) || (name === 'toolChoice' && without.includes('tools'))) continue;
    copyParameter(parameters, source, name);
  }
  return parameters;
}

/** What a surface decoded of a request into the canonical model. */
export interface DecodedChat extends Omit<Partial<ChatRequest>, 'upstreamModel' | 'messages'> {
  messages: ChatMessage[];
  /** What the canonical model cannot carry (see TextGenerationInput.untranslatable). */
  untranslatable: string[];
  /** The request carries input the prompt bound does not count (see TextGenerationInput.uncountedInput). */
  uncountedInput: boolean;
  /** The fields naming the call of the results no earlier call answers (see TextGenerationInput.unmatchedToolResults). */
  unmatchedToolResults?: string[];
  /** What a translated call goes without, named when it does (see TextGenerationInput.notTranslated). */
  notTranslated?: string[];
}

/**
 * What a decoder notes as it walks a request's input, besides the canonical parts it makes: what the canonical
 * model cannot carry (`DecodedChat.untranslatable`), and whether it left input out of the prompt bound
 * (`DecodedChat.uncountedInput`). Only the parts it makes are counted: whatever else it meets, it says so here.
 */
export interface InputNotes {
  readonly untranslatable: Set<string>;
  uncounted: boolean;
}

export function newInputNotes(): InputNotes {
  return { untranslatable: new Set(), uncounted: false };
}

/**
 * Input the canonical model cannot carry (a file, audio, a document...): only a relay forwards it, and the
 * upstream reads it, while the prompt bound, which counts canonical parts only, leaves it out.
 */
export function leftOut(notes: InputNotes, feature: string): void {
  notes.untranslatable.add(feature);
  notes.uncounted = true;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Of the input, what the provider said it read from its prompt cache (where it said). */
  cachedInputTokens?: number;
  /** Of the output, what the provider said the model spent thinking (where it said). */
  reasoningTokens?: number;
}

/** The parts of a usage the provider told apart, where it did (each made whole). */
export function usageDetails(
  cached: unknown,
  reasoning: unknown,
): Pick<TokenUsage, 'cachedInputTokens' | 'reasoningTokens'> {
  return {
    ...(cached === undefined || cached === null ? {} : { cachedInputTokens: wholeTokens(cached) }),
    ...(reasoning === undefined || reasoning === null ? {} : { reasoningTokens: wholeTokens(reasoning) }),
  };
}

/**
 * A token count as an upstream reported it, made a whole non-negative number (providers' JSON is not trusted).
 * A count too large to hold (`1e400` reads as Infinity) is the largest there is, never none: the settlement
 * caps what it costs at the hold, where a count read as 0 would charge nothing for it.
 */
export function wholeTokens(count: unknown): number {
  const value = Number(count);
  if (Number.isNaN(value) || value <= 0) return 0;
  return value >= Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : Math.ceil(value);
}

/**
 * A count an upstream reported, or undefined when it reported none: a value that is not a number, or is below
 * zero, is no count (the gateway then counts itself), never a count of nothing.
 */
export function reportedTokens(count: unknown): number | undefined {
  return typeof count === 'number' && count >= 0 ? count : undefined;
}

/**
 * Counts an upstream reports in parts of one whole (cached input, thinking output), added up. Each part is made
 * whole first, so a negative part cannot take away from the others, and the sum stops at the largest count.
 */
export function tokenSum(parts: readonly unknown[]): number {
  let sum = 0;
  for (const part of parts) sum += wholeTokens(part);
  return sum >= Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : sum;
}

export type UnifiedFinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

/** The provider's own reason is kept next to the unified one, so a surface of the same protocol can pass it on unmapped. */
export interface FinishReason {
  unified: UnifiedFinishReason;
  raw: string | undefined;
  /** The stop sequence that ended the answer, when the provider says which (Anthropic's `stop_sequence`). */
  stopSequence?: string;
}

/** A likely token at one place of the answer, with the natural logarithm of its probability. */
export interface TokenChance {
  token: string;
  logprob: number;
}

/** A token of the answer with its log probability and, where they were asked for, the likeliest at its place. */
export interface TokenLogprob extends TokenChance {
  top: readonly TokenChance[];
}

/** A log probability as an upstream reported it, made one: at most 0, and no lower than the protocols' floor, -9999. */
export function logprobOf(value: number): number {
  if (Number.isNaN(value)) return -9999;
  return Math.min(0, Math.max(-9999, value));
}

/**
 * `index` numbers the answer's tool calls from 0; a call starts with its id and name, then its argument JSON
 * arrives in fragments that concatenate to the whole text. Log probabilities come just before the output they
 * describe, so a surface can send them with it. With several choices (`ChatRequest.choices`), the
 * output of every choice but the first names its `choice` (numbered from 0), and each of those choices ends
 * with a `choice-finish`; the `finish` ends the whole answer, with the first choice's reason and all the usage.
 */
export type ChatStreamEvent =
  | { type: 'text-delta'; text: string; choice?: number }
  | { type: 'tool-call-start'; index: number; id: string; name: string; choice?: number }
  | { type: 'tool-call-delta'; index: number; arguments: string; choice?: number }
  /** The log probabilities of the tokens of the output event that follows (asked for with `logprobs`). */
  | { type: 'logprobs'; tokens: readonly TokenLogprob[]; choice?: number }
  | { type: 'choice-finish'; choice: number; finishReason: FinishReason }
  | { type: 'finish'; finishReason: FinishReason; usage: TokenUsage | undefined };

/** `{ choice }` for a choice after the first, nothing for the first: what its events carry. */
export const choiceField = (choice: number): { choice?: number } => (choice > 0 ? { choice } : {});
