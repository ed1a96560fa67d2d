import type { RelayTerms } from '../../gateway/text-generation.ts';
import { randomBytes } from 'node:crypto';
import {
  compactContent,
  imageFromUrl,
  nameToolResults,
  textOf,
  toolDefinition,
  type ChatMessage,
  type ChatPart,
  type ChatRequest,
  type ChatStreamEvent,
  type DecodedChat,
  type ResponseFormat,
  type ToolChoice,
  type ToolDefinition,
} from '../../domain/chat.ts';
import { booleanOf, numberOf, objectOf, stringOf } from '../../domain/wire-values.ts';
import { requireNestingWithin, requireToolTextsWithin } from '../../domain/nesting.ts';
import type { CollectedAnswer, CollectedChoice } from '../../gateway/text-generation.ts';
import { wireFinishReasons, wireUsage, type ChatCompletionsRequest } from '../../protocols/openai/chat-completions.ts';

/** The alpha (chat-completions) request as this surface reads it; unknown fields are kept and forwarded. */
export type ChatCompletionsBody = ChatCompletionsRequest & { [field: string]: unknown };

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

interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
}

interface WireToolCall {
  id?: unknown;
  type?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

/**
 * The protocol's function tools as canonical definitions. Chat nests each function under `function` and
 * reports other kinds of tool; Responses (`flat`) writes a function's fields on the tool itself, and its
 * built-in tools only exist upstream of this protocol, so translated, the request keeps its function tools.
 */
export function decodeFunctionTools(
  tools: unknown,
  untranslatable: Set<string>,
  flat = false,
): ToolDefinition[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const definitions: ToolDefinition[] = [];
  for (const [index, tool] of (
    tools as Array<{ type?: unknown; function?: unknown } & Record<string, unknown>>
  ).entries()) {
    if (flat && tool?.type !== 'function') continue;
    const fn = (flat ? tool : tool?.function) as
      | { name?: unknown; description?: unknown; parameters?: unknown }
      | undefined;
    if (tool?.type !== 'function' || typeof fn?.name !== 'string') {
      untranslatable.add(`"${String(tool?.type)}" tools`);
      continue;
    }
    requireNestingWithin(fn.parameters, `body.tools.${index}.${flat ? '' : 'function.'}parameters`);
    definitions.push(toolDefinition(fn.name, fn.description, fn.parameters));
  }
  return definitions;
}

/** `auto`, `none`, `required`, or one named function (`{type: 'function', function: {name}}`, or `{type, name}` flat). */
export function decodeToolChoice(choice: unknown, untranslatable: Set<string>): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  const named = choice as { type?: unknown; name?: unknown; function?: { name?: unknown } } | null;
  const name = named?.function?.name ?? named?.name;
  if (named?.type === 'function' && typeof name === 'string') return { name };
  untranslatable.add('this tool_choice');
  return undefined;
}

function toolCallsOf(calls: unknown, untranslatable: Set<string>): ChatPart[] {
  if (!Array.isArray(calls)) return [];
  const parts: ChatPart[] = [];
  for (const call of calls as WireToolCall[]) {
    if (call?.type !== 'function' || typeof call.id !== 'string' || typeof call.function?.name !== 'string') {
      untranslatable.add(`"${String(call?.type)}" tool calls`);
      continue;
    }
    const args = typeof call.function.arguments === 'string' ? call.function.arguments : '{}';
    parts.push({ type: 'tool-call', call: { id: call.id, name: call.function.name, arguments: args } });
  }
  return parts;
}

function contentParts(content: unknown, untranslatable: Set<string>): ChatPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const parts: ChatPart[] = [];
  for (const part of content as Array<{ type?: unknown; text?: unknown; image_url?: { url?: unknown } }>) {
    if (part?.type === 'text' && typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
    else if (part?.type === 'image_url' && typeof part.image_url?.url === 'string')
      parts.push({ type: 'image', image: imageFromUrl(part.image_url.url) });
    else untranslatable.add(`"${String(part?.type)}" content parts`);
  }
  return parts;
}

/**
 * `text`, `json_object`, or `json_schema` with a named schema; another shape is left for the gate to name.
 * Chat nests the schema's fields under `json_schema`; Responses (`text.format`) writes them on the format itself.
 */
export function decodeResponseFormat(format: unknown, flat = false): ResponseFormat | undefined {
  const wire = objectOf(format);
  if (wire?.type === 'text' || wire?.type === 'json_object') return { type: wire.type };
  const spec = flat ? wire : objectOf(wire?.json_schema);
  if (wire?.type !== 'json_schema' || typeof spec?.name !== 'string') return undefined;
  const { description, schema, strict } = spec;
  return {
    type: 'json_schema',
    name: spec.name,
    ...(typeof description === 'string' ? { description } : {}),
    ...(objectOf(schema) ? { schema: objectOf(schema) } : {}),
    ...(typeof strict === 'boolean' ? { strict } : {}),
  };
}

/** The generation parameters beyond the basics, so they reach an upstream of another protocol too. */
function decodeParameters(body: ChatCompletionsBody): Omit<Partial<ChatRequest>, 'upstreamModel' | 'messages'> {
  const logitBias = objectOf(body.logit_bias);
  return {
    presencePenalty: numberOf(body.presence_penalty),
    frequencyPenalty: numberOf(body.frequency_penalty),
    logprobs: booleanOf(body.logprobs),
    topLogprobs: numberOf(body.top_logprobs),
    logitBias:
      logitBias && Object.values(logitBias).every((bias) => typeof bias === 'number')
        ? (logitBias as Record<string, number>)
        : undefined,
    parallelToolCalls: booleanOf(body.parallel_tool_calls),
    reasoningEffort: stringOf(body.reasoning_effort),
    verbosity: stringOf(body.verbosity),
    webSearchOptions: objectOf(body.web_search_options),
    responseFormat: decodeResponseFormat(body.response_format),
  };
}

export function decodeChatMessages(body: ChatCompletionsBody): DecodedChat {
  const untranslatable = new Set<string>();
  const messages: ChatMessage[] = [];
  for (const [index, message] of (body.messages as WireMessage[]).entries()) {
    const role = roles[message.role];
    if (!role) untranslatable.add(`"${message.role}" messages`);
    const parts = contentParts(message.content, untranslatable);
    if (role === 'tool') {
      const result: ChatPart[] = [
        {
          type: 'tool-result',
          result: { callId: String(message.tool_call_id ?? ''), name: '', output: textOf(parts) },
        },
      ];
      requireToolTextsWithin(result, `body.messages.${index}`);
      messages.push({ role, content: result });
      continue;
    }
    if (role === 'assistant') parts.push(...toolCallsOf(message.tool_calls, untranslatable));
    requireToolTextsWithin(parts, `body.messages.${index}`);
    messages.push({ role: role ?? 'user', content: compactContent(parts) });
  }
  const tools = decodeFunctionTools(body.tools, untranslatable);
  const toolChoice = decodeToolChoice(body.tool_choice, untranslatable);
  return {
    messages: nameToolResults(messages),
    ...decodeParameters(body),
    ...(tools ? { tools } : {}),
    ...(toolChoice ? { toolChoice } : {}),
    untranslatable: [...untranslatable],
  };
}

/**
 * The body sent to an upstream of the same protocol: as given, with the model rewritten, usage forced on
 * streams, and the output limit the reservation covers in the limit field the client used (`max_tokens`
 * when it used none).
 */
export function relayBody(
  body: ChatCompletionsBody,
  { upstreamModel, droppedNativeNames, maxOutputTokens }: RelayTerms,
): Record<string, unknown> {
  const forwarded: Record<string, unknown> = { ...body, model: upstreamModel };
  for (const [field, native] of Object.entries(gatedFields))
    if (droppedNativeNames.includes(native)) delete forwarded[field];
  if (body.max_completion_tokens !== undefined) forwarded.max_completion_tokens = maxOutputTokens;
  if (body.max_tokens !== undefined || body.max_completion_tokens === undefined) forwarded.max_tokens = maxOutputTokens;
  if (body.stream === true) forwarded.stream_options = { ...body.stream_options, include_usage: true };
  return forwarded;
}

/** Encodes canonical events as `chat.completion.chunk` objects, in the order the real protocol sends them. */
export class ChunkEncoder {
  private readonly base: { id: string; object: 'chat.completion.chunk'; created: number; model: string };
  /** The choices whose first chunk (with the role) has been sent. */
  private readonly started = new Set<number>();

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
    const choice = (delta: object, finishReason: string | null) => ({
      ...this.base,
      choices: [{ index, delta, logprobs: null, finish_reason: finishReason }],
      usage: null,
    });
    if (!this.started.has(index)) {
      this.started.add(index);
      chunks.push(choice({ role: 'assistant', content: '', refusal: null }, null));
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
    logprobs: null,
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
