import {
  promptTextOf,
  textOf,
  type ChatMessage,
  type ChatParameterName,
  type ChatRequest,
  type ChatStreamEvent,
  type FinishReason,
  type ToolDefinition,
} from '../../domain/chat.ts';
import { newId } from '../../domain/ids.ts';
import { countTextTokens, textWithinTokens } from '../../domain/tokenizer.ts';
import { schemaInPrompt } from './prompt-schema.ts';
import { valueMatchingSchema } from './schema-value.ts';

/** Words per streamed chunk: small enough that a short answer still arrives as several events. */
const wordsPerChunk = 3;

/** The parameters the sandbox acts on (or, for sampling, accepts as a model would): none is dropped unseen. */
const carried = new Set<ChatParameterName>([
  'maxTokens',
  'temperature',
  'topP',
  'stop',
  'seed',
  'tools',
  'toolChoice',
  'parallelToolCalls',
  'responseFormat',
  'structuredOutputs',
  'strictTools',
]);

export function sandboxCarries(name: ChatParameterName): boolean {
  return carried.has(name);
}

/** Words that ask for a tool without naming one: "call", or "use a tool" (and "use the tool", "use tools"). */
const toolRequest = /\bcall\b|\buse\s+(?:an?\s+|the\s+)?tools?\b/i;

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function lastUserText(request: ChatRequest): string {
  const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
  return lastUser ? textOf(lastUser.content) : '';
}

/**
 * The tools the answer calls: none after tool results or under `none`; the named one under a named choice;
 * under `required` or `auto`, every tool the last user message names (one when parallel calls are off), else
 * the first tool when `required`, or under `auto` when the message says "call" or "use a tool".
 */
export function toolsToCall(request: ChatRequest): ToolDefinition[] {
  const tools = request.tools ?? [];
  const choice = request.toolChoice ?? 'auto';
  if (tools.length === 0 || choice === 'none' || request.messages.at(-1)?.role === 'tool') return [];
  if (typeof choice === 'object') return tools.filter((tool) => tool.name === choice.name).slice(0, 1);
  const text = lastUserText(request);
  const named = tools.filter((tool) => new RegExp(`(?<![\\w-])${escaped(tool.name)}(?![\\w-])`, 'i').test(text));
  if (named.length > 0) return request.parallelToolCalls === false ? named.slice(0, 1) : named;
  return choice === 'required' || toolRequest.test(text) ? tools.slice(0, 1) : [];
}

/** A call's argument object: valid against the tool's schema, its strings made of the last user message. */
export function toolArguments(tool: ToolDefinition, text: string): string {
  const value = tool.parameters ? valueMatchingSchema(tool.parameters, text) : {};
  return JSON.stringify(value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {});
}

/**
 * The structured answer to a JSON response format: a value valid against the schema, its strings made of
 * `text`; for JSON mode without a schema, a value of the object schema the prompt gives, else an object
 * holding the text. Undefined for free text.
 */
function answerMatchingSchema(request: ChatRequest, text: string): string | undefined {
  const format = request.responseFormat;
  if (format?.type === 'json_schema')
    return JSON.stringify(valueMatchingSchema(format.schema ?? { type: 'object' }, text));
  if (format?.type !== 'json_object') return undefined;
  const prompted = schemaInPrompt(request.messages);
  const value = prompted && valueMatchingSchema(prompted, text);
  return JSON.stringify(value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { text });
}

/** What the results of the last tool calls said, as a sentence naming each function. */
function toolResultsText(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .flatMap((part) =>
      part.type === 'tool-result' ? [`${part.result.name || 'the tool'} returned ${part.result.output}`] : [],
    )
    .join('\n');
}

/**
 * The words to answer: the last user message, or after tool calls a sentence quoting every result of that
 * turn, which a protocol sends in one message (Anthropic, Gemini, OpenAI's Responses) or one message a result
 * (Chat Completions).
 */
function answerText(request: ChatRequest): string {
  const { messages } = request;
  const lastIndex = messages.findLastIndex((message) => message.role === 'user' || message.role === 'tool');
  const last = messages[lastIndex];
  if (!last) return '';
  let text = promptTextOf(last.content);
  if (last.role === 'tool') {
    let first = lastIndex;
    while (first > 0 && messages[first - 1]!.role === 'tool') first -= 1;
    text = messages
      .slice(first, lastIndex + 1)
      .map(toolResultsText)
      .join('\n');
  }
  return answerMatchingSchema(request, text) ?? text;
}

/** The answer cut at the first stop sequence, then at the output limit, with the finish that says which. */
function limited(request: ChatRequest, answer: string): { text: string; finishReason: FinishReason } {
  let text = answer;
  let finishReason: FinishReason = { unified: 'stop', raw: 'stop' };
  // The sequence met first ends the answer, and is named as a provider that says which does.
  const [first] = (request.stop ?? [])
    .map((stop) => ({ stop, index: text.indexOf(stop) }))
    .filter(({ index }) => index >= 0)
    .sort((a, b) => a.index - b.index);
  if (first) {
    text = text.slice(0, first.index);
    finishReason = { unified: 'stop', raw: 'stop_sequence', stopSequence: first.stop };
  }
  if (request.maxTokens !== undefined) {
    const within = textWithinTokens(text, request.maxTokens);
    if (within.cut) {
      text = within.text;
      finishReason = { unified: 'length', raw: 'length' };
    }
  }
  return { text, finishReason };
}

/**
 * The built-in offline chat model: calls tools when asked to (`toolsToCall`), answers JSON that matches the
 * requested response format, and otherwise answers with the last user message (or the last tool results);
 * streamed a few words at a time, with token usage counted by the tokenizer the gateway meters with.
 * Deterministic but for call ids, so a newcomer or a CI can exercise every surface without an upstream.
 */
export async function* sandboxChat(request: ChatRequest): AsyncGenerator<ChatStreamEvent> {
  const inputTokens = request.messages.reduce(
    (sum, message) => sum + countTextTokens(promptTextOf(message.content)),
    0,
  );
  const tools = toolsToCall(request);
  if (tools.length > 0) {
    const text = lastUserText(request);
    let outputTokens = 0;
    for (const [index, tool] of tools.entries()) {
      const args = toolArguments(tool, text);
      outputTokens += countTextTokens(`${tool.name} ${args}`);
      yield { type: 'tool-call-start', index, id: newId('call'), name: tool.name };
      // In two fragments, as providers stream them: a client must join them.
      const half = Math.ceil(args.length / 2);
      yield { type: 'tool-call-delta', index, arguments: args.slice(0, half) };
      yield { type: 'tool-call-delta', index, arguments: args.slice(half) };
    }
    yield {
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: { inputTokens, outputTokens },
    };
    return;
  }
  const { text, finishReason } = limited(request, answerText(request));
  const words = text.match(/\s*\S+\s*/g) ?? [];
  for (let start = 0; start < words.length; start += wordsPerChunk) {
    yield { type: 'text-delta', text: words.slice(start, start + wordsPerChunk).join('') };
  }
  yield { type: 'finish', finishReason, usage: { inputTokens, outputTokens: countTextTokens(text) } };
}
