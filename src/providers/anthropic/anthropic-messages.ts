import {
  argumentsObject,
  argumentsSchema,
  describedSchema,
  partsOf,
  systemTexts,
  type ChatMessage,
  type ChatParameterName,
  type ChatPart,
  type ChatRequest,
  type ChatStreamEvent,
  type FinishReason,
  type ResponseFormat,
  type ToolChoice,
  type ToolDefinition,
} from '../../domain/chat.ts';
import { plainCallId } from '../../domain/call-ids.ts';
import { newId } from '../../domain/ids.ts';
import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import {
  finishReasonOf,
  isKnownStartedBlock,
  isKnownDelta,
  isKnownStreamEvent,
  isMessagesStreamEvent,
  streamUsageAfter,
  usageOf,
  type ContentBlock,
  type MessagesRequest,
  type MessagesUsage,
  heldAnswerSubset,
  type ToolChoice as WireToolChoice,
} from '../../protocols/anthropic/messages.ts';
import { heldSubset, type KeptSchema, type SchemaObject } from '../../domain/json-schema.ts';
import type { CallOptions, ProviderTarget } from '../provider-adapter.ts';
import { decodeSse } from '../shared/sse-decoder.ts';
import type { UpstreamHeaders, UpstreamHttp } from '../shared/upstream-http.ts';
import { checkedEvent } from '../shared/wire-data.ts';

/** The protocol version sent when the client did not choose one (the official SDKs send this value). */
export const defaultAnthropicVersion = '2023-06-01';
/** The protocol requires max_tokens; this is used when the client set none. */
const defaultMaxTokens = 4096;

export function anthropicHeaders(
  target: ProviderTarget,
  clientHeaders: Readonly<Record<string, string>> = {},
): UpstreamHeaders {
  return {
    'x-api-key': target.apiKey,
    'anthropic-version': clientHeaders['anthropic-version'] ?? defaultAnthropicVersion,
    ...(clientHeaders['anthropic-beta'] ? { 'anthropic-beta': clientHeaders['anthropic-beta'] } : {}),
  };
}

function anthropicBlock(part: ChatPart): ContentBlock {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return {
        type: 'image',
        source:
          part.image.kind === 'url'
            ? { type: 'url', url: part.image.url }
            : { type: 'base64', media_type: part.image.mediaType, data: part.image.data },
      };
    case 'tool-call':
      return {
        type: 'tool_use',
        id: plainCallId(part.call.id),
        name: part.call.name,
        input: argumentsObject(part.call.arguments),
      };
    case 'tool-result':
      return {
        type: 'tool_result',
        tool_use_id: plainCallId(part.result.callId),
        content: part.result.output,
        ...(part.result.isError ? { is_error: true } : {}),
      };
  }
}

function anthropicBlocks(content: ChatMessage['content']): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map(anthropicBlock);
}

/**
 * The conversation as the protocol's alternating turns: tool results travel in a user turn, and adjacent
 * turns of one role (a tool result followed by the user's next words) become one turn.
 */
function anthropicMessages(messages: readonly ChatMessage[]): MessagesRequest['messages'] {
  const turns: Array<{ role: 'user' | 'assistant'; content: string | ContentBlock[] }> = [];
  for (const message of messages) {
    if (message.role === 'system') continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const previous = turns.at(-1);
    if (previous?.role !== role) {
      turns.push({
        role,
        content: typeof message.content === 'string' ? message.content : anthropicBlocks(message.content),
      });
      continue;
    }
    // Blocks join the turn in place: linear however many messages of one role follow each other.
    if (typeof previous.content === 'string') previous.content = [{ type: 'text', text: previous.content }];
    for (const block of anthropicBlocks(message.content)) previous.content.push(block);
  }
  return turns;
}

function anthropicToolChoice(choice: ToolChoice): WireToolChoice {
  if (typeof choice === 'object') return { type: 'tool', name: choice.name };
  return { type: choice === 'required' ? 'any' : choice };
}

const anthropicParameters = new Set<ChatParameterName>([
  'maxTokens',
  'temperature',
  'topP',
  'stop',
  'tools',
  'toolChoice',
  'topK',
  'thinking',
]);

/**
 * The tool a JSON answer without a schema is asked through: the protocol's own JSON format takes only a schema,
 * so the model is made to call this tool, whose input is the answer.
 */
const jsonAnswerTool: ToolDefinition = {
  name: 'json_answer',
  description: 'Gives the whole answer, as this JSON object.',
  parameters: { type: 'object' },
};

/** Whether the answer is asked for through the forced json_answer tool, whose input then is the answer's text. */
function answersThroughTool({ responseFormat }: ChatRequest): boolean {
  return (
    responseFormat !== undefined && responseFormat.type !== 'text' && describedSchema(responseFormat) === undefined
  );
}

/** Anthropic's least thinking budget (`thinking.enabled.budget_tokens` is refused below it). */
const minThinkingBudget = 1024;

/** The thinking setting as the protocol takes it. */
type SentThinking = { type: 'enabled'; budget_tokens: number } | { type: 'disabled' };

/** Whether the request makes the model call a tool: the client's `required` or named choice, or the JSON answer's tool. */
function forcesTool(request: ChatRequest): boolean {
  const choice = request.toolChoice;
  return answersThroughTool(request) || choice === 'required' || typeof choice === 'object';
}

/**
 * Whether the request goes on with an assistant turn already begun: the conversation ends with the assistant's
 * own words (a prefill), or with tool results, which continue the turn whose calls they answer. Anthropic takes
 * no prefill with thinking, and wants such a turn to start with the signed thinking block the model made; the
 * canonical model keeps no thinking blocks, so there is none to send.
 */
function continuesAssistantTurn(messages: readonly ChatMessage[]): boolean {
  let userSpoke = false;
  for (let index = messages.length - 1; index >= 0; index--) {
    const { role, content } = messages[index]!;
    if (role === 'assistant') return !userSpoke;
    if (role === 'tool' || (role === 'user' && partsOf(content).some((part) => part.type === 'tool-result')))
      return true;
    if (role === 'user') userSpoke = true;
  }
  return false;
}

/**
 * The extended thinking the request is sent with, held to the protocol's rules for it (Anthropic's extended
 * thinking guide): a budget of at least 1,024 tokens and below `max_tokens`, no forced tool, no prefill, and a
 * turn of tool calls continued only with the thinking block that began it. Undefined when none was asked, or
 * when what was asked cannot go: the request then goes without thinking, named as dropped.
 *
 * - `max_tokens` is the output limit the hold covers (thinking tokens are output) and is never raised to make
 *   room: the call must not cost more than was held. The budget is brought within the limit instead: below the
 *   protocol's least it is raised to 1,024, and at or above the limit it is lowered to the limit less one
 *   token. Both protocols' budgets are targets the model may miss, and Gemini itself brings a budget into the
 *   model's range, so this carries what the client asked as closely as the protocol allows.
 * - A limit of 1,024 or less has no room for the least budget and any answer: thinking is left out and named,
 *   not the request refused, as an answer without thinking has the shape the client asked for (a refusal is
 *   kept for what would change the answer's shape, such as a JSON format no row can ask for).
 * - A forced tool (Gemini `ANY`, OpenAI `required` or a named function) decides what the answer is: the call is
 *   kept and thinking left out, as the guide advises ("tool_choice any or tool ... will result in an error").
 *   Leaving out the choice instead would let the model answer in text where the client's code waits for a call.
 * - A conversation that continues an assistant turn (above) goes without thinking, as Anthropic itself turns
 *   thinking off for a turn that did not begin with it.
 */
function sentThinking(request: ChatRequest): SentThinking | undefined {
  const thinking = request.thinking;
  if (thinking === undefined) return undefined;
  if (thinking.type === 'disabled') return { type: 'disabled' };
  const maxTokens = request.maxTokens ?? defaultMaxTokens;
  if (maxTokens <= minThinkingBudget || forcesTool(request) || continuesAssistantTurn(request.messages))
    return undefined;
  return {
    type: 'enabled',
    budget_tokens: Math.min(Math.max(thinking.budgetTokens, minThinkingBudget), maxTokens - 1),
  };
}

type Sampling = Pick<MessagesRequest, 'temperature' | 'top_p' | 'top_k'>;

/** The sampling parameters and the protocol's field for each. */
const samplingFields: Partial<Record<ChatParameterName, keyof Sampling>> = {
  temperature: 'temperature',
  topP: 'top_p',
  topK: 'top_k',
};

/** The highest `temperature` the protocol takes; OpenAI's and Gemini's go to 2. */
const maxTemperature = 1;

/**
 * The sampling settings sent. A `temperature` above the protocol's range (other protocols take up to 2) is left
 * out and named as dropped, so the model samples at its default, 1, the nearest it takes, rather than the call
 * being refused by the upstream in its own shape. Thinking takes no change of `temperature` (only its default,
 * 1) or of `top_k`, and a `top_p` from 0.95 to 1 only: with thinking on, any other is left out and named too.
 */
function sentSampling(request: ChatRequest, thinking: SentThinking | undefined): Sampling {
  const thinks = thinking?.type === 'enabled';
  const { temperature, topP, topK } = request;
  return {
    ...(temperature !== undefined && temperature <= maxTemperature && (!thinks || temperature === 1)
      ? { temperature }
      : {}),
    ...(topP !== undefined && (!thinks || (topP >= 0.95 && topP <= 1)) ? { top_p: topP } : {}),
    ...(topK !== undefined && !thinks ? { top_k: topK } : {}),
  };
}

/**
 * A schema as the protocol holds an answer to it (`heldAnswerSubset`): without the keywords it refuses (their
 * constraints written into descriptions), its objects closed. Made once per `key`: the capability check and the
 * encoding both ask.
 */
function heldOnce<K extends object>(cache: WeakMap<K, KeptSchema>, key: K, schema: () => SchemaObject): KeptSchema {
  let kept = cache.get(key);
  if (kept === undefined) {
    kept = heldSubset(schema(), heldAnswerSubset);
    cache.set(key, kept);
  }
  return kept;
}

const heldAnswers = new WeakMap<ResponseFormat, KeptSchema>();
const heldInputs = new WeakMap<SchemaObject, KeptSchema>();

/**
 * The schema of the answer's JSON format as it is sent: the format's name and description in it (before what the
 * protocol refuses is left out, so that a constraint said in words follows the client's own), held.
 */
function answerSchema({ responseFormat: format }: ChatRequest): KeptSchema | undefined {
  const described = describedSchema(format);
  return format === undefined || described === undefined ? undefined : heldOnce(heldAnswers, format, () => described);
}

/** A strict tool's input_schema: its parameters as an object's schema, held. */
const heldInput = (parameters: SchemaObject): KeptSchema =>
  heldOnce(heldInputs, parameters, () => argumentsSchema(parameters));

/** A tool's input_schema: its parameters as an object's schema, held as the protocol holds a strict tool's. */
function inputSchema(tool: ToolDefinition): SchemaObject {
  if (tool.parameters === undefined) return { type: 'object', properties: {} };
  return tool.strict === true ? heldInput(tool.parameters).schema : argumentsSchema(tool.parameters);
}

export function anthropicCarries(name: ChatParameterName, request: ChatRequest): boolean {
  // Parallel calls are switched off on the tool choice, which the protocol takes only with tools.
  if (name === 'parallelToolCalls') return request.tools !== undefined;
  // The protocol's own JSON format constrains the answer to its schema: strict, as structured outputs ask, unless
  // the schema has keywords it refuses, which are left out of what holds the answer.
  if (name === 'structuredOutputs') return answerSchema(request)?.leftOut.length === 0;
  // A strict tool alike: held to its schema less the keywords the protocol refuses.
  if (name === 'strictTools')
    return (request.tools ?? []).every(
      (tool) =>
        tool.strict !== true || tool.parameters === undefined || heldInput(tool.parameters).leftOut.length === 0,
    );
  // Forcing the answer's tool would take the client's own tools away, and thinking refuses a forced tool.
  if (name === 'responseFormat')
    return !answersThroughTool(request) || (request.tools === undefined && request.thinking?.type !== 'enabled');
  if (name === 'thinking') return sentThinking(request) !== undefined;
  const sampling = samplingFields[name];
  if (sampling !== undefined) return sentSampling(request, sentThinking(request))[sampling] !== undefined;
  return anthropicParameters.has(name);
}

export function encodeMessagesRequest(request: ChatRequest): MessagesRequest {
  const system = systemTexts(request.messages);
  const thinking = sentThinking(request);
  const body: MessagesRequest = {
    model: request.upstreamModel,
    max_tokens: request.maxTokens ?? defaultMaxTokens,
    messages: anthropicMessages(request.messages),
    stream: true,
    ...sentSampling(request, thinking),
  };
  // A system prompt in parts goes as text blocks, one a part.
  if (system.length === 1) body.system = system[0];
  else if (system.length > 1) body.system = system.map((text) => ({ type: 'text', text }));
  if (request.stop !== undefined) body.stop_sequences = [...request.stop];
  const answer = answerSchema(request);
  if (answer !== undefined) body.output_config = { format: { type: 'json_schema', schema: answer.schema } };
  const throughTool = answersThroughTool(request);
  const tools = throughTool ? [jsonAnswerTool] : request.tools;
  if (tools !== undefined) {
    body.tools = tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      input_schema: inputSchema(tool),
      ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
    }));
  }
  const toolChoice = throughTool
    ? anthropicToolChoice({ name: jsonAnswerTool.name })
    : request.toolChoice && anthropicToolChoice(request.toolChoice);
  // The protocol's `none` choice takes no other setting: no tool is called at all, let alone several.
  if (request.parallelToolCalls === false && request.tools !== undefined && toolChoice?.type !== 'none')
    body.tool_choice = { ...(toolChoice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  else if (toolChoice !== undefined) body.tool_choice = toolChoice;
  if (thinking !== undefined) body.thinking = thinking;
  return body;
}

/**
 * Messages over SSE, decoded into canonical events: input tokens from message_start, output from the last
 * message_delta. An answer asked for through the json_answer tool is that tool's input, as text.
 */
export function streamAnthropicMessages(
  http: UpstreamHttp,
  request: ChatRequest,
  options: CallOptions,
): AsyncIterable<ChatStreamEvent> {
  const events = messagesEvents(http, request, options);
  return answersThroughTool(request) ? answeredThroughTool(events) : events;
}

/**
 * The forced tool's input as the answer's text, streamed as it comes, and its call as the normal end of a turn;
 * the protocol sends nothing else with a forced tool (any text beside it would not be the JSON asked for).
 */
async function* answeredThroughTool(events: AsyncIterable<ChatStreamEvent>): AsyncGenerator<ChatStreamEvent> {
  for await (const event of events) {
    if (event.type === 'tool-call-delta') yield { type: 'text-delta', text: event.arguments };
    else if (event.type === 'finish' && event.finishReason.unified === 'tool-calls')
      yield { ...event, finishReason: { unified: 'stop', raw: 'end_turn' } };
    else if (event.type === 'finish') yield event;
  }
}

async function* messagesEvents(
  http: UpstreamHttp,
  request: ChatRequest,
  options: CallOptions,
): AsyncGenerator<ChatStreamEvent> {
  const response = await http.postJson(options.target, {
    path: '/messages',
    headers: anthropicHeaders(options.target),
    body: encodeMessagesRequest(request),
  });
  // The usage reports merged so far; none at all means the upstream reported no usage.
  let usage: MessagesUsage | undefined;
  let finish: FinishReason = { unified: 'other', raw: undefined };
  // Content block index -> the answer's tool call number, and whether any argument text arrived for it.
  const toolBlocks = new Map<number, { index: number; sentArguments: boolean }>();
  for await (const message of decodeSse(response.body, options.target.maxEventCharacters)) {
    const event = checkedEvent(message.data, isMessagesStreamEvent);
    // Events of types the protocol added later carry nothing this decoding reads.
    if (!isKnownStreamEvent(event)) continue;
    switch (event.type) {
      case 'message_start':
        if (event.message.usage) usage = streamUsageAfter(usage ?? {}, event.message.usage);
        break;
      case 'content_block_start': {
        const block = event.content_block;
        if (isKnownStartedBlock(block) && block.type === 'tool_use') {
          const index = toolBlocks.size;
          toolBlocks.set(event.index ?? 0, { index, sentArguments: false });
          yield { type: 'tool-call-start', index, id: block.id ?? newId('call'), name: block.name ?? '' };
        }
        break;
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (!isKnownDelta(delta)) break;
        if (delta.type === 'text_delta' && delta.text) yield { type: 'text-delta', text: delta.text };
        const tool = toolBlocks.get(event.index ?? 0);
        if (delta.type === 'input_json_delta' && delta.partial_json && tool) {
          tool.sentArguments = true;
          yield { type: 'tool-call-delta', index: tool.index, arguments: delta.partial_json };
        }
        break;
      }
      case 'content_block_stop': {
        // A call without arguments streams no JSON at all; its arguments are the empty object.
        const tool = toolBlocks.get(event.index ?? 0);
        if (tool && !tool.sentArguments) yield { type: 'tool-call-delta', index: tool.index, arguments: '{}' };
        break;
      }
      case 'message_delta':
        if (event.delta.stop_reason) finish = finishReasonOf(event.delta.stop_reason);
        if (event.usage) usage = streamUsageAfter(usage ?? {}, event.usage);
        break;
      case 'message_stop':
        yield { type: 'finish', finishReason: finish, usage: usage && usageOf(usage) };
        return;
      case 'error':
        throw new UpstreamUnreachableError(
          'protocol',
          `the upstream reported an error mid-stream: ${event.error.message ?? 'unknown'}`,
        );
    }
  }
  throw new UpstreamUnreachableError('protocol', 'the upstream stream ended before it was complete');
}
