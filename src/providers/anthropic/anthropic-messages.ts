import {
  argumentsObject,
  textOf,
  type ChatMessage,
  type ChatParameterName,
  type ChatPart,
  type ChatRequest,
  type ChatStreamEvent,
  type FinishReason,
  type TokenUsage,
  type ToolChoice,
} from '../../domain/chat.ts';
import { newId } from '../../domain/ids.ts';
import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import { finishReasonOf, isMessagesStreamEvent, streamUsageAfter } from '../../protocols/anthropic/messages.ts';
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

function anthropicBlock(part: ChatPart): object {
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
        id: part.call.id,
        name: part.call.name,
        input: argumentsObject(part.call.arguments),
      };
    case 'tool-result':
      return {
        type: 'tool_result',
        tool_use_id: part.result.callId,
        content: part.result.output,
        ...(part.result.isError ? { is_error: true } : {}),
      };
  }
}

function anthropicBlocks(content: ChatMessage['content']): object[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map(anthropicBlock);
}

/**
 * The conversation as the protocol's alternating turns: tool results travel in a user turn, and adjacent
 * turns of one role (a tool result followed by the user's next words) become one turn.
 */
function anthropicMessages(messages: readonly ChatMessage[]): object[] {
  const turns: Array<{ role: 'user' | 'assistant'; content: string | object[] }> = [];
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

function anthropicToolChoice(choice: ToolChoice): object {
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

export function anthropicCarries(name: ChatParameterName, request: ChatRequest): boolean {
  // Parallel calls are switched off on the tool choice, which the protocol takes only with tools.
  if (name === 'parallelToolCalls') return request.tools !== undefined;
  return anthropicParameters.has(name);
}

export function encodeMessagesRequest(request: ChatRequest): Record<string, unknown> {
  const system = request.messages
    .filter((message) => message.role === 'system')
    .map((message) => textOf(message.content));
  const body: Record<string, unknown> = {
    model: request.upstreamModel,
    max_tokens: request.maxTokens ?? defaultMaxTokens,
    messages: anthropicMessages(request.messages),
    stream: true,
  };
  if (system.length > 0) body.system = system.join('\n\n');
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop !== undefined) body.stop_sequences = request.stop;
  if (request.tools !== undefined) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      input_schema: tool.parameters ?? { type: 'object', properties: {} },
    }));
  }
  const toolChoice = request.toolChoice && anthropicToolChoice(request.toolChoice);
  if (request.parallelToolCalls === false && request.tools !== undefined)
    body.tool_choice = { ...(toolChoice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  else if (toolChoice !== undefined) body.tool_choice = toolChoice;
  if (request.topK !== undefined) body.top_k = request.topK;
  if (request.thinking !== undefined)
    body.thinking =
      request.thinking.type === 'enabled'
        ? { type: 'enabled', budget_tokens: request.thinking.budgetTokens }
        : { type: 'disabled' };
  return body;
}

/** Messages over SSE, decoded into canonical events: input tokens from message_start, output from the last message_delta. */
export async function* streamAnthropicMessages(
  http: UpstreamHttp,
  request: ChatRequest,
  options: CallOptions,
): AsyncGenerator<ChatStreamEvent> {
  const response = await http.postJson(
    options.target,
    '/messages',
    anthropicHeaders(options.target),
    encodeMessagesRequest(request),
  );
  let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  let sawUsage = false;
  let finish: FinishReason = { unified: 'other', raw: undefined };
  // Content block index -> the answer's tool call number, and whether any argument text arrived for it.
  const toolBlocks = new Map<number, { index: number; sentArguments: boolean }>();
  for await (const message of decodeSse(response.body, options.target.maxEventCharacters)) {
    const event = checkedEvent(message.data, isMessagesStreamEvent);
    switch (event.type) {
      case 'message_start':
        if (event.message?.usage) usage = streamUsageAfter(usage, event.message.usage);
        sawUsage = event.message?.usage !== undefined;
        break;
      case 'content_block_start':
        if (event.content_block?.type === 'tool_use') {
          const index = toolBlocks.size;
          toolBlocks.set(event.index ?? 0, { index, sentArguments: false });
          yield {
            type: 'tool-call-start',
            index,
            id: event.content_block.id ?? newId('call'),
            name: event.content_block.name ?? '',
          };
        }
        break;
      case 'content_block_delta': {
        if (event.delta?.type === 'text_delta' && event.delta.text)
          yield { type: 'text-delta', text: event.delta.text };
        const tool = toolBlocks.get(event.index ?? 0);
        if (event.delta?.type === 'input_json_delta' && event.delta.partial_json && tool) {
          tool.sentArguments = true;
          yield { type: 'tool-call-delta', index: tool.index, arguments: event.delta.partial_json };
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
        if (event.delta?.stop_reason) finish = finishReasonOf(event.delta.stop_reason);
        if (event.usage) usage = streamUsageAfter(usage, event.usage);
        sawUsage ||= event.usage !== undefined;
        break;
      case 'message_stop':
        yield { type: 'finish', finishReason: finish, usage: sawUsage ? usage : undefined };
        return;
      case 'error':
        throw new UpstreamUnreachableError(
          'protocol',
          `the upstream reported an error mid-stream: ${event.error?.message ?? 'unknown'}`,
        );
    }
  }
  throw new UpstreamUnreachableError('protocol', 'the upstream stream ended before it was complete');
}
