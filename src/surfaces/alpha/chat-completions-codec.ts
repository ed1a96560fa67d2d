import type { RelayTerms } from '../../gateway/text-generation.ts';
import { randomBytes } from 'node:crypto';
import {
  compactContent,
  imageFromUrl,
  leftOut,
  nameToolResults,
  newInputNotes,
  contentInParts,
  toolResultText,
  unkeptFormatName,
  toolDefinition,
  type ChatMessage,
  type ChatPart,
  type ChatRequest,
  type ChatStreamEvent,
  type DecodedChat,
  type InputNotes,
  type ResponseFormat,
  type TokenLogprob,
  type ToolChoice,
  type ToolDefinition,
} from '../../domain/chat.ts';
import { plainCallId } from '../../domain/call-ids.ts';
import { requireNestingWithin, requireToolTextsWithin } from '../../domain/nesting.ts';
import type { CollectedAnswer, CollectedChoice } from '../../gateway/collected-answer.ts';
import type { Static } from 'typebox';
import {
  isChatFunctionCall,
  isChatFunctionTool,
  isChatImagePart,
  isChatJsonSchemaFormat,
  isChatNamedToolChoice,
  isChatTextPart,
  isRefusalPart,
  isPlainFormat,
  isStoredAudioMessage,
  wireFinishReasons,
  wireLogprobs,
  wireUsage,
  type ChatCompletionsRequest,
  type ChatFunctionTool,
  type ChatJsonSchemaFormat,
  type ChatMessage as ChatMessageWire,
  type ToolChoiceWord,
} from '../../protocols/openai/chat-completions.ts';

/** Wire field -> native parameter name, for the capability gate. */
export const gatedFields: Readonly<Record<string, string>> = {
  temperature: 'temperature',
  max_tokens: 'maxTokens',
  max_completion_tokens: 'maxTokens',
  top_p: 'topP',
  stop: 'stop',
  seed: 'seed',
  tools: 'tools',
  tool_choice: 'toolChoice',
  response_format: 'responseFormat',
  presence_penalty: 'presencePenalty',
  frequency_penalty: 'frequencyPenalty',
  logprobs: 'logprobs',
  top_logprobs: 'topLogprobs',
  logit_bias: 'logitBias',
  parallel_tool_calls: 'parallelToolCalls',
  reasoning_effort: 'reasoningEffort',
  verbosity: 'verbosity',
  web_search_options: 'webSearchOptions',
};

const roles: Record<string, ChatMessage['role'] | undefined> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  assistant: 'assistant',
  tool: 'tool',
};

/** A function tool's definition, as Chat nests it under `function` and Responses writes it on the tool. */
type FunctionDefinition = ChatFunctionTool['function'];

/**
 * The function tools as canonical definitions. A tool of another kind exists only upstream of this protocol:
 * Chat names it as untranslatable; Responses' built-in tools (`builtInKinds`) are left out, so translated, the
 * request keeps its function tools. `path` is where a tool's definition stands in the tool, for errors.
 */
export function decodeFunctionTools<T extends { type: string }>(
  tools: readonly T[] | undefined,
  options: {
    untranslatable: Set<string>;
    definitionOf: (tool: T) => FunctionDefinition | undefined;
    path: string;
    builtInKinds?: boolean;
  },
): ToolDefinition[] | undefined {
  if (!tools) return undefined;
  const definitions: ToolDefinition[] = [];
  for (const [index, tool] of tools.entries()) {
    const definition = options.definitionOf(tool);
    if (!definition) {
      if (!options.builtInKinds) options.untranslatable.add(`"${tool.type}" tools`);
      continue;
    }
    requireNestingWithin(definition.parameters, `body.tools.${index}.${options.path}parameters`);
    definitions.push(toolDefinition(definition));
  }
  return definitions;
}

/** `auto`, `none`, `required`, or the one function `named` reads from the choice; another choice is untranslatable. */
export function decodeToolChoice<T extends object>(
  choice: ToolChoiceWord | T | undefined,
  { untranslatable, named }: { untranslatable: Set<string>; named: (choice: T) => string | undefined },
): ToolChoice | undefined {
  if (choice === undefined || typeof choice === 'string') return choice;
  const name = named(choice);
  if (name !== undefined) return { name };
  untranslatable.add('this tool_choice');
  return undefined;
}

function toolCallsOf(calls: ChatMessageWire['tool_calls'], notes: InputNotes): ChatPart[] {
  const parts: ChatPart[] = [];
  for (const call of calls ?? []) {
    if (!isChatFunctionCall(call)) {
      leftOut(notes, `"${call.type}" tool calls`);
      continue;
    }
    parts.push({
      type: 'tool-call',
      call: { id: call.id, name: call.function.name, arguments: call.function.arguments },
    });
  }
  return parts;
}

function contentParts(content: ChatMessageWire['content'], notes: InputNotes): ChatPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: ChatPart[] = [];
  for (const part of content ?? []) {
    if (isChatTextPart(part)) parts.push({ type: 'text', text: part.text });
    // What the model said in refusing is the assistant's words to the other protocols, which have no refusal part.
    else if (isRefusalPart(part)) parts.push({ type: 'text', text: part.refusal });
    else if (isChatImagePart(part)) parts.push({ type: 'image', image: imageFromUrl(part.image_url.url) });
    else leftOut(notes, `"${part.type}" content parts`);
  }
  return parts;
}

/** The fields of a JSON schema answer format, as Chat nests them under `json_schema` and Responses writes them on the format. */
type ChatJsonSchemaFields = Static<typeof ChatJsonSchemaFormat>['json_schema'];

/**
 * `text` and `json_object` as they are, `json_schema` from the schema's fields `schemaOf` reads (the schema, at
 * `schemaField`, within the nesting translation walks by recursion); a format of another kind is left for the
 * capability gate to name.
 */
export function decodeResponseFormat<T extends { type: string }>(
  format: T | undefined,
  schemaOf: (format: T) => ChatJsonSchemaFields | undefined,
  schemaField: string,
): ResponseFormat | undefined {
  if (format === undefined) return undefined;
  if (isPlainFormat(format)) return { type: format.type };
  const spec = schemaOf(format);
  if (!spec) return undefined;
  const { name, description, schema, strict } = spec;
  requireNestingWithin(schema, schemaField);
  return {
    type: 'json_schema',
    name,
    ...(description !== undefined ? { description } : {}),
    ...(schema !== undefined ? { schema } : {}),
    ...(typeof strict === 'boolean' ? { strict } : {}),
  };
}

/** The generation parameters beyond the basics, so they reach an upstream of another protocol too. */
function decodeParameters(body: ChatCompletionsRequest): Omit<Partial<ChatRequest>, 'upstreamModel' | 'messages'> {
  return {
    presencePenalty: body.presence_penalty,
    frequencyPenalty: body.frequency_penalty,
    logprobs: body.logprobs ?? undefined,
    topLogprobs: body.top_logprobs ?? undefined,
    logitBias: body.logit_bias ?? undefined,
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    reasoningEffort: body.reasoning_effort ?? undefined,
    verbosity: body.verbosity ?? undefined,
    webSearchOptions: body.web_search_options ?? undefined,
    responseFormat: decodeResponseFormat(
      body.response_format,
      (format) => (isChatJsonSchemaFormat(format) ? format.json_schema : undefined),
      'body.response_format.json_schema.schema',
    ),
  };
}

/** Whether a wire object has `field` set (to anything but null), whether or not its schema names it. */
const hasField = (value: object, field: string) => Object.hasOwn(value, field) && Reflect.get(value, field) != null;

export function decodeChatMessages(body: ChatCompletionsRequest): DecodedChat {
  const notes = newInputNotes();
  const messages: ChatMessage[] = [];
  let storedAudio = false;
  // Legacy function calling, which OpenAI still reads (and bills as input): the functions and an assistant's call
  // of one. The canonical model has tools only, so only a relay carries them, and the bound counts neither.
  if (hasField(body, 'functions')) leftOut(notes, 'functions (legacy function calling)');
  for (const [index, message] of body.messages.entries()) {
    const role = roles[message.role];
    if (!role) notes.untranslatable.add(`"${message.role}" messages`);
    if (hasField(message, 'function_call')) leftOut(notes, 'messages.function_call (legacy function calling)');
    // Earlier audio the server keeps, named by id: relayed, the server reads it again and the bound never sees
    // it; translated, the turn goes without it, named.
    if (isStoredAudioMessage(message)) {
      notes.uncounted = true;
      storedAudio = true;
    }
    const parts = contentParts(message.content, notes);
    if (role === 'tool') {
      // A tool message's content is its text: a picture in it is read by a relay's upstream and counted nowhere,
      // and the other protocols' results would go without it.
      if (parts.some((part) => part.type === 'image')) leftOut(notes, 'images in tool messages');
      const result: ChatPart[] = [
        {
          type: 'tool-result',
          result: { callId: message.tool_call_id ?? '', name: '', output: toolResultText(parts) },
        },
      ];
      requireToolTextsWithin(result, `body.messages.${index}`);
      messages.push({ role, content: result });
      continue;
    }
    if (role === 'assistant') {
      // A refused answer's message, as a client sends it back: its refusal is what the assistant said.
      if (message.refusal) parts.push({ type: 'text', text: message.refusal });
      parts.push(...toolCallsOf(message.tool_calls, notes));
    }
    requireToolTextsWithin(parts, `body.messages.${index}`);
    // The client's own text parts stay parts; an assistant's are one text.
    messages.push({
      role: role ?? 'user',
      content: role === 'assistant' ? compactContent(parts) : contentInParts(parts),
    });
  }
  const { untranslatable } = notes;
  const tools = decodeFunctionTools(body.tools, {
    untranslatable,
    definitionOf: (tool) => (isChatFunctionTool(tool) ? tool.function : undefined),
    path: 'function.',
  });
  const toolChoice = decodeToolChoice(body.tool_choice, {
    untranslatable,
    named: (choice) => (isChatNamedToolChoice(choice) ? choice.function.name : undefined),
  });
  const named = nameToolResults(messages);
  const parameters = decodeParameters(body);
  return {
    messages: named.messages,
    unmatchedToolResults: body.messages.flatMap((message, index) =>
      roles[message.role] === 'tool' && named.unmatched.has(message.tool_call_id ?? '')
        ? [`body.messages[${index}].tool_call_id`]
        : [],
    ),
    ...parameters,
    ...(tools ? { tools } : {}),
    ...(toolChoice ? { toolChoice } : {}),
    untranslatable: [...untranslatable],
    uncountedInput: notes.uncounted,
    notTranslated: [
      // A participant's name tells the model who speaks; the other protocols have no place for it.
      ...(body.messages.some((message) => typeof message.name === 'string') ? ['messages.name'] : []),
      ...(storedAudio ? ['messages.audio'] : []),
      // Translated, a protocol taking the schema alone goes without the format's name where its title says another.
      ...(unkeptFormatName(parameters.responseFormat) ? ['response_format.json_schema.name'] : []),
    ],
  };
}

/**
 * The body sent to an upstream of the same protocol: as given, with the model rewritten, usage forced on
 * streams, and the output limit the reservation covers in the limit field the client used (`max_tokens`
 * when it used none).
 */
export function relayBody(
  body: ChatCompletionsRequest,
  { upstreamModel, droppedNativeNames, maxOutputTokens }: RelayTerms,
): Record<string, unknown> {
  const forwarded: Record<string, unknown> = { ...body, model: upstreamModel };
  for (const [field, native] of Object.entries(gatedFields))
    if (droppedNativeNames.includes(native)) delete forwarded[field];
  if (body.max_completion_tokens !== undefined) forwarded.max_completion_tokens = maxOutputTokens;
  if (body.max_tokens !== undefined || body.max_completion_tokens === undefined) forwarded.max_tokens = maxOutputTokens;
  if (body.stream === true) forwarded.stream_options = { ...body.stream_options, include_usage: true };
  if (body.messages.some(carriesSignature)) forwarded.messages = body.messages.map(withPlainCallIds);
  return forwarded;
}

/** Whether a message names a call by an id the gateway gave out with a Gemini signature in it (domain/call-ids.ts). */
function carriesSignature(message: ChatMessageWire): boolean {
  return isSigned(message.tool_call_id) || (message.tool_calls ?? []).some((call) => 'id' in call && isSigned(call.id));
}

const isSigned = (id: unknown): boolean => typeof id === 'string' && plainCallId(id) !== id;

/** The message with its calls' ids as the protocol takes them: at most 40 characters, no signature. */
function withPlainCallIds(message: ChatMessageWire): ChatMessageWire {
  if (!carriesSignature(message)) return message;
  return {
    ...message,
    ...(typeof message.tool_call_id === 'string' ? { tool_call_id: plainCallId(message.tool_call_id) } : {}),
    ...(message.tool_calls
      ? {
          tool_calls: message.tool_calls.map((call) =>
            'id' in call && typeof call.id === 'string' ? { ...call, id: plainCallId(call.id) } : call,
          ),
        }
      : {}),
  };
}

/** Encodes canonical events as `chat.completion.chunk` objects, in the order the real protocol sends them. */
export class ChunkEncoder {
  private readonly base: { id: string; object: 'chat.completion.chunk'; created: number; model: string };
  /** The choices whose first chunk (with the role) has been sent. */
  private readonly started = new Set<number>();
  /** Log probabilities of each choice's next output, sent with its chunk as the protocol does. */
  private readonly logprobs = new Map<number, TokenLogprob[]>();

  constructor(model: string) {
    this.base = {
      id: `chatcmpl-${randomBytes(12).toString('base64url')}`,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model,
    };
  }

  encode(event: ChatStreamEvent): object[] {
    const chunks: object[] = [];
    const index = event.type === 'finish' ? 0 : (event.choice ?? 0);
    if (event.type === 'logprobs') {
      const held = this.logprobs.get(index);
      if (held) for (const token of event.tokens) held.push(token);
      else this.logprobs.set(index, [...event.tokens]);
      return chunks;
    }
    const choice = (delta: object, finishReason: string | null) => {
      const logprobs = this.logprobs.get(index);
      this.logprobs.delete(index);
      return {
        ...this.base,
        choices: [{ index, delta, logprobs: logprobs ? wireLogprobs(logprobs) : null, finish_reason: finishReason }],
        usage: null,
      };
    };
    if (!this.started.has(index)) {
      this.started.add(index);
      chunks.push({
        ...this.base,
        choices: [
          { index, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null },
        ],
        usage: null,
      });
    }
    switch (event.type) {
      case 'text-delta':
        chunks.push(choice({ content: event.text }, null));
        break;
      case 'tool-call-start':
        chunks.push(
          choice(
            {
              tool_calls: [
                { index: event.index, id: event.id, type: 'function', function: { name: event.name, arguments: '' } },
              ],
            },
            null,
          ),
        );
        break;
      case 'tool-call-delta':
        chunks.push(choice({ tool_calls: [{ index: event.index, function: { arguments: event.arguments } }] }, null));
        break;
      case 'choice-finish':
        chunks.push(choice({}, wireFinishReasons[event.finishReason.unified]));
        break;
      case 'finish':
        chunks.push(choice({}, wireFinishReasons[event.finishReason.unified]));
        if (event.usage) chunks.push({ ...this.base, choices: [], usage: wireUsage(event.usage) });
    }
    return chunks;
  }
}

function messageOf({ text, toolCalls }: CollectedChoice): object {
  const calls = toolCalls.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  return {
    role: 'assistant',
    content: text === '' && calls.length > 0 ? null : text,
    refusal: null,
    annotations: [],
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

/** A whole `chat.completion` from a collected answer: a choice per completion. */
export function chatCompletionOf(model: string, answer: CollectedAnswer): object {
  const { finish, alternatives } = answer;
  const choices = [{ ...answer, finishReason: finish?.finishReason }, ...alternatives].map((choice, index) => ({
    index,
    message: messageOf(choice),
    logprobs: choice.logprobs ? wireLogprobs(choice.logprobs) : null,
    finish_reason: wireFinishReasons[choice.finishReason?.unified ?? 'other'],
  }));
  return {
    id: `chatcmpl-${randomBytes(12).toString('base64url')}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices,
    ...(finish?.usage ? { usage: wireUsage(finish.usage) } : {}),
  };
}
