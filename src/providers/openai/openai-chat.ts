import {
  choiceField,
  imageUrlOf,
  partsOf,
  textOf,
  toolCallsIn,
  type ChatMessage,
  type ChatParameterName,
  type ChatRequest,
  type ChatStreamEvent,
  type FinishReason,
  type ResponseFormat,
  type TokenUsage,
  type ToolChoice,
  type ToolDefinition,
  type ToolResult,
} from '../../domain/chat.ts';
import { plainCallId } from '../../domain/call-ids.ts';
import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import {
  calledFinish,
  finishReasonOf,
  refusedFinish,
  isChatCompletionChunk,
  objectRootSchema,
  strictSchema,
  streamTerminator,
  tokenLogprobsOf,
  usageOf,
  type ChatCompletionsRequest,
  type ChatContentPart,
  type ChatFunctionTool,
  type ChatImagePart,
  type ChatMessage as WireMessage,
  type ChatResponseFormat,
  type ChatTextPart,
  type ChatToolChoice,
  type ToolCallFragment,
} from '../../protocols/openai/chat-completions.ts';
import type { CallOptions, ProviderTarget } from '../provider-adapter.ts';
import { decodeSse } from '../shared/sse-decoder.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { askedChoice, checkedEvent } from '../shared/wire-data.ts';
import { StreamedCalls, type CallEvent } from './streamed-calls.ts';

/**
 * A message's content: a string, or parts where it has images or several texts (a system prompt a client gave in
 * parts goes as text parts, never run together).
 */
function openAiContent(content: ChatMessage['content']): string | ChatContentPart[] {
  if (typeof content === 'string') return content;
  const texts = content.filter((part) => part.type === 'text').length;
  if (texts < 2 && !content.some((part) => part.type === 'image')) return textOf(content);
  return content.flatMap((part): Array<ChatTextPart | ChatImagePart> => {
    if (part.type === 'text') return [{ type: 'text', text: part.text }];
    if (part.type === 'image') return [{ type: 'image_url', image_url: { url: imageUrlOf(part.image) } }];
    return [];
  });
}

/**
 * A tool result's content: the protocol has no flag for a call that failed (Anthropic's `is_error`, Gemini's
 * `error` response), so the model is told in the content.
 */
function toolOutput(result: ToolResult): string {
  return result.isError ? `Error: ${result.output}` : result.output;
}

/** One canonical message as the protocol's messages: tool results are one `tool` message each. */
function openAiMessages(message: ChatMessage): WireMessage[] {
  if (message.role === 'tool') {
    return partsOf(message.content).flatMap((part) =>
      part.type === 'tool-result'
        ? [{ role: 'tool', tool_call_id: plainCallId(part.result.callId), content: toolOutput(part.result) }]
        : [],
    );
  }
  const calls = toolCallsIn(message.content);
  if (message.role !== 'assistant' || calls.length === 0)
    return [{ role: message.role, content: openAiContent(message.content) }];
  const text = textOf(message.content);
  return [
    {
      role: 'assistant',
      content: text === '' ? null : text,
      tool_calls: calls.map((call) => ({
        id: plainCallId(call.id),
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      })),
    },
  ];
}

export function openAiToolChoice(choice: ToolChoice): ChatToolChoice {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

/** OpenAI itself, which refuses the fields its compatible servers and routers add to the protocol. */
export function isOpenAiItself(baseUrl: string): boolean {
  return new URL(baseUrl).hostname === 'api.openai.com';
}

const openAiParameters = new Set<ChatParameterName>([
  'maxTokens',
  'temperature',
  'topP',
  'stop',
  'seed',
  'tools',
  'toolChoice',
  'responseFormat',
  'presencePenalty',
  'frequencyPenalty',
  'logprobs',
  'topLogprobs',
  'logitBias',
  'parallelToolCalls',
  'reasoningEffort',
  'verbosity',
  'webSearchOptions',
  'choices',
]);
/** What routers (OpenRouter and the like) and self-hosted servers add: more sampling fields and a reasoning object. */
const compatibleParameters = new Set<ChatParameterName>([
  'topK',
  'repetitionPenalty',
  'minP',
  'topA',
  'includeReasoning',
  'thinking',
]);

export function openAiCarries(name: ChatParameterName, request: ChatRequest, target: ProviderTarget): boolean {
  const format = request.responseFormat;
  // The protocol says "structured" as the strictness of a JSON schema answer format, which only a schema it can
  // hold strictly takes.
  // A strict tool goes strict only where its schema is one the protocol holds strictly (`openAiTool`).
  if (name === 'strictTools')
    return (request.tools ?? []).every((tool) => tool.strict !== true || strictSchema(toolParameters(tool)));
  if (name === 'structuredOutputs')
    return (
      format?.type === 'json_schema' && strictness(format, request) === (format.strict ?? request.structuredOutputs)
    );
  // A schema answer is a JSON object: a schema of another root (an array, a string) is one the protocol cannot ask for.
  if (name === 'responseFormat' && format?.type === 'json_schema' && format.schema !== undefined)
    return objectRootSchema(format.schema);
  return openAiParameters.has(name) || (compatibleParameters.has(name) && !isOpenAiItself(target.baseUrl));
}

/**
 * The `strict` a JSON schema format is sent with: as asked, except that a schema the protocol cannot hold strictly
 * (another protocol's, which holds answers to any schema) goes best-effort, and the strictness is named as dropped.
 */
function strictness(
  format: Extract<ResponseFormat, { type: 'json_schema' }>,
  { structuredOutputs }: Pick<ChatRequest, 'structuredOutputs'>,
): boolean | undefined {
  const strict = format.strict ?? structuredOutputs;
  return strict === true && format.schema !== undefined && !strictSchema(format.schema) ? undefined : strict;
}

function openAiResponseFormat(
  format: ResponseFormat,
  request: Pick<ChatRequest, 'structuredOutputs'>,
): ChatResponseFormat {
  if (format.type !== 'json_schema') return { type: format.type };
  const strict = strictness(format, request);
  const schema = {
    name: format.name,
    ...(format.description !== undefined ? { description: format.description } : {}),
    ...(format.schema !== undefined ? { schema: format.schema } : {}),
  };
  return { type: 'json_schema', json_schema: { ...schema, ...(strict !== undefined ? { strict } : {}) } };
}

/** A tool's parameters; a function of none takes an empty object. */
const toolParameters = (tool: ToolDefinition) => tool.parameters ?? { type: 'object', properties: {} };

/**
 * A function tool as the protocol takes it. A strict tool of another protocol (which holds arguments to any
 * schema) whose schema this one cannot hold strictly goes best-effort, as the Responses API itself does with one.
 */
function openAiTool(tool: ToolDefinition): ChatFunctionTool {
  const parameters = toolParameters(tool);
  const strict = tool.strict === true && !strictSchema(parameters) ? undefined : tool.strict;
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      parameters,
      ...(strict !== undefined ? { strict } : {}),
    },
  };
}

/** A router's reasoning object: the thinking budget, or thinking off, and whether the reasoning text comes back. */
function routerReasoning({ thinking, includeReasoning }: ChatRequest): object | undefined {
  if (thinking === undefined && includeReasoning === undefined) return undefined;
  return {
    ...(thinking?.type === 'enabled' ? { max_tokens: thinking.budgetTokens } : {}),
    ...(thinking?.type === 'disabled' ? { enabled: false } : {}),
    ...(includeReasoning !== undefined ? { exclude: !includeReasoning } : {}),
  };
}

/** `compatible` adds what routers and self-hosted servers take beyond OpenAI's own fields. */
/**
 * The protocol's JSON mode refuses a conversation that does not ask for JSON in words (400 "'messages' must
 * contain the word 'json'"), which other protocols' JSON modes do not need: a request translated without the
 * word gets a system message that asks for it, as the protocol's documentation tells callers to.
 */
function jsonModeInstruction(request: ChatRequest): WireMessage[] {
  if (request.responseFormat?.type !== 'json_object') return [];
  const saysJson = request.messages.some((message) => /json/i.test(textOf(message.content)));
  return saysJson ? [] : [{ role: 'system', content: 'Answer in JSON.' }];
}

export function encodeChatRequest(
  request: ChatRequest,
  { compatible }: { compatible: boolean } = { compatible: false },
): ChatCompletionsRequest & Record<string, unknown> {
  const body: ChatCompletionsRequest & Record<string, unknown> = {
    model: request.upstreamModel,
    messages: [...jsonModeInstruction(request), ...request.messages.flatMap(openAiMessages)],
    stream: true,
    stream_options: { include_usage: true },
  };
  // OpenAI's reasoning models refuse the older `max_tokens`; compatible servers may know only that one.
  if (request.maxTokens !== undefined) body[compatible ? 'max_tokens' : 'max_completion_tokens'] = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop !== undefined) body.stop = [...request.stop];
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.choices !== undefined && request.choices > 1) body.n = request.choices;
  if (request.tools !== undefined) body.tools = request.tools.map(openAiTool);
  if (request.toolChoice !== undefined) body.tool_choice = openAiToolChoice(request.toolChoice);
  if (request.responseFormat !== undefined)
    body.response_format = openAiResponseFormat(request.responseFormat, request);
  const fields: Record<string, unknown> = {
    presence_penalty: request.presencePenalty,
    frequency_penalty: request.frequencyPenalty,
    logprobs: request.logprobs,
    top_logprobs: request.topLogprobs,
    logit_bias: request.logitBias,
    parallel_tool_calls: request.parallelToolCalls,
    reasoning_effort: request.reasoningEffort,
    verbosity: request.verbosity,
    web_search_options: request.webSearchOptions,
    ...(compatible
      ? {
          top_k: request.topK,
          repetition_penalty: request.repetitionPenalty,
          min_p: request.minP,
          top_a: request.topA,
          reasoning: routerReasoning(request),
        }
      : {}),
  };
  for (const [field, value] of Object.entries(fields)) if (value !== undefined) body[field] = value;
  return body;
}

/** The canonical events of a choice's tool-call fragments, each fragment read as part of the call it belongs to. */
function* toolCallEvents(
  calls: StreamedCalls,
  fragments: readonly ToolCallFragment[],
  number: { choice?: number },
): Generator<ChatStreamEvent> {
  for (const fragment of fragments) yield* numbered(calls.follow(fragment), number);
}

/** A choice's call events under the choice's number. */
function* numbered(events: readonly CallEvent[], number: { choice?: number }): Generator<ChatStreamEvent> {
  for (const event of events) yield { ...event, ...number };
}

/**
 * Chat completions over SSE, decoded into canonical events. A stream that ends without `[DONE]` was cut:
 * that is a failure, never a silent success.
 */
export async function* streamOpenAiChat(
  http: UpstreamHttp,
  request: ChatRequest,
  options: CallOptions,
): AsyncGenerator<ChatStreamEvent> {
  const response = await http.postJson(options.target, {
    path: '/chat/completions',
    headers: { authorization: options.target.apiKey.bearer() },
    body: encodeChatRequest(request, { compatible: !isOpenAiItself(options.target.baseUrl) }),
  });
  let finish: FinishReason | undefined;
  let usage: TokenUsage | undefined;
  // The choices (by index) that streamed a refusal, whose text is passed on as the answer's.
  const refused = new Set<number>();
  // The tool calls of each choice (by index), each streamed in fragments.
  const calls = new Map<number, StreamedCalls>();
  const callsOf = (choice: number) => {
    const known = calls.get(choice) ?? new StreamedCalls();
    calls.set(choice, known);
    return known;
  };
  for await (const event of decodeSse(response.body, options.target.maxEventCharacters)) {
    if (event.data === streamTerminator) {
      // A call still waiting for its name ends with a stream whose choice never said it finished.
      for (const [index, known] of calls)
        yield* numbered(known.release(), choiceField(askedChoice(index, request.choices)));
      yield { type: 'finish', finishReason: finish ?? { unified: 'other', raw: undefined }, usage };
      return;
    }
    const chunk = checkedEvent(event.data, isChatCompletionChunk);
    if (chunk.error)
      throw new UpstreamUnreachableError(
        'protocol',
        `the upstream reported an error mid-stream: ${chunk.error.message ?? 'unknown'}`,
      );
    for (const choice of chunk.choices ?? []) {
      // Each choice of several (`n`) streams under its own index; the first one's finish is the answer's.
      const index = choice.index ?? 0;
      const number = choiceField(askedChoice(index, request.choices));
      const known = callsOf(index);
      // A call waiting for its name (see StreamedCalls) starts before the choice's other output, as it came first.
      if (choice.delta?.content || choice.delta?.refusal) yield* numbered(known.release(), number);
      // Before the output they describe, so a surface can send them with it.
      if (choice.logprobs) {
        const tokens = tokenLogprobsOf(choice.logprobs);
        if (tokens.length > 0) yield { type: 'logprobs', tokens, ...number };
      }
      if (choice.delta?.content) yield { type: 'text-delta', text: choice.delta.content, ...number };
      if (choice.delta?.refusal) {
        refused.add(index);
        yield { type: 'text-delta', text: choice.delta.refusal, ...number };
      }
      yield* toolCallEvents(known, choice.delta?.tool_calls ?? [], number);
      if (!choice.finish_reason) continue;
      yield* numbered(known.release(), number);
      const called = calledFinish(finishReasonOf(choice.finish_reason), known.madeCalls);
      const reason = refusedFinish(called, refused.has(index));
      if (number.choice === undefined) finish = reason;
      else yield { type: 'choice-finish', choice: number.choice, finishReason: reason };
    }
    usage = usageOf(chunk.usage) ?? usage;
  }
  throw new UpstreamUnreachableError('protocol', 'the upstream stream ended before it was complete');
}
